"""A ladder with real results for the web tests: bots submitted, activated and entered
through the :class:`Arena` facade, matches played in-process by the engine (as
``tests/arena/helpers.py`` does) and recorded exactly as a worker records them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import redis as redis_py

from tacocat.arena import Arena, Match, MatchResult, decompress_replays
from tacocat.arena.standings import update_standings
from tacocat.engine.bots._strong import StrongBot
from tests.arena.helpers import HOUSE, BotFactory, Field, make_field

KINDS: dict[str, BotFactory] = {**HOUSE, "strong": StrongBot}

BOTS = (("alice", "greedy", "greedy"), ("bob", "random", "random"),
        ("carol", "passive", "passive"), ("dave", "crashing", "crashing"))


@dataclass
class Ladder:
    base: Field
    name: str
    pending: list[str] = field(default_factory=list)

    @property
    def arena(self) -> Arena:
        return self.base.arena

    def record_next(self) -> Match:
        """Play and record the next scheduled match; returns it as recorded."""
        match = self.arena.matches.get(self.pending.pop(0))
        assert self.arena.matches.record(match.id, self.base.play(match)).recorded
        return self.arena.matches.get(match.id)

    def recorded(self) -> list[Match]:
        return [m for m in self.arena.matches.of_ladder(self.name, count=1000)
                if m.result is not None]


def make_ladder(redis: redis_py.Redis, *, name: str = "main", leave_pending: int = 2,
                bots: tuple[tuple[str, str, str], ...] = BOTS, games_per_pairing: int = 8,
                games_per_match: int = 4) -> Ladder:
    """Create ladder ``name`` with ``bots`` (owner, bot name, house kind), schedule every
    round at once and play all but the last ``leave_pending`` matches."""
    fld = make_field(redis)
    fld.arena.ladders.create(fld.admin, name, games_per_pairing=games_per_pairing,
                             games_per_match=games_per_match)
    for owner, bot, kind in bots:
        fld.add_bot(owner, bot, kind if kind in HOUSE else "greedy")
        fld.factories[f"{owner}/{bot}"] = KINDS[kind]
        fld.arena.ladders.join(fld.users[owner], bot, name)
    fld.arena.matches.schedule(name, fld.enqueue, rounds_ahead=None)
    ladder = Ladder(fld, name, list(fld.queue))
    fld.queue.clear()
    while len(ladder.pending) > leave_pending:
        ladder.record_next()
    return ladder


# -- what the replay viewer must show, from the record alone ------------------------------------


def _minus(hand: list[int], cards: list[int]) -> list[int]:
    left = list(hand)
    for card in cards:
        left.remove(card)
    return left


def expected_steps(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The viewer's steps for a game that ended at a goal, computed from the RULES.md §8
    record alone (the dealing rule, the draw pile, the recorded actions), without the
    engine: the kind of each step with the cards and hands it must show."""
    assert record["result"]["reason"] == "goal", "only for games that ended at a goal"
    rules = record["ruleset"]
    sizes, arrows = rules["hand_sizes"], rules["arrows"]
    rounds = record["rounds"]
    steps: list[dict[str, Any]] = []
    for k, played in enumerate(rounds):
        space, deck = played["space"], played["deck"]
        size = sizes[space]
        hands = [sorted(deck[0:2 * size:2]), sorted(deck[1:2 * size:2])]
        steps.append({"kind": "deal", "hands": [list(h) for h in hands], "position": space})
        arrow = arrows[space]
        order = [0, 1] if arrow == "both" else [arrow, 1 - arrow]
        pile, drawn_so_far = deck[2 * size:], 0
        for seat in order:
            discard = played["replace"][seat]
            drawn = pile[drawn_so_far:drawn_so_far + len(discard)]
            drawn_so_far += len(discard)
            hands[seat] = sorted(_minus(hands[seat], discard) + drawn)
        steps.append({"kind": "replace", "replace": played["replace"],
                      "hands": [list(h) for h in hands]})
        for c0, c1 in played["duels"]:
            hands = [_minus(hands[0], [c0]), _minus(hands[1], [c1])]
            steps.append({"kind": "duel", "duel": [c0, c1], "hands": [list(h) for h in hands]})
        for trick in played["tricks"]:
            seat = trick["attacker"]
            hands[seat] = _minus(hands[seat], trick["attack"])
            hands[1 - seat] = _minus(hands[1 - seat], trick["response"])
            steps.append({"kind": "trick", "attacker": seat, "attack": trick["attack"],
                          "response": trick["response"], "hands": [list(h) for h in hands]})
        assert [h for hand in hands for h in hand] == played["showdown"]
        steps.append({"kind": "showdown", "showdown": played["showdown"],
                      "winner": played["winner"]})
        winner = played["winner"]
        if winner is None:
            position = space
        elif k + 1 < len(rounds):
            position = rounds[k + 1]["space"]
        else:
            position = -1 if winner == 0 else len(sizes)
        steps.append({"kind": "move", "winner": winner, "position": position})
    steps.append({"kind": "result", "game_winner": record["result"]["winner"]})
    return steps


# -- user input that is markup --------------------------------------------------------------------

HOSTILE = "<script>alert(1)</script>"
HOSTILE_FAULT = "<img src=x onerror=alert(2)>"


def inject_hostile_bot(ladder: Ladder) -> str:
    """A version whose bot name is markup, written straight into the ladder's Redis data
    (the arena's name rules refuse it, so this is what a bug or a hostile writer could
    leave): per-version and per-pair counters, live Elo, one results-log entry, then a
    refit so the standings, crosstable and chart all carry it. Returns its version id."""
    arena, name = ladder.arena, ladder.name
    keys, redis = arena.keys, arena.redis
    evil = f"mallory/{HOSTILE}@1"
    other = arena.ladders.leaderboard(name).standings[0].version
    a, b = sorted((evil, other))
    evil_is_a = a == evil
    wins, losses = (1, 3) if evil_is_a else (3, 1)
    redis.hset(keys.stats(name), mapping={
        f"{evil}|matches": 1, f"{evil}|games": 4, f"{evil}|wins": 1, f"{evil}|losses": 3,
        f"{evil}|forfeit:{HOSTILE_FAULT}": 1})
    for counter, value in (("matches", 1), ("games", 4), ("wins", 3), ("losses", 1)):
        redis.hincrby(keys.stats(name), f"{other}|{counter}", value)
    redis.hset(keys.pairs(name), mapping={
        f"{a}|{b}|scheduled": 1, f"{a}|{b}|matches": 1, f"{a}|{b}|games": 4,
        f"{a}|{b}|wins": wins, f"{a}|{b}|losses": losses, f"{a}|{b}|ties": 0})
    redis.hset(keys.elo(name), evil, repr(1450.0))
    seq = redis.hincrby(keys.counters(name), "results", 1)
    redis.xadd(keys.results(name), {
        "seq": seq, "match": f"{name}.9.{HOSTILE}", "a": evil, "b": other,
        "scores": "1 0 0 0", "wins": 1, "ties": 0, "losses": 3, "at": time.time()})
    update_standings(redis, keys, name)
    return evil


def record_with_hostile_players(ladder: Ladder) -> Match:
    """Record the next pending match with replay records whose player names are markup."""
    arena = ladder.arena
    match = arena.matches.get(ladder.pending.pop(0))
    played = ladder.base.play(match)
    records = [replace(r, players=(f"{HOSTILE}#{i}", HOSTILE_FAULT))
               for i, r in enumerate(decompress_replays(played.replays))]
    result = MatchResult.from_records(records, match.a, match.b, played.seconds,
                                      a_seats=[g.a_seat for g in played.games])
    assert arena.matches.record(match.id, result).recorded
    return arena.matches.get(match.id)
