"""The replay record of RULES.md §8: written for every game, read back, and re-checked."""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from ._errors import EngineError, RecordError
from ._ruleset import BOTH, Ruleset
from ._state import GameState
from ._types import Fault, Outcome, Reason, Round, Trick

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
            fault = raw.get("fault")
            result = Outcome(raw["winner"], Reason(raw["reason"]), raw.get("detail", ""),
                             Fault(fault) if fault else None, raw.get("offender"))
            rounds = tuple(_round_from_json(r) for r in data["rounds"])
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
    # A forfeit can cut a round short before a seat replaced; an empty list then means "not
    # yet" rather than "kept every card".
    went_on = bool(recorded.duels or recorded.tricks or recorded.complete)
    if arrow == BOTH and any(recorded.replace):
        went_on = True  # two arrows: replacements are revealed only once both seats chose
    for seat in order:
        if went_on or recorded.replace[seat]:
            apply(seat, recorded.replace[seat])
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
    if recorded.complete and len(state.rounds) <= index:
        raise RecordError("the round needs more decisions than the record holds")


def _round_json(r: Round) -> dict[str, Any]:
    return {
        "space": r.space,
        "deck": list(r.deck) if r.deck is not None else None,
        "replace": [list(r.replace[0]), list(r.replace[1])],
        "duels": [list(d) for d in r.duels],
        "tricks": [{"attacker": t.attacker, "attack": list(t.attack),
                    "response": list(t.response)} for t in r.tricks],
        "showdown": list(r.showdown) if r.showdown is not None else None,
        "winner": r.winner,
    }


def _ints(values: Any) -> tuple[int, ...]:
    out = tuple(values)
    for v in out:
        if type(v) is not int:
            raise RecordError(f"{v!r} is not a card rank")
    return out


def _round_from_json(data: Mapping[str, Any]) -> Round:
    showdown = data.get("showdown")
    duels = tuple((int(d[0]), int(d[1])) for d in data["duels"])
    tricks = tuple(Trick(int(t["attacker"]), _ints(t["attack"]), _ints(t["response"]))
                   for t in data["tricks"])
    deck = data.get("deck")
    return Round(
        int(data["space"]), _ints(deck) if deck is not None else None,
        (_ints(data["replace"][0]), _ints(data["replace"][1])), duels, tricks,
        (int(showdown[0]), int(showdown[1])) if showdown is not None else None,
        data.get("winner"),
    )


def write_jsonl(path: str | Path | IO[str], records: Iterable[GameRecord]) -> int:
    """Write records as JSON Lines; returns how many were written."""
    if isinstance(path, str | Path):
        with open(path, "w", encoding="utf-8") as handle:
            return write_jsonl(handle, records)
    count = 0
    for record in records:
        path.write(record.dumps() + "\n")
        count += 1
    return count


def read_jsonl(path: str | Path) -> Iterator[GameRecord]:
    """Read JSON Lines records (gzipped when the name ends in ``.gz``, as the arena stores
    them); a bad line raises :class:`RecordError` naming its number."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield GameRecord.loads(line)
                except RecordError as exc:
                    raise RecordError(f"{path}:{number}: {exc}") from exc
