"""Playing one match between two bot processes: start each bot once, referee every game.

:class:`MatchPlayer` is the part of a match job that knows nothing of Redis or RQ. Each side
is one long-lived ``python -m tacocat.sdk.host`` process for the whole match (never one per
game: a start costs ~100 ms, a game a few ms), launched through the worker's
:class:`~tacocat.worker.launch.Launcher` (sandbox, limits, CPU), and seated as a
:class:`~tacocat.referee.ProcessSeat`. The games are played by the one match loop,
:func:`tacocat.referee.play_match`, ``batch`` at once in lockstep, under its one fault policy
(:mod:`tacocat.referee`'s table: faults forfeit games, never the job; three costly faults in
a row and a side gives up; so does a side whose time bank for the match runs out).

Each side's stderr is kept (:class:`~tacocat.protocol.logs.CappedLog`) for its owner:
:attr:`MatchRun.logs`.

Only a failure that cannot be the bots' doing raises :class:`MatchError`: both bots failing
their very first start (a broken sandbox or interpreter), so the job fails and is retried
rather than recording a result nobody earned.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from tacocat.engine import GameRecord, MatchGame, Ruleset, ScheduledGame
from tacocat.protocol.logs import CappedLog
from tacocat.referee import (
    BANK_LIMITS_PER_GAME,
    DEFAULT_BATCH,
    DEFAULT_MAX_STRIKES,
    DecisionTimer,
    FaultPolicy,
    HostProcess,
    NoBotStartedError,
    ProcessSeat,
    SideReport,
    play_match,
)

from .errors import WorkerError
from .launch import BotSpec, Launcher
from .sandbox import SandboxedCommand


class MatchError(WorkerError):
    """The match cannot be played for reasons that are not the bots' (retry the job)."""


@dataclass
class Timings:
    """Where a match's wall-clock time went, in seconds (``perf_counter``)."""

    bot_start: float = 0.0
    """Starting bot processes, first starts and restarts (until their Hello)."""
    games: float = 0.0
    """Refereeing games: the only time that is not overhead."""
    bot_stop: float = 0.0
    """Ending the bot processes and cleaning up after them."""
    starts: int = 0


@dataclass
class MatchRun:
    """What playing a match between the two bot processes gave: the games' records and the
    seat A sat in, in schedule order; the timings, each side's report and its capped log.
    (The referee's :class:`~tacocat.referee.PlayedMatch` is the loop's own account.)"""

    records: list[GameRecord]
    a_seats: list[int]
    timings: Timings
    sides: tuple[SideReport, SideReport]
    logs: tuple[bytes, bytes] = (b"", b"")
    """What each side's bot wrote to stderr (A's, B's), capped: its owner's to read."""


class _Side:
    """One side's bot process across the match."""

    def __init__(self, bot: BotSpec, launcher: Launcher, time_limit: float,
                 startup_timeout: float, on_decision: DecisionTimer | None) -> None:
        self.bot = bot
        self.command: SandboxedCommand = launcher.command(bot)
        self.log = CappedLog()
        self.host = HostProcess(bot.name, startup_timeout=startup_timeout, log=self.log,
                                **self.command.host_process_kwargs())
        # Sandboxed bots have a cpuacct cgroup: their background CPU counts against them.
        cpu_usage = self.command.cpu_seconds if self.command.tree else None
        self.seat = ProcessSeat(self.host, time_limit, on_decision=on_decision,
                                cpu_usage=cpu_usage)

    def close(self) -> None:
        # Kill rather than close politely: after the last game a bot has nothing left to do,
        # and letting Python tear down costs ~40 ms per process, 5% of a 200-game match.
        try:
            self.host.kill()
        finally:
            self.command.close()


class MatchPlayer:
    """Two bot processes and the games between them. A context manager: leaving it kills
    both process groups (and the sandbox's cgroups), whatever happened.

    ``on_decision`` (e.g. :meth:`WorkerMetrics.observe_decision
    <tacocat.worker.metrics.WorkerMetrics.observe_decision>`) gets every decision's seconds
    as the bot's host measured them (both seats')."""

    def __init__(self, launcher: Launcher, a: BotSpec, b: BotSpec, rules: Ruleset, *,
                 time_limit: float, max_strikes: int = DEFAULT_MAX_STRIKES,
                 bank_limits_per_game: float = BANK_LIMITS_PER_GAME,
                 batch: int = DEFAULT_BATCH, startup_timeout: float = 10.0,
                 clock: Callable[[], float] = time.perf_counter,
                 on_decision: DecisionTimer | None = None) -> None:
        self.rules = rules
        self.policy = FaultPolicy(max_strikes=max_strikes,
                                  bank_limits_per_game=bank_limits_per_game)
        self.batch = batch
        self.clock = clock
        self.timings = Timings()
        self._sides: list[_Side] = []
        try:
            for bot in (a, b):
                self._sides.append(_Side(bot, launcher, time_limit, startup_timeout,
                                         on_decision))
        except BaseException:
            self.close()
            raise

    def __enter__(self) -> MatchPlayer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        started = self.clock()
        for side in self._sides:
            with contextlib.suppress(Exception):  # one side's cleanup must not skip the other
                side.close()
        self.timings.bot_stop += self.clock() - started

    def play(self, schedule: Sequence[ScheduledGame],
             on_game: Callable[[MatchGame], None] | None = None) -> MatchRun:
        """Play ``schedule``, players named by the sides' names (A's first when A sits in 0);
        ``on_game`` gets each game as soon as it ends (watchers follow the match live)."""
        a, b = self._sides
        started = self.clock()
        try:
            played = play_match((a.seat, b.seat), schedule, names=(a.bot.name, b.bot.name),
                                rules=self.rules, batch=self.batch, policy=self.policy,
                                on_game=on_game)
        except NoBotStartedError as exc:
            raise MatchError(str(exc)) from exc
        finally:
            starts = a.seat.start_seconds + b.seat.start_seconds
            self.timings.bot_start += starts
            self.timings.starts += a.seat.starts + b.seat.starts
            self.timings.games += self.clock() - started - starts
        return MatchRun([g.record for g in played.games], [g.a_seat for g in played.games],
                           self.timings, played.sides, (a.log.data, b.log.data))
