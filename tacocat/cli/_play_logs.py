"""``tacocat play --logs DIR``: what each bot printed during each game, and its tracebacks.

Every call into a bot runs with its ``sys.stdout`` and ``sys.stderr`` going to that game's
log, ``DIR/game-NNNNN-A.log`` (or ``-B``), created on the first write and cut at
:data:`~tacocat.protocol.logs.LOG_CAP` bytes with the arena's notice
(:class:`~tacocat.protocol.logs.LogCap`: the arena keeps as much of a bot's stderr per match
for its owner). An exception the bot raises is written there with its whole traceback before
it forfeits the game (the summary shows one line). Bots are made in schedule order, one per
game (:class:`~tacocat.referee.InProcessSeat`), which numbers the files (from 1).
"""

from __future__ import annotations

import contextlib
import io
import traceback
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from tacocat.engine import Bot, Observation, Outcome, Round, Ruleset
from tacocat.protocol.logs import LOG_CAP, LogCap


class GameLog(io.TextIOBase):
    """A bot's output in one game: appended to ``path``, cut as the arena cuts a log."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._cap = LogCap(LOG_CAP)

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        data = self._cap.take(text.encode(errors="replace"))
        if data:
            with self.path.open("ab") as handle:
                handle.write(data)
        return len(text)


class LoggedBot(Bot):
    """``bot`` with everything it prints, and its tracebacks, going to ``log``."""

    def __init__(self, bot: Bot, log: GameLog) -> None:
        self.bot = bot
        self.log = log

    def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        with contextlib.redirect_stdout(self.log), contextlib.redirect_stderr(self.log):
            try:
                return method(*args)
            except Exception:
                traceback.print_exc(file=self.log)
                raise

    def on_game_start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        self._call(self.bot.on_game_start, seat, ruleset, opponent)

    def replace(self, obs: Observation) -> Sequence[int]:
        result: Sequence[int] = self._call(self.bot.replace, obs)
        return result

    def duel(self, obs: Observation) -> int:
        result: int = self._call(self.bot.duel, obs)
        return result

    def attack(self, obs: Observation) -> Sequence[int]:
        result: Sequence[int] = self._call(self.bot.attack, obs)
        return result

    def defend(self, obs: Observation) -> Sequence[int]:
        result: Sequence[int] = self._call(self.bot.defend, obs)
        return result

    def on_round_end(self, round: Round) -> None:
        self._call(self.bot.on_round_end, round)

    def on_game_end(self, outcome: Outcome, seat: int) -> None:
        self._call(self.bot.on_game_end, outcome, seat)


def logged(factory: Callable[[], Bot], directory: Path, side: str,
           indexes: Iterator[int]) -> Callable[[], Bot]:
    """``factory`` whose bots log to ``directory``; the n-th bot made plays game
    ``indexes``' n-th (the schedule's order: the seat makes them in that order)."""

    def make() -> Bot:
        # Named by the game's number from 1, as the summary, pages and replays number it.
        log = GameLog(directory / f"game-{next(indexes) + 1:05d}-{side}.log")
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            try:
                bot = factory()
            except Exception:
                traceback.print_exc(file=log)
                raise
        return LoggedBot(bot, log)

    return make
