"""Where finished games go: the replay record of every game (RULES.md §8), to any sink.

A sink is any callable taking a :class:`FinishedGame`; it may be a coroutine function (the
arena's Redis writer will be). A sink that raises is logged and the referee plays on.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from tacocat.engine import GameRecord


@dataclass(frozen=True, slots=True)
class FinishedGame:
    """One game the referee finished, with where it belongs."""

    match_id: str
    game: int
    """Index of the game in its match, from 0."""
    games: int
    """Games the match was asked for."""
    live_seats: tuple[bool, bool]
    """Which seats were live clients (the others were house bots)."""
    record: GameRecord


RecordSink = Callable[[FinishedGame], Awaitable[None] | None]


class RecordLog:
    """The last ``limit`` finished games, in memory: the referee's own, always on."""

    def __init__(self, limit: int = 10_000) -> None:
        self._games: deque[FinishedGame] = deque(maxlen=limit)
        self._lock = threading.Lock()  # read from other threads (tests, an admin endpoint)
        self.total = 0
        """Games finished since the start (not capped)."""

    def __call__(self, game: FinishedGame) -> None:
        with self._lock:
            self._games.append(game)
            self.total += 1

    def games(self, match_id: str | None = None) -> list[FinishedGame]:
        with self._lock:
            return [g for g in self._games if match_id is None or g.match_id == match_id]

    def records(self, match_id: str | None = None) -> list[GameRecord]:
        return [g.record for g in self.games(match_id)]


class JsonlRecordFile:
    """Appends every record to a JSON Lines file, one line per game, flushed at once."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: TextIO = open(self.path, "a", encoding="utf-8")  # noqa: SIM115

    def __call__(self, game: FinishedGame) -> None:
        self._file.write(game.record.dumps() + "\n")
        self._file.flush()

    def close(self) -> None:
        self._file.close()
