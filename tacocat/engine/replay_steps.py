"""A replay record (RULES.md §8) as the steps the replay viewer shows.

The record holds the public actions and each round's shuffled deck, so a finished game can be
shown with both hands open. The steps come from the engine, not from a second copy of the
rules: :meth:`GameRecord.replay` first re-checks the whole record, then a fresh
:class:`GameState` dealt from the recorded decks takes the recorded actions one by one, and
the hands, draws, covered spaces and Tacocat's position are read from it.

Steps of one round: ``deal`` (hands dealt by §3), ``replace`` (discards and draws, §4), one
``duel`` per duel (§5), one ``trick`` per trick (§6), ``showdown`` (§6b) and ``move`` (§6c;
a tie moves nothing). The game ends with a ``result`` step. Every step carries the whole
picture *after* it: both hands, covered spaces, Tacocat's position, the score (rounds won)
and the draw pile's size, so the viewer can jump to any step.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from . import (
    BOTH,
    HIGH_GOAL,
    LOW_GOAL,
    Decision,
    EngineError,
    GameRecord,
    GameState,
    Reason,
    RecordError,
    Round,
)

Step = dict[str, Any]


def seat_name(seat: int) -> str:
    return f"Seat {seat}"


def _cards(cards: Sequence[int]) -> str:
    return " ".join(str(c) for c in cards) if cards else "nothing"


def _minus(hand: Sequence[int], cards: Sequence[int]) -> list[int]:
    """``hand`` without ``cards`` (a multiset difference), sorted."""
    left = Counter(hand)
    left.subtract(cards)
    return sorted(left.elements())


def _where(position: int) -> str:
    if position == LOW_GOAL:
        return "seat 0's goal"
    if position == HIGH_GOAL:
        return "seat 1's goal"
    return f"space {position}"


class _Stepper:
    def __init__(self, record: GameRecord) -> None:
        self.record = record
        self.rules = record.ruleset
        decks = []
        for played in record.rounds:
            if played.deck is None:
                raise RecordError(f"round at space {played.space} has no deck")
            decks.append(played.deck)
        self.state = GameState(self.rules, record.seed, decks=decks)
        self.steps: list[Step] = []
        self.rounds: list[dict[str, Any]] = []
        self.hands: list[list[int]] = [[], []]
        self.covered: list[bool] = list(self.state.covered)
        self.position = self.state.position
        self.score = [0, 0]
        self.pile = 0
        self.round = 0
        self.space = self.position

    def add(self, kind: str, text: str, **extra: Any) -> None:
        self.steps.append({
            "index": len(self.steps), "kind": kind, "round": self.round, "space": self.space,
            "position": self.position, "covered": list(self.covered),
            "hands": [list(self.hands[0]), list(self.hands[1])], "score": list(self.score),
            "pile": self.pile, "text": text, **extra,
        })

    def run(self) -> list[Step]:
        record = self.record
        for index, played in enumerate(record.rounds):
            self.round, self.space = index, played.space
            self.rounds.append({"index": index, "space": played.space,
                                "first_step": len(self.steps), "winner": played.winner,
                                "showdown": list(played.showdown) if played.showdown else None})
            self.play_round(played)
        self.result()
        return self.steps

    def play_round(self, played: Round) -> None:
        state, rules = self.state, self.rules
        size = rules.hand_sizes[played.space]
        self.hands = [list(state.hand(0)), list(state.hand(1))]
        self.covered = list(state.covered)
        self.position = played.space
        self.pile = len(rules.cards) - 2 * size
        self.add("deal", f"Round {self.round + 1}: Tacocat is on space {played.space}, so "
                         f"each seat is dealt {size} cards (seat 0 takes the even cards of "
                         "the shuffled deck, seat 1 the odd ones).", size=size)
        arrow = rules.arrows[played.space]
        order = (0, 1) if arrow == BOTH else (int(arrow), 1 - int(arrow))
        # A forfeit can cut a round short before a seat replaced: its replace is None then.
        chosen = played.replace
        replaced = [seat for seat in order if chosen[seat] is not None]
        if replaced:
            before = [list(h) for h in self.hands]
            for seat in replaced:
                state.apply(seat, chosen[seat] or ())
            drawn: list[list[int]] = [[], []]
            if state.decision is not Decision.REPLACE:  # else a secret choice, never drawn
                for seat in replaced:
                    self.hands[seat] = list(state.hand(seat))
                    drawn[seat] = _minus(self.hands[seat], _minus(before[seat],
                                                                  chosen[seat] or ()))
                self.pile -= sum(len(chosen[s] or ()) for s in replaced)
            if arrow == BOTH:
                how = "Two arrows: both seats replace at once."
            else:
                how = (f"One arrow pointing at seat {order[0]}: it replaces first, then seat "
                       f"{order[1]} may replace at most as many.")
            parts = [f"seat {s} discards {_cards(chosen[s] or ())}"
                     + (f" and draws {_cards(drawn[s])}" if drawn[s] else "")
                     for s in order if s in replaced]
            said = "; ".join(parts)
            self.add("replace", f"{how} {said[:1].upper()}{said[1:]}.",
                     order=list(order), replace=[list(r or ()) for r in chosen],
                     drawn=drawn, played=[list(r or ()) for r in chosen])
        for c0, c1 in played.duels:
            state.apply(0, (c0,))
            state.apply(1, (c1,))
            self.hands = [_minus(self.hands[0], (c0,)), _minus(self.hands[1], (c1,))]
            if c0 == c1:
                text = f"Duel: {c0} against {c1}, equal ranks: both are discarded."
                attacker = None
                if len(self.hands[0]) > 1:
                    text += " They duel again."
            else:
                attacker = 0 if c0 > c1 else 1
                text = (f"Duel: seat 0 shows {c0}, seat 1 shows {c1}; seat {attacker} has the "
                        "higher card and attacks first.")
            self.add("duel", text, duel=[c0, c1], attacker=attacker, played=[[c0], [c1]])
        for number, trick in enumerate(played.tricks):
            seat = trick.attacker
            state.apply(seat, trick.attack)
            state.apply(1 - seat, trick.response)
            self.hands[seat] = _minus(self.hands[seat], trick.attack)
            self.hands[1 - seat] = _minus(self.hands[1 - seat], trick.response)
            defended = trick.defended
            outcome = (f"every card is defended: seat {1 - seat} attacks next" if defended
                       else f"a card is sacrificed: seat {seat} attacks again")
            cards = [list(trick.attack), list(trick.response)]
            self.add("trick", f"Trick {number + 1}: seat {seat} attacks with "
                              f"{_cards(trick.attack)}, seat {1 - seat} answers with "
                              f"{_cards(trick.response)}; {outcome}.",
                     trick={"number": number, "attacker": seat, "attack": list(trick.attack),
                            "response": list(trick.response), "defended": defended},
                     played=cards if seat == 0 else cards[::-1])
        if played.showdown is None:
            return  # cut short by a forfeit or an abort
        c0, c1 = played.showdown
        self.hands = [[], []]
        winner = played.winner
        if winner is None:
            verdict = "equal cards: the round is tied"
        else:
            verdict = f"seat {winner} has the lower card and wins the round"
        self.add("showdown", f"Showdown: seat 0 shows {c0}, seat 1 shows {c1}; {verdict}.",
                 showdown=[c0, c1], winner=winner, played=[[c0], [c1]])
        if winner is None:
            self.add("move", f"Tie: Tacocat stays on space {played.space} and no tile is "
                             "placed.", winner=None, move=None)
            return
        self.score[winner] += 1
        self.covered = list(state.covered)
        self.position = state.position
        self.add("move", f"Seat {winner} moves Tacocat toward its goal: space "
                         f"{played.space} is covered by a tile and Tacocat goes to "
                         f"{_where(self.position)}.",
                 winner=winner, move={"from": played.space, "to": self.position,
                                      "covered": played.space})

    def result(self) -> None:
        outcome = self.record.result
        self.round = len(self.record.rounds) - 1
        if outcome.reason is Reason.GOAL:
            text = f"Game over: Tacocat reached seat {outcome.winner}'s goal; seat " \
                   f"{outcome.winner} wins."
        elif outcome.reason is Reason.ROUND_LIMIT:
            text = f"Game over: drawn after {len(self.record.rounds)} rounds (round limit)."
        elif outcome.reason is Reason.FORFEIT:
            fault = outcome.fault.value if outcome.fault is not None else "forfeit"
            text = (f"Game over: seat {outcome.offender} forfeits ({fault}); seat "
                    f"{outcome.winner} wins."
                    + (f" The referee noted: {outcome.detail}" if outcome.detail else ""))
        else:
            text = "Game over: aborted" + (f" ({outcome.detail})" if outcome.detail else "") \
                   + "; nobody wins."
        self.add("result", text, result=result_json(self.record))


def result_json(record: GameRecord) -> dict[str, Any]:
    outcome = record.result
    data: dict[str, Any] = {"winner": outcome.winner, "reason": outcome.reason.value,
                            "detail": outcome.detail}
    if outcome.fault is not None:
        data["fault"] = outcome.fault.value
        data["offender"] = outcome.offender
    return data


def replay_view(record: GameRecord) -> dict[str, Any]:
    """The viewer's data for one game: the board, the steps, a round index, the record.

    Raises :class:`RecordError` when the record does not replay under its own rules.
    """
    record.replay()
    stepper = _Stepper(record)
    try:
        steps = stepper.run()
    except EngineError as exc:  # replay() passed, so this is a bug here: say so
        raise RecordError(f"cannot step through the record: {exc}") from exc
    rules = record.ruleset
    return {
        "players": list(record.players),
        "seed": record.seed,
        "board": {"hand_sizes": list(rules.hand_sizes),
                  "arrows": [a if a == BOTH else int(a) for a in rules.arrows],
                  "start": rules.start_space},
        "result": result_json(record),
        "rounds": stepper.rounds,
        "steps": steps,
        "record": record.to_json(),
    }
