"""Property tests of the engine over random seeds, random legal players and random rulesets.

Games are driven straight through :class:`GameState` (or a :class:`Table`, for forfeits) by a
player that picks uniformly among ``state.legal_actions(seat)``, or by the house bots. At every
decision the driver checks the invariants below; every finished game's record is then
re-checked by ``GameRecord.replay()`` and by the independent checker.

Properties:

- cards are conserved: both hands + the undrawn pile + the pending attack + this round's
  discards == the ruleset's deck (private attributes are read for this);
- the public discards are exactly the revealed replacements, duel cards and trick cards;
- both hands hold the same number of cards at every duel/attack/defend decision and at the
  showdown (counted from the record);
- ``legal_actions`` has no duplicates and agrees with ``is_legal``/``check``/``apply`` on random
  candidate actions; an illegal action raises and leaves the state untouched; a seat that is
  not asked has no legal action;
- every house-bot action is legal, every recorded action is legal (replay + checker);
- a game ends within ``max_rounds`` rounds with at most 7 decisive rounds, tiles and score agree
  with the round winners, a goal needs every space between the start and that goal covered;
- non-interference: a seat's observation (and its legal actions) are identical in a second game
  that differs only in what that seat cannot know: the opponent's hidden cards, the order of the
  undrawn pile, and the opponent's still-secret answer to a simultaneous decision;
- replaying a record reproduces the game; JSON round trip is the identity;
- determinism: same seed + same bots = same record; duplicate pairs share their decks.

Set ``TACOCAT_PROPERTY_SCALE`` (default 1) to multiply the number of examples for a longer hunt.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tacocat.engine import (
    BOTH,
    STANDARD,
    Bot,
    BotDriver,
    Decision,
    Fault,
    GameRecord,
    GameState,
    IllegalActionError,
    Reason,
    Round,
    Ruleset,
    ScheduledGame,
    Table,
    TieRule,
    duplicate_pairs,
)
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.referee import play_in_process
from tests.independent_checker import check_record

# TACOCAT_PROPERTY_SCALE=20 runs twenty times as many examples (a longer bug hunt).
SCALE = float(os.environ.get("TACOCAT_PROPERTY_SCALE", "1"))


def examples(n: int) -> int:
    return max(1, round(n * SCALE))


BASE = settings(deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
SEEDS = st.integers(0, 2**32).map(str)
RNG_SEEDS = st.integers(0, 2**32)
ILLEGAL_CODES = {"not_your_turn", "not_in_hand", "over_cap", "wrong_count", "empties_hand",
                 "bad_attack", "bad_sacrifice", "game_over"}


# --------------------------------------------------------------------------------- rulesets


@st.composite
def standard_tweaks(draw: st.DrawFn) -> Ruleset:
    """The standard ruleset with a few fields changed: tie rule, round limit, hand sizes."""
    data = STANDARD.to_dict()
    data["name"] = "variant"
    data["tie_rule"] = draw(st.sampled_from(["no_move", "arrow"]))
    data["max_rounds"] = draw(st.sampled_from([1, 2, 3, 5, 50]))
    if draw(st.booleans()):
        data["hand_sizes"] = draw(st.lists(st.integers(1, 4), min_size=7, max_size=7))
    return Ruleset.from_dict(data)


@st.composite
def random_rulesets(draw: st.DrawFn) -> Ruleset:
    """Any valid ruleset with ranks 1..12 and hands of at most 9 cards."""
    counts = draw(st.lists(st.integers(1, 4), min_size=12, max_size=12))
    hand_max = min(9, sum(counts) // 4)
    start = draw(st.integers(0, 6))
    arrows: list[Any] = draw(st.lists(st.sampled_from([0, 1, BOTH]), min_size=7, max_size=7))
    arrows[start] = BOTH
    return Ruleset.from_dict({
        "name": "random-variant",
        "deck": {str(rank): n for rank, n in enumerate(counts, 1)},
        "hand_sizes": draw(st.lists(st.integers(1, hand_max), min_size=7, max_size=7)),
        "arrows": arrows,
        "start_space": start,
        "tie_rule": draw(st.sampled_from(["no_move", "arrow"])),
        "max_rounds": draw(st.integers(1, 12)),
    })


VARIANTS = st.one_of(standard_tweaks(), random_rulesets())
ANY_RULES = st.one_of(st.just(STANDARD), VARIANTS)


# --------------------------------------------------------------------------------- players


class Uniform:
    """Picks uniformly among the legal actions."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def start(self, seat: int, rules: Ruleset, opponent: str) -> None:
        pass

    def choose(self, state: GameState, seat: int, legal: list[tuple[int, ...]]) -> tuple[int, ...]:
        return self.rng.choice(legal)


class House:
    """A :class:`Bot` behind its :class:`BotDriver`, fed the seat's observation."""

    def __init__(self, bot: Bot) -> None:
        self.driver = BotDriver(bot)

    def start(self, seat: int, rules: Ruleset, opponent: str) -> None:
        self.driver.start(seat, rules, opponent)

    def choose(self, state: GameState, seat: int, legal: list[tuple[int, ...]]) -> tuple[int, ...]:
        return self.driver.decide(state.observation(seat))


PLAYER_KINDS = ("uniform", "random", "greedy")


def make_player(kind: str, rng: random.Random) -> Uniform | House:
    if kind == "uniform":
        return Uniform(random.Random(rng.getrandbits(32)))
    if kind == "random":
        return House(RandomBot(rng.getrandbits(32)))
    return House(GreedyBot())


# --------------------------------------------------------------------------------- invariants


def canon(decision: Decision, action: Sequence[int], attack: Sequence[int]) -> Any:
    """An action's identity: order does not matter except which card answers which."""
    if decision is Decision.DEFEND:
        return tuple(sorted(zip(attack, action, strict=True)))
    return tuple(sorted(action))


def public_cards(state: GameState) -> list[int]:
    """The cards this round's public record says were laid face up."""
    cards: list[int] = []
    for chosen in state._replace:
        cards += chosen or ()
    for c0, c1 in state._duels:
        cards += (c0, c1)
    for trick in state._tricks:
        cards += trick.attack + trick.response
    return cards


def check_invariants(state: GameState) -> None:
    rules = state.rules
    hands = state._hands
    pile = state._pile[state._pile_pos:]
    everything = hands[0] + hands[1] + list(pile) + list(state._discards) + list(state._attack)
    assert sorted(everything) == list(rules.cards), "cards are not conserved"
    assert sorted(state._discards) == sorted(public_cards(state))
    assert sorted(state._deck) == list(rules.cards)
    for seat in (0, 1):
        assert hands[seat] == sorted(hands[seat])
        assert state.hand(seat) == tuple(hands[seat])
    rounds = state.rounds
    assert len(rounds) <= rules.max_rounds
    decisive = [r.winner for r in rounds if r.winner is not None]
    assert len(decisive) <= 7
    assert state.score == (decisive.count(0), decisive.count(1))
    assert sum(state.covered) == len(decisive)
    if state.is_over:
        assert state.to_act == () and state.decision is None
        return
    assert 0 <= state.position < 7 and not state.covered[state.position]
    assert state.round_index == len(rounds)
    decision = state.decision
    n0, n1 = len(hands[0]), len(hands[1])
    if decision is Decision.REPLACE:
        assert n0 == n1 == rules.hand_sizes[state.position]
    elif decision in (Decision.DUEL, Decision.ATTACK):
        assert n0 == n1 > 1
        assert not state.attack
    else:
        defender = state.to_act[0]
        assert len(hands[1 - defender]) + len(state.attack) == len(hands[defender]) > 1
        assert state.attacker == 1 - defender
    for seat in (0, 1):
        obs = state.observation(seat)
        assert obs.seat == seat and obs.hand == state.hand(seat)
        assert obs.opponent_cards == len(hands[1 - seat])
        assert obs.pile_size == len(pile)
        assert obs.discards == state._discards
        assert obs.decision is (decision if seat in state.to_act else None)
        assert all(r.deck is None for r in obs.history)
        assert len(obs.history) == len(rounds)
        if obs.decision is Decision.REPLACE:
            assert obs.replace_cap == state.replace_cap(seat) <= len(obs.hand)


def snapshot(state: GameState) -> Any:
    return (state.observation(0), state.observation(1), state.hand(0), state.hand(1),
            state.decision, state.to_act, tuple(state._pending), state._pile_pos,
            state._discards, state._attack, state.outcome, len(state.rounds))


def probe(state: GameState, seat: int, legal: list[tuple[int, ...]], rng: random.Random) -> None:
    """Random candidate actions: ``is_legal``/``apply`` must agree with ``legal_actions``."""
    decision = state.decision
    assert decision is not None
    attack = state.attack
    legal_set = {canon(decision, a, attack) for a in legal}
    assert len(legal_set) == len(legal), "legal_actions lists an action twice"
    other = 1 - seat
    if other not in state.to_act:
        assert state.legal_actions(other) == []
        assert not state.is_legal(other, legal[0])
    hand = list(state.hand(seat))
    for _ in range(2):
        if decision is Decision.DEFEND:
            size = len(attack) + (rng.choice((-1, 1)) if rng.random() < 0.1 else 0)
        elif decision is Decision.DUEL:
            size = 1 if rng.random() < 0.8 else rng.choice((0, 2))
        else:
            size = rng.randint(0, len(hand))
        size = max(0, min(size, len(hand)))
        candidate = rng.sample(hand, size)
        if candidate and rng.random() < 0.1:
            candidate[0] = rng.choice((0, 13, max(hand) + 1))
        in_hand = not Counter(candidate) - Counter(hand)
        expected = (in_hand and len(candidate) == len(attack) if decision is Decision.DEFEND
                    else in_hand)
        expected = expected and canon(decision, candidate, attack) in legal_set
        assert state.is_legal(seat, candidate) is expected, (decision, hand, attack, candidate)
        if not expected:
            before = snapshot(state)
            try:
                state.apply(seat, candidate)
            except IllegalActionError as exc:
                assert exc.code in ILLEGAL_CODES
                assert exc.seat == seat
            else:
                raise AssertionError(f"illegal {candidate} was applied")
            assert snapshot(state) == before, "an illegal action changed the state"


def other_world(state: GameState, log: list[tuple[int, tuple[int, ...]]], seat: int,
                rng: random.Random) -> GameState:
    """The same game, except for what ``seat`` cannot know about the current round.

    The opponent's hidden cards are redrawn from the cards ``seat`` has not seen (respecting
    what the opponent's sacrifices revealed: every hidden card is at least as high as any card
    it sacrificed this round), the undrawn pile is reshuffled, and a still-secret answer of the
    opponent to a simultaneous decision is replaced by another legal one.
    """
    rules = state.rules
    opp = 1 - seat
    h = rules.hand_sizes[state.position]
    deck = list(state._deck)
    arrow = rules.arrows[state.position]
    first = 0 if arrow == BOTH else int(arrow)
    revealed = [chosen is not None for chosen in state._replace]
    discarded = [list(chosen or ()) for chosen in state._replace]
    # Pile slots drawn by each seat (only after its replacement was revealed).
    drawn: dict[int, tuple[int, int]] = {}
    pos = 2 * h
    for s in (first, 1 - first):
        if revealed[s]:
            drawn[s] = (pos, pos + len(discarded[s]))
            pos += len(discarded[s])
    undrawn_start = pos
    seen = Counter(deck[seat:2 * h:2])
    if seat in drawn:
        seen += Counter(deck[drawn[seat][0]:drawn[seat][1]])
    played: list[int] = [d[opp] for d in state._duels]  # the opponent's public plays
    floor = 0
    for trick in state._tricks:
        if trick.attacker == opp:
            played += trick.attack
        else:
            played += trick.response
            sacrificed = [r for r, a in zip(trick.response, trick.attack, strict=True) if r < a]
            floor = max([floor, *sacrificed])
    if state.decision is Decision.DEFEND and state.to_act == (seat,):
        played += state.attack
    hidden = Counter(rules.cards) - seen - Counter(discarded[opp]) - Counter(played)
    hidden_hand = len(state._hands[opp])
    assert hidden.total() == hidden_hand + len(deck) - undrawn_start
    eligible = [c for c in hidden.elements() if c >= floor]
    rng.shuffle(eligible)
    new_hand = eligible[:hidden_hand]
    pile = list((hidden - Counter(new_hand)).elements())
    rng.shuffle(pile)
    new_deck = list(deck)
    if revealed[opp]:
        kept = played + new_hand
        rng.shuffle(kept)
        cut = h - len(discarded[opp])
        dealt = discarded[opp] + kept[:cut]
        lo, hi = drawn[opp]
        new_deck[lo:hi] = kept[cut:]
    else:
        assert not played and hidden_hand == h
        dealt = new_hand
    rng.shuffle(dealt)
    new_deck[opp:2 * h:2] = dealt
    new_deck[undrawn_start:] = pile
    assert sorted(new_deck) == list(rules.cards)
    decks = [r.deck for r in state.rounds if r.deck is not None] + [tuple(new_deck)]
    world = GameState(rules, state.seed, decks=decks)
    secret = state._pending[opp] is not None
    for s, action in (log[:-1] if secret else log):
        world.apply(s, action)
    if secret:
        assert log[-1][0] == opp
        world.apply(opp, rng.choice(world.legal_actions(opp)))
    return world


# --------------------------------------------------------------------------------- driving


def drive(rules: Ruleset, seed: str, players: Sequence[Uniform | House], rng: random.Random,
          *, hidden_checks: bool = False, probes: bool = True,
          interrupt_at: int | None = None, interrupt: str = "") -> tuple[Table, dict[str, int]]:
    """Play one game through a :class:`Table`, checking invariants at every decision."""
    table = Table(rules, seed, ("p0", "p1"))
    state = table.state
    for seat in (0, 1):
        players[seat].start(seat, rules, f"p{1 - seat}")
    log: list[tuple[int, tuple[int, ...]]] = []
    stats = Counter[str]()
    step = 0
    while not state.is_over:
        check_invariants(state)
        if hidden_checks:
            for seat in (0, 1):
                world = other_world(state, log, seat, rng)
                assert world.observation(seat) == state.observation(seat)
                assert world.legal_actions(seat) == state.legal_actions(seat)
                stats["hidden_checks"] += 1
                stats["opponent_hand_differs"] += world.hand(1 - seat) != state.hand(1 - seat)
        seat = rng.choice(state.to_act)  # either order for simultaneous decisions
        legal = state.legal_actions(seat)
        assert legal, "a seat is asked but has no legal action"
        if probes:
            probe(state, seat, legal, rng)
        if step == interrupt_at:
            interrupt_game(table, seat, interrupt, legal, rng)
            break
        decision = state.decision
        assert decision is not None
        action = players[seat].choose(state, seat, legal)
        assert canon(decision, action, state.attack) in {
            canon(decision, a, state.attack) for a in legal}, "a player chose an illegal action"
        state.apply(seat, action)
        log.append((seat, tuple(action)))
        stats[decision.value] += 1
        step += 1
    check_invariants(state)
    return table, stats


def interrupt_game(table: Table, seat: int, how: str, legal: list[tuple[int, ...]],
                   rng: random.Random) -> None:
    state = table.state
    if how == "abort":
        state.abort("operator")
        assert state.outcome is not None and state.outcome.reason is Reason.ABORTED
        assert state.outcome.winner is None
        return
    if how == "illegal":
        hand = state.hand(seat)
        bad = (*hand, 0) if state.decision is not Decision.REPLACE else (0,)
        error = table.answer(seat, bad)
        assert isinstance(error, IllegalActionError)
        fault = Fault.ILLEGAL_ACTION
    else:
        fault = Fault(how)
        table.fault(seat, fault, "test")
    outcome = state.outcome
    assert outcome is not None and outcome.reason is Reason.FORFEIT
    assert (outcome.winner, outcome.offender, outcome.fault) == (1 - seat, seat, fault)


# --------------------------------------------------------------------------------- records


def check_round_shape(rules: Ruleset, rnd: Round) -> None:
    h = rules.hand_sizes[rnd.space]
    assert rnd.deck is not None and sorted(rnd.deck) == list(rules.cards)
    arrow = rules.arrows[rnd.space]
    if arrow != BOTH:
        first, second = rnd.replace[int(arrow)], rnd.replace[1 - int(arrow)]
        assert second is None or (first is not None and len(second) <= len(first))
    if rnd.cut is None:
        assert rnd.replace[0] is not None and rnd.replace[1] is not None
    left = h
    for _ in rnd.duels:
        assert left > 1
        left -= 1
    for trick in rnd.tricks:
        assert len(trick.response) == len(trick.attack) < left
        left -= len(trick.attack)
    if rnd.complete:
        assert left == 1, "the seats do not hold one card each at the showdown"
        assert rnd.showdown is not None
        c0, c1 = rnd.showdown
        if c0 != c1:
            assert rnd.winner == (0 if c0 < c1 else 1)
        elif rules.tie_rule is TieRule.ARROW and arrow != BOTH:
            assert rnd.winner == int(arrow)
        else:
            assert rnd.winner is None


def check_record_fully(record: GameRecord) -> None:
    rules = record.ruleset
    result = record.result
    assert check_record(record.to_json()) == []
    assert GameRecord.loads(record.dumps()) == record
    assert GameRecord.from_json(record.to_json()) == record
    replayed = record.replay()
    assert tuple(replayed.rounds) == record.rounds
    assert replayed.outcome is not None
    assert (replayed.outcome.winner, replayed.outcome.reason) == (result.winner, result.reason)
    if result.reason in (Reason.GOAL, Reason.ROUND_LIMIT):
        assert GameRecord.of(replayed, record.players) == record
    rounds = record.rounds
    event(f"result: {result.reason.value}")
    if any(r.showdown is not None and r.showdown[0] == r.showdown[1] and r.winner is not None
           for r in rounds):
        event("a tie went to the arrow's seat")
    assert 1 <= len(rounds) <= rules.max_rounds
    for rnd in rounds[:-1]:
        assert rnd.complete
    if result.reason in (Reason.FORFEIT, Reason.ABORTED):
        # The last round stops at the offence, and the result names its phase.
        cut = rounds[-1].cut
        assert cut is not None and cut.phase is result.phase
        assert check_record(record.to_json()) == []
    for rnd in rounds:
        check_round_shape(rules, rnd)
    decisive = [r.winner for r in rounds if r.winner is not None]
    assert len(decisive) <= 7
    if result.reason is Reason.GOAL:
        assert result.winner == decisive[-1] == rounds[-1].winner
        start = rules.start_space
        span = range(start + 1) if result.winner == 0 else range(start, 7)
        assert len(decisive) >= len(span)
        assert all(replayed.covered[i] for i in span)
        assert replayed.position == (-1 if result.winner == 0 else 7)
    elif result.reason is Reason.ROUND_LIMIT:
        assert result.winner is None and len(rounds) == rules.max_rounds
        assert rounds[-1].complete
    else:
        assert not rounds[-1].complete


# --------------------------------------------------------------------------------- tests


@settings(BASE, max_examples=examples(60))
@given(seed=SEEDS, rng_seed=RNG_SEEDS)
def test_standard_uniform_games_with_hidden_information_checks(seed: str, rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    players = [make_player("uniform", rng), make_player("uniform", rng)]
    table, stats = drive(STANDARD, seed, players, rng, hidden_checks=True)
    assert stats["opponent_hand_differs"] > 0, "the non-interference check was vacuous"
    check_record_fully(table.record())


@settings(BASE, max_examples=examples(150))
@given(rules=VARIANTS, seed=SEEDS, rng_seed=RNG_SEEDS, hidden=st.booleans())
def test_variant_uniform_games(rules: Ruleset, seed: str, rng_seed: int, hidden: bool) -> None:
    rng = random.Random(rng_seed)
    players = [make_player("uniform", rng), make_player("uniform", rng)]
    table, _ = drive(rules, seed, players, rng, hidden_checks=hidden)
    record = table.record()
    check_record_fully(record)
    # From the start space, no goal can be reached in fewer rounds than the shorter way home.
    start = rules.start_space
    if rules.max_rounds < min(start + 1, 7 - start):
        assert record.result.reason is Reason.ROUND_LIMIT


@settings(BASE, max_examples=examples(100))
@given(rules=ANY_RULES, seed=SEEDS, rng_seed=RNG_SEEDS,
       kinds=st.tuples(st.sampled_from(PLAYER_KINDS), st.sampled_from(PLAYER_KINDS)))
def test_house_bots_play_legally(rules: Ruleset, seed: str, rng_seed: int,
                                 kinds: tuple[str, str]) -> None:
    rng = random.Random(rng_seed)
    players = [make_player(kinds[0], rng), make_player(kinds[1], rng)]
    table, _ = drive(rules, seed, players, rng, probes=False)
    check_record_fully(table.record())


@settings(BASE, max_examples=examples(100))
@given(rules=ANY_RULES, seed=SEEDS, rng_seed=RNG_SEEDS, at=st.integers(0, 60),
       how=st.sampled_from(["abort", "illegal", *(f.value for f in Fault)]))
def test_interrupted_games_record_and_replay(rules: Ruleset, seed: str, rng_seed: int, at: int,
                                             how: str) -> None:
    rng = random.Random(rng_seed)
    players = [make_player("uniform", rng), make_player("uniform", rng)]
    table, _ = drive(rules, seed, players, rng, probes=False, interrupt_at=at, interrupt=how)
    record = table.record()
    check_record_fully(record)
    state = table.state
    assert state.legal_actions(0) == state.legal_actions(1) == []
    try:
        state.apply(0, ())
    except IllegalActionError as exc:
        assert exc.code == "game_over"
    else:
        raise AssertionError("a finished game accepted an action")


def _one_game(a: Bot, b: Bot, players: tuple[str, str], seed: str, rules: Ruleset) -> GameRecord:
    """One game dealt from ``seed`` exactly, ``a`` in seat 0."""
    return play_in_process(a, b, [ScheduledGame(0, seed, 0)], names=players,
                           rules=rules).games[0].record


def _house_record(rules: Ruleset, seed: str, bot_seed: int) -> GameRecord:
    return _one_game(RandomBot(bot_seed), GreedyBot(), ("house:random", "house:greedy"), seed,
                     rules)


@settings(BASE, max_examples=examples(50))
@given(rules=ANY_RULES, seed=SEEDS, bot_seed=RNG_SEEDS)
def test_same_seed_and_bots_give_the_same_record(rules: Ruleset, seed: str,
                                                 bot_seed: int) -> None:
    first = _house_record(rules, seed, bot_seed)
    assert _house_record(rules, seed, bot_seed) == first
    assert first.dumps() == _house_record(rules, seed, bot_seed).dumps()
    check_record_fully(first)
    # The deal is a function of the seed alone, whoever plays.
    other = _one_game(GreedyBot(), GreedyBot(), ("a", "b"), seed, rules)
    for mine, theirs in zip(first.rounds, other.rounds, strict=False):
        assert mine.deck == theirs.deck
    assert GameState(rules, seed).rounds == [] and GameState(rules, seed)._deck == \
        first.rounds[0].deck


@settings(BASE, max_examples=examples(20))
@given(rules=ANY_RULES, seed=st.one_of(SEEDS, st.integers(0, 10**6)), bot_seed=RNG_SEEDS)
def test_match_games_come_in_duplicate_pairs(rules: Ruleset, seed: str | int,
                                             bot_seed: int) -> None:
    games = play_in_process(RandomBot(bot_seed), GreedyBot(), duplicate_pairs(6, seed),
                            names=("R", "G"), rules=rules).games
    assert [g.index for g in games] == list(range(6))
    assert [g.a_seat for g in games] == [0, 1] * 3
    for pair in range(3):
        a, b = games[2 * pair], games[2 * pair + 1]
        assert a.record.seed == b.record.seed == f"{seed}/{pair}"
        assert a.record.players == ("R", "G") and b.record.players == ("G", "R")
        assert a.record.rounds[0].deck == b.record.rounds[0].deck
        for ra, rb in zip(a.record.rounds, b.record.rounds, strict=False):
            assert ra.deck == rb.deck
        if pair:
            assert a.record.rounds[0].deck != games[0].record.rounds[0].deck
        for game in (a, b):
            check_record_fully(game.record)
            winner = game.record.result.winner
            assert game.a_score == (0.5 if winner is None else float(winner == game.a_seat))
