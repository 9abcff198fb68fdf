"""Refereeing one game, and the order a match's games are dealt in.

A :class:`Table` wraps a :class:`GameState` with what a referee adds to the rules: it asks
the right seats, turns an illegal answer or a fault (timeout, crash, disconnect, garbage)
into a recorded forfeit, and produces the replay record. It does no I/O: the one match
loop (:mod:`tacocat.referee`) drives it for local play, the workers and the live referee.

:func:`duplicate_pairs` is the one schedule of a match's games.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ._errors import IllegalActionError
from ._record import GameRecord
from ._ruleset import Ruleset
from ._state import GameState
from ._types import Fault, Observation, Round


class Table:
    """One game between two named seats."""

    __slots__ = ("players", "state")

    def __init__(self, rules: Ruleset, seed: str, players: Sequence[str],
                 decks: Iterable[Sequence[int]] | None = None) -> None:
        self.state = GameState(rules, seed, decks)
        self.players = (players[0], players[1])

    @property
    def is_over(self) -> bool:
        return self.state.outcome is not None

    def requests(self) -> list[Observation]:
        """The observations of the seats that must decide now (two for simultaneous ones)."""
        state = self.state
        return [state.observation(seat) for seat in state.to_act]

    def answer(self, seat: int, action: Sequence[int]) -> IllegalActionError | None:
        """Apply ``seat``'s answer. An illegal one forfeits the game and is returned."""
        try:
            self.state.apply(seat, action)
        except IllegalActionError as exc:
            self.refuse(seat, exc)
            return exc
        return None

    def refuse(self, seat: int, error: IllegalActionError) -> None:
        """``seat`` answered illegally: it forfeits, with the rules' reason as the detail."""
        if self.state.outcome is None:
            self.state.forfeit(seat, Fault.ILLEGAL_ACTION, error.reason)

    def fault(self, seat: int, fault: Fault, detail: str = "") -> None:
        """``seat`` failed to answer properly: it forfeits the game."""
        self.state.forfeit(seat, fault, detail)

    def public_rounds(self) -> tuple[Round, ...]:
        """Every round so far, without decks (what a seat may see once the game ends)."""
        return self.state.public_rounds

    def record(self) -> GameRecord:
        return GameRecord.of(self.state, self.players)


@dataclass(frozen=True, slots=True)
class MatchGame:
    """One game of a match, from bot A's point of view."""

    index: int
    record: GameRecord
    a_seat: int

    @property
    def a_score(self) -> float:
        """1 for an A win, 0.5 for a draw or an aborted game, 0 for a loss."""
        winner = self.record.result.winner
        return 0.5 if winner is None else float(winner == self.a_seat)


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of a match before it is played: its place, its deal and who sits where."""

    index: int
    """The game's number in the match, from 0."""
    seed: str
    """The deal: both games of a duplicate pair share it."""
    a_seat: int
    """The seat bot A takes (B takes the other)."""

    def players(self, a: str, b: str) -> tuple[str, str]:
        """The two names in seat order."""
        return (a, b) if self.a_seat == 0 else (b, a)


def duplicate_pairs(games: int, seed: str | int) -> tuple[ScheduledGame, ...]:
    """The match schedule: ``games`` games in duplicate pairs.

    Game ``2k`` puts A in seat 0 and game ``2k + 1`` puts A in seat 1, both dealt from
    ``"{seed}/{k}"``, so the luck of the deal cancels out within a pair. Local play, the
    workers, the live referee and the arena's matches all use this one schedule.
    """
    if games < 0:
        raise ValueError(f"a match has 0 or more games, not {games}")
    return tuple(ScheduledGame(index, f"{seed}/{index // 2}", index % 2)
                 for index in range(games))
