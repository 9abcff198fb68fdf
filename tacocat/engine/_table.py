"""Refereeing one game: the one match loop that every driver shares.

A :class:`Table` wraps a :class:`GameState` with what a referee adds to the rules: it asks
the right seats, turns an illegal answer or a fault (timeout, crash, disconnect, garbage)
into a recorded forfeit, and produces the replay record. It does no I/O; the local runner
below, the sandboxed-process worker and the gRPC referee drive it, each in a few lines.
"""

from __future__ import annotations

import contextlib
import traceback
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from ._bot import Bot, BotDriver
from ._errors import IllegalActionError
from ._record import GameRecord
from ._ruleset import STANDARD, Ruleset
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
        return tuple(Round(r.space, None, r.replace, r.duels, r.tricks, r.showdown, r.winner)
                     for r in self.state.rounds)

    def record(self) -> GameRecord:
        return GameRecord.of(self.state, self.players)


def play_game(bots: Sequence[BotDriver], players: Sequence[str], seed: str,
              rules: Ruleset = STANDARD) -> GameRecord:
    """Play one game in this process; a bot that raises forfeits with ``crash``."""
    table = Table(rules, seed, players)
    for seat in (0, 1):
        bots[seat].start(seat, rules, players[1 - seat])
    state = table.state
    # Bound methods in locals: this loop runs once per decision, ~75 times a game.
    observe, apply = state.observation, state.apply
    decide = (bots[0].decide, bots[1].decide)
    while state.outcome is None:
        for seat in state.to_act:
            try:
                action = decide[seat](observe(seat))
            except Exception as exc:
                table.fault(seat, Fault.CRASH, _describe(exc))
                break
            try:
                apply(seat, action)
            except IllegalActionError as exc:
                table.refuse(seat, exc)
            if state.outcome is not None:
                break
    record = table.record()
    public = table.public_rounds()  # no decks: a bot learns what it would over the wire
    for seat in (0, 1):
        # A hook failing after the game changes nothing about it.
        with contextlib.suppress(Exception):
            bots[seat].finish(record.result, public)
    return record


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


def play_match(bot_a: Bot, bot_b: Bot, games: int, seed: str | int,
               rules: Ruleset = STANDARD, names: Sequence[str] = ("A", "B")) -> Iterator[MatchGame]:
    """Play ``games`` games in duplicate pairs: each pair shares its shuffles, seats swapped.

    Game ``2k`` puts A in seat 0 and game ``2k + 1`` puts A in seat 1, both with the seed
    ``"{seed}/{k}"``, so luck of the deal cancels out within a pair.
    """
    drivers = (BotDriver(bot_a), BotDriver(bot_b))
    for index in range(games):
        pair_seed = f"{seed}/{index // 2}"
        a_seat = index % 2
        seated = (drivers[0], drivers[1]) if a_seat == 0 else (drivers[1], drivers[0])
        players = (names[0], names[1]) if a_seat == 0 else (names[1], names[0])
        yield MatchGame(index, play_game(seated, players, pair_seed, rules), a_seat)


def _describe(exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" at {frame[0].filename.rsplit('/', 1)[-1]}:{frame[0].lineno}" if frame else ""
    return f"{type(exc).__name__}: {exc}{where}"
