"""The replay record of RULES.md §8: written for every game, read back, and re-checked."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Final

from ._errors import EngineError, RecordError
from ._ruleset import BOTH, Ruleset
from ._state import GameState
from ._types import Cut, Decision, Fault, Outcome, Reason, Round, Trick

FORMAT: Final = "tacocat-replay/1"

DecisionHook = Callable[[GameState, int, tuple[int, ...] | None], None]
"""Sees each recorded decision before it is applied (see :meth:`GameRecord.replay`)."""


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A whole game: enough for anyone to re-check it without running a bot."""

    ruleset: Ruleset
    seed: str
    players: tuple[str, str]
    rounds: tuple[Round, ...]
    result: Outcome

    @classmethod
    def of(cls, state: GameState, players: Sequence[str]) -> GameRecord:
        """The record of a finished game."""
        if state.outcome is None:
            raise RecordError("the game is not over yet; finish or abort it before recording")
        return cls(state.rules, state.seed, (players[0], players[1]), tuple(state.rounds),
                   state.outcome)

    def to_json(self) -> dict[str, Any]:
        result: dict[str, Any] = {"winner": self.result.winner,
                                  "reason": self.result.reason.value,
                                  "detail": self.result.detail}
        if self.result.fault is not None:
            result["fault"] = self.result.fault.value
            result["offender"] = self.result.offender
        if self.result.phase is not None:
            result["phase"] = self.result.phase.value
        return {
            "format": FORMAT,
            "ruleset": self.ruleset.to_dict(),
            "seed": self.seed,
            "players": list(self.players),
            "rounds": [_round_json(r) for r in self.rounds],
            "result": result,
        }

    def dumps(self) -> str:
        """One line of JSON Lines."""
        return json.dumps(self.to_json(), separators=(",", ":"))

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> GameRecord:
        """Read a record (a parsed JSON object). Raises :class:`RecordError` when malformed."""
        try:
            if data.get("format") != FORMAT:
                raise RecordError(f"format {data.get('format')!r} is not {FORMAT!r}")
            rules = Ruleset.from_dict(data["ruleset"])
            players = data["players"]
            raw = data["result"]
            fault, phase = raw.get("fault"), raw.get("phase")
            result = Outcome(raw["winner"], Reason(raw["reason"]), raw.get("detail", ""),
                             Fault(fault) if fault else None, raw.get("offender"),
                             Decision(phase) if phase else None)
            rounds = tuple(_round_from_json(r, result.phase) for r in data["rounds"])
            return cls(rules, str(data["seed"]), (str(players[0]), str(players[1])),
                       rounds, result)
        except RecordError:
            raise
        except (KeyError, IndexError, TypeError, ValueError, EngineError) as exc:
            raise RecordError(f"malformed replay record: {type(exc).__name__}: {exc}") from exc

    @classmethod
    def loads(cls, line: str) -> GameRecord:
        try:
            data = json.loads(line)
        except ValueError as exc:
            raise RecordError(f"not JSON: {exc}") from exc
        if not isinstance(data, dict):
            raise RecordError(f"a record is a JSON object, got {type(data).__name__}")
        return cls.from_json(data)

    def replay(self, on_decision: DecisionHook | None = None) -> GameState:
        """Re-run the recorded decisions through the engine and check every recorded outcome.

        Returns the final state. Raises :class:`RecordError` naming the first round, trick or
        result where the record and the rules disagree (an illegal action, a wrong showdown,
        a wrong winner, a wrong result). ``on_decision(state, seat, action)`` is called before
        each recorded action is applied, and with ``None`` for a decision the offender of a
        forfeit was asked and never answered (``tacocat replay check`` re-asks a bot there).
        """
        state = GameState(self.ruleset, self.seed, decks=[_deck(r) for r in self.rounds])
        apply = state.apply
        if on_decision is not None:
            hook = on_decision

            def apply(seat: int, action: Sequence[int]) -> None:
                hook(state, seat, tuple(action))
                state.apply(seat, action)

        last = len(self.rounds) - 1
        for index, recorded in enumerate(self.rounds):
            where = f"round {index}"
            try:
                _replay_round(state, apply, recorded, index)
            except EngineError as exc:
                raise RecordError(f"{where}: {exc}") from exc
            if not recorded.complete:
                if index != last or self.result.reason not in (Reason.FORFEIT, Reason.ABORTED):
                    raise RecordError(f"{where} is incomplete but the game did not end there")
                break
            played = state.rounds[index]
            if (played.showdown, played.winner) != (recorded.showdown, recorded.winner):
                raise RecordError(
                    f"{where}: showdown {recorded.showdown} won by {recorded.winner}, but the "
                    f"rules give showdown {played.showdown} won by {played.winner}"
                )
        if self.result.reason is Reason.FORFEIT:
            _check_offence(state, self.result)
            if self.result.offender is not None and self.result.fault is not None:
                if on_decision is not None and self.result.offender in state.to_act:
                    on_decision(state, self.result.offender, None)
                state.forfeit(self.result.offender, self.result.fault)
            elif self.result.winner is not None:
                state.forfeit(1 - self.result.winner, Fault.ILLEGAL_ACTION)
        elif self.result.reason is Reason.ABORTED:
            state.abort()
        if state.outcome is None:
            raise RecordError(f"the record ends after {len(self.rounds)} rounds but the game "
                              "is not over")
        if (state.outcome.winner, state.outcome.reason) != (self.result.winner,
                                                            self.result.reason):
            raise RecordError(
                f"result says {self.result.reason.value} won by {self.result.winner}, but "
                f"the rules give {state.outcome.reason.value} won by {state.outcome.winner}"
            )
        return state


def _deck(r: Round) -> tuple[int, ...]:
    if r.deck is None:
        raise RecordError(f"round at space {r.space} has no deck")
    return r.deck


def _replay_round(state: GameState, apply: Callable[[int, Sequence[int]], None],
                  recorded: Round, index: int) -> None:
    if state.position != recorded.space:
        raise RecordError(f"recorded at space {recorded.space}, but Tacocat is on "
                          f"{state.position}")
    arrow = state.rules.arrows[state.position]
    order = (0, 1) if arrow == BOTH else (int(arrow), 1 - int(arrow))
    for seat in order:
        chosen = recorded.replace[seat]
        if chosen is not None:  # None: a cut round where this seat had not replaced
            apply(seat, chosen)
    for c0, c1 in recorded.duels:
        apply(0, (c0,))
        apply(1, (c1,))
    for i, trick in enumerate(recorded.tricks):
        if state.to_act != (trick.attacker,):
            asked = " and ".join(map(str, state.to_act)) or "nobody"
            what = state.decision.value if state.decision else "nothing"
            raise RecordError(f"trick {i}: seat {trick.attacker} attacks, but the rules "
                              f"ask seat {asked} for {what}")
        apply(trick.attacker, trick.attack)
        apply(1 - trick.attacker, trick.response)
    cut = recorded.cut
    if cut is not None:
        if recorded.complete:
            raise RecordError("a round with a showdown was not cut short")
        for seat in (0, 1):
            taken = cut.taken[seat]
            if taken is not None:
                apply(seat, taken)
        if state.decision is not cut.phase:
            what = state.decision.value if state.decision else "nothing"
            raise RecordError(f"the round stops in {cut.phase.value}, but its decisions lead "
                              f"to {what}")
    if recorded.complete and len(state.rounds) <= index:
        raise RecordError("the round needs more decisions than the record holds")


# A fault committed by answering a request: the offender must have been asked. A bot that
# crashes, disconnects, garbles its bytes or runs out of time forfeits every game it is
# playing, also those in which it was not asked.
_ANSWER_FAULTS: Final = (Fault.ILLEGAL_ACTION,)


def _check_offence(state: GameState, result: Outcome) -> None:
    """The forfeit agrees with where the record stops: the phase, and who was asked."""
    if state.outcome is not None or result.phase is None:
        return  # a game already over is refused below; records of before phases are not
    if state.decision is not result.phase:
        what = state.decision.value if state.decision else "nothing"
        raise RecordError(f"result: forfeit in {result.phase.value}, but the record stops "
                          f"at {what}")
    if result.fault in _ANSWER_FAULTS and result.offender not in state.to_act:
        raise RecordError(
            f"result: seat {result.offender} forfeits for {result.fault.value} in "
            f"{result.phase.value}, but the record stops waiting for seat "
            f"{' and '.join(map(str, state.to_act))}")


def _round_json(r: Round) -> dict[str, Any]:
    out: dict[str, Any] = {
        "space": r.space,
        "deck": list(r.deck) if r.deck is not None else None,
        "replace": [_list_or_none(r.replace[0]), _list_or_none(r.replace[1])],
    }
    cut = r.cut
    phase = cut.phase if cut is not None else None
    if phase is Decision.REPLACE:
        return out  # a phase not reached is absent, never filled with actions nobody took
    duels: list[list[int | None]] = [list(d) for d in r.duels]
    if cut is not None and phase is Decision.DUEL and cut.taken != (None, None):
        duels.append([t[0] if t is not None else None for t in cut.taken])
    out["duels"] = duels
    if phase is Decision.DUEL:
        return out
    tricks: list[dict[str, Any]] = [{"attacker": t.attacker, "attack": list(t.attack),
                                     "response": list(t.response)} for t in r.tricks]
    if cut is not None and phase is Decision.DEFEND:
        attacker = 0 if cut.taken[0] is not None else 1
        tricks.append({"attacker": attacker, "attack": list(cut.taken[attacker] or ()),
                       "response": None})
    out["tricks"] = tricks
    if cut is None:
        out["showdown"] = list(r.showdown) if r.showdown is not None else None
        out["winner"] = r.winner
    return out


def _list_or_none(cards: tuple[int, ...] | None) -> list[int] | None:
    return list(cards) if cards is not None else None


def _ints(values: Any) -> tuple[int, ...]:
    out = tuple(values)
    for v in out:
        if type(v) is not int:
            raise RecordError(f"{v!r} is not a card rank")
    return out


def _round_from_json(data: Mapping[str, Any], phase: Decision | None) -> Round:
    """One round; ``phase`` (the result's) marks a round without a showdown as cut there."""
    showdown = data.get("showdown")
    replace = data["replace"]
    raw_duels = list(data.get("duels", ()))
    raw_tricks = list(data.get("tricks", ()))
    cut: Cut | None = None
    if showdown is None and phase is not None:
        taken: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (None, None)
        if phase is Decision.DUEL and raw_duels and None in raw_duels[-1]:
            last = raw_duels.pop()
            taken = ((int(last[0]),) if last[0] is not None else None,
                     (int(last[1]),) if last[1] is not None else None)
        elif phase is Decision.DEFEND and raw_tricks and raw_tricks[-1].get("response") is None:
            last = raw_tricks.pop()
            attack = _ints(last["attack"])
            taken = (attack, None) if int(last["attacker"]) == 0 else (None, attack)
        cut = Cut(phase, taken)
    duels = tuple((int(d[0]), int(d[1])) for d in raw_duels)
    tricks = tuple(Trick(int(t["attacker"]), _ints(t["attack"]), _ints(t["response"]))
                   for t in raw_tricks)
    deck = data.get("deck")
    return Round(
        int(data["space"]), _ints(deck) if deck is not None else None,
        (_ints_or_none(replace[0]), _ints_or_none(replace[1])), duels, tricks,
        (int(showdown[0]), int(showdown[1])) if showdown is not None else None,
        data.get("winner"), cut,
    )


def _ints_or_none(values: Any) -> tuple[int, ...] | None:
    return _ints(values) if values is not None else None


def write_jsonl(path: str | os.PathLike[str] | IO[str], records: Iterable[GameRecord]) -> int:
    """Write records as JSON Lines; returns how many were written."""
    if isinstance(path, str | os.PathLike):
        with open(path, "w", encoding="utf-8") as handle:
            return write_jsonl(handle, records)
    count = 0
    for record in records:
        path.write(record.dumps() + "\n")
        count += 1
    return count


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[GameRecord]:
    """Read JSON Lines records (gzipped when the name ends in ``.gz``, as the arena stores
    them); a bad line raises :class:`RecordError` naming its number."""
    if str(path).endswith(".gz"):
        # Imported here: only the arena's stored records are gzipped, and a bot's start
        # needs none of it.
        import gzip  # noqa: PLC0415

        handle: IO[str] = gzip.open(path, "rt", encoding="utf-8")  # noqa: SIM115
    else:
        handle = open(path, encoding="utf-8")  # noqa: SIM115 - both closed by the with below
    with handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield GameRecord.loads(line)
                except RecordError as exc:
                    raise RecordError(f"{path}:{number}: {exc}") from exc
