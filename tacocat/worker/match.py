"""Playing one match between two bot processes: start each bot once, referee every game.

:class:`MatchPlayer` is the part of a match job that knows nothing of Redis or RQ. Each side
is one long-lived ``python -m tacocat.sdk.host`` process for the whole match (never one per
game: a start costs ~100 ms, a game ~5 ms), launched through the worker's
:class:`~tacocat.worker.launch.Launcher` (sandbox, limits, CPU). Games are refereed by the
SDK's :func:`~tacocat.sdk.play_hosted_game` over :class:`~tacocat.sdk.ProcessSeat` s, the
same loop every referee shares.

Faults never fail the match, they forfeit games:

- a timeout, a crash, protocol garbage or a failed start forfeits that game with the fault
  and its detail; the process is then killed (a stuck or garbled process cannot be trusted
  with the next game) and started afresh for the next game;
- after ``max_restarts`` restarts, the next failure makes the side **give up**: every
  remaining game is recorded as its forfeit, with the last fault, without starting it again
  (a sleeping bot would otherwise cost a decision limit per game, a crashing one a start);
- an illegal action forfeits the game only: the process answered, so it keeps playing;
- a game in which both sides are out is aborted (kept, not rated).

Only a failure that cannot be the bots' doing raises :class:`MatchError`: both bots failing
their very first start (a broken sandbox or interpreter), so the job fails and is retried
rather than recording a result nobody earned.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final

from tacocat.engine import Fault, GameRecord, Ruleset, Table
from tacocat.sdk import Failure, HostError, HostProcess, ProcessSeat, play_hosted_game

from .launch import BotSpec, Launcher
from .sandbox import SandboxedCommand

DEFAULT_MAX_RESTARTS: Final = 3


class MatchError(RuntimeError):
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
class SideReport:
    """What happened to one side's process over the match."""

    name: str
    starts: int = 0
    failures: list[Failure] = field(default_factory=list)
    gave_up: Failure | None = None
    """Set once the side forfeits everything left (the fault recorded for those games)."""


@dataclass
class PlayedMatch:
    records: list[GameRecord]
    a_seats: list[int]
    timings: Timings
    sides: tuple[SideReport, SideReport]


class _Side:
    """One side's bot process across the match, with its restart budget."""

    def __init__(self, bot: BotSpec, launcher: Launcher, time_limit: float,
                 startup_timeout: float, on_decision: Callable[[float], None] | None) -> None:
        self.bot = bot
        self.report = SideReport(bot.name)
        self.command: SandboxedCommand = launcher.command(bot)
        self.host = HostProcess(bot.name, startup_timeout=startup_timeout,
                                **self.command.host_process_kwargs())
        self.seat = ProcessSeat(self.host, time_limit, on_decision=on_decision)
        self.start_failure: Failure | None = None

    @property
    def out(self) -> Failure | None:
        """Why this side cannot play the next game, if it cannot."""
        return self.start_failure or self.report.gave_up

    def ensure_running(self) -> None:
        self.start_failure = None
        if self.report.gave_up is not None or self.host.running:
            return
        self.report.starts += 1
        try:
            self.host.start()
        except HostError as exc:
            self.start_failure = Failure(Fault.CRASH, str(exc))

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
    <tacocat.worker.metrics.WorkerMetrics.observe_decision>`) gets the seconds from each
    request to either bot to its answer, failures included (both seats' ``on_decision``)."""

    def __init__(self, launcher: Launcher, a: BotSpec, b: BotSpec, rules: Ruleset, *,
                 time_limit: float, max_restarts: int = DEFAULT_MAX_RESTARTS,
                 startup_timeout: float = 10.0,
                 clock: Callable[[], float] = time.perf_counter,
                 on_decision: Callable[[float], None] | None = None) -> None:
        if max_restarts < 0:
            raise ValueError(f"max_restarts must be >= 0, got {max_restarts}")
        self.rules = rules
        self.max_restarts = max_restarts
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

    def play(self, games: int, seed: Callable[[int], str], a_seat: Callable[[int], int],
             after_game: Callable[[int, GameRecord], None] | None = None) -> PlayedMatch:
        """Play ``games`` games: game ``i`` dealt from ``seed(i)`` with A in seat
        ``a_seat(i)``, players named by the sides' names (A's first when A sits in 0)."""
        a, b = self._sides
        records: list[GameRecord] = []
        seats: list[int] = []
        for index in range(games):
            self._start(first=index == 0)
            a_in = a_seat(index)
            seated = (a, b) if a_in == 0 else (b, a)
            records.append(self._game(seated, seed(index), index, games))
            seats.append(a_in)
            if after_game is not None:
                after_game(index, records[-1])
        return PlayedMatch(records, seats, self.timings, (a.report, b.report))

    # -- internals -----------------------------------------------------------------------------

    def _start(self, *, first: bool) -> None:
        started = self.clock()
        for side in self._sides:
            before = side.report.starts
            side.ensure_running()
            self.timings.starts += side.report.starts - before
        self.timings.bot_start += self.clock() - started
        if first and all(s.start_failure is not None for s in self._sides):
            raise MatchError("neither bot process started, which points at the worker, "
                             "not the bots: " + "; ".join(
                                 f"{s.bot.name}: {s.start_failure.detail}"
                                 for s in self._sides if s.start_failure is not None))
        for side in self._sides:
            if side.start_failure is not None:
                self._failed(side, side.start_failure)

    def _game(self, seated: Sequence[_Side], seed: str, index: int, games: int) -> GameRecord:
        players = (seated[0].bot.name, seated[1].bot.name)
        out = [(seat, side.out) for seat, side in enumerate(seated) if side.out is not None]
        if out:
            table = Table(self.rules, seed, players)
            if len(out) == 2:
                table.state.abort("neither bot could play: " + "; ".join(
                    f"{side.bot.name}: {failure.fault.value}: {failure.detail}"
                    for side, (_, failure) in zip(seated, out, strict=True)
                    if failure is not None))
            else:
                seat, failure = out[0]
                assert failure is not None
                table.fault(seat, failure.fault, failure.detail)
            return table.record()
        started = self.clock()
        record = play_hosted_game([side.seat for side in seated], players, seed, self.rules,
                                  game=index, games=games)
        self.timings.games += self.clock() - started
        for side in seated:
            failed = side.seat.failure
            if failed is not None and failed.fault is not Fault.ILLEGAL_ACTION:
                stopped = self.clock()
                side.host.kill()  # stuck or garbled: the next game gets a fresh process
                self.timings.bot_stop += self.clock() - stopped
                self._failed(side, failed)
        return record

    def _failed(self, side: _Side, failure: Failure) -> None:
        report = side.report
        report.failures.append(failure)
        if len(report.failures) > self.max_restarts and report.gave_up is None:
            count = len(report.failures)
            report.gave_up = Failure(failure.fault, (
                f"gave up after {count} failure{'s' * (count != 1)} (restart limit "
                f"{self.max_restarts}); last: {failure.fault.value}: {failure.detail}"))

