"""``tacocat play --jobs N``: a local match's schedule played on N processes.

The schedule (:func:`~tacocat.engine.duplicate_pairs`) is cut into N contiguous runs of whole
pairs; each process plays its run through the one match loop
(:func:`~tacocat.referee.play_match`, its seats from :mod:`._play_seats`) and the games are
put back in schedule order. A game's record depends only on its deal and the bots' answers,
so the records and the summary are the same for every N (and every ``--batch``), with one
exception: a side that gives up (three strikes in a row, :mod:`tacocat.referee._policy`)
gives up in its own process's run only, since the processes do not wait for each other.

Worker processes are forked (the bot classes are already loaded), live as long as the
:class:`JobPool` and are ended with it, also on Ctrl-C.
"""

from __future__ import annotations

import multiprocessing
import os
import queue
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tacocat.engine import Bot, MatchGame, Ruleset, duplicate_pairs
from tacocat.referee import play_match

from ._play_logs import Printed
from ._play_seats import LocalSeats

if TYPE_CHECKING:
    from tacocat.worker.launch import Launcher


@dataclass(frozen=True)
class MatchPlan:
    """What every process needs to play its part of a match."""

    bots: tuple[Callable[[], Bot], Callable[[], Bot]]
    """What makes each side's bot, for a side played in this process."""
    specs: tuple[str, str]
    """Each side as given (``house:NAME`` or ``path/to/bot.py[:Class]``): what a bot
    process is started with."""
    names: tuple[str, str]
    seed: str
    rules: Ruleset
    batch: int
    time_limit: float | None
    logs: Path | None = None
    """Where each game's bot output goes (``--logs``), if anywhere."""
    keep_records: bool = False
    """Whether the games' replay records are wanted (``--replay``)."""
    launcher: Launcher | None = None
    """The worker's launcher, sandbox and limits (``--sandbox``); ``None``: plain processes."""
    show_output: bool = False
    """Copy what the bots print to stderr as they print it (``--show-output``)."""
    commands: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """Each side's process argv from its manifest (a bot in another language, its folder in
    ``specs``); empty for Python and house bots."""


@dataclass(frozen=True)
class PlayedGame:
    """What the summary and the replay file need of one game: cheap to send between
    processes (a whole record would cost more to rebuild than the game took to play)."""

    index: int
    a_score: float
    forfeit: tuple[int, str, str] | None
    """(0 for A or 1 for B, the fault, its detail) when a side forfeited."""
    record: str
    """The replay record as a JSON line (without the newline); ``""`` unless kept."""

    @classmethod
    def of(cls, game: MatchGame, keep_record: bool) -> PlayedGame:
        result = game.record.result
        forfeit = None
        if result.offender is not None and result.fault is not None:
            forfeit = (0 if result.offender == game.a_seat else 1, result.fault.value,
                       result.detail)
        return cls(game.index, game.a_score, forfeit,
                   game.record.dumps() if keep_record else "")


@dataclass
class PlayedRun:
    """Some games of a match in schedule order, and why a side gave up, if it did."""

    games: list[PlayedGame]
    gave_up: list[tuple[str, str]]
    """(side's name, detail) for each side that gave up, in the order of the runs."""
    printed: tuple[Printed, Printed] = field(default_factory=lambda: (Printed(), Printed()))
    """What each side printed."""

    def add(self, other: PlayedRun) -> None:
        """The games of ``other``, a run after this one in schedule order."""
        self.games.extend(other.games)
        self.gave_up.extend(other.gave_up)
        for mine, theirs in zip(self.printed, other.printed, strict=True):
            mine.add(theirs)


def default_jobs() -> int:
    """All the cores this process may use."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)


def split(start: int, stop: int, parts: int) -> list[tuple[int, int]]:
    """``[start, stop)`` cut into at most ``parts`` contiguous runs of whole pairs (the last
    run takes an odd last game), as even as can be, in order."""
    pairs = (stop - start + 1) // 2
    parts = max(1, min(parts, pairs))
    bounds = [start + 2 * (pairs * k // parts) for k in range(parts)] + [stop]
    return [(a, b) for a, b in zip(bounds, bounds[1:], strict=False) if b > a]


_PLAN: MatchPlan | None = None
_PROGRESS: Any = None


PROGRESS_EVERY: Final = 16
"""Games a worker process plays between two progress reports (a report costs a pickle)."""


def _start_worker(plan: MatchPlan, progress: Any) -> None:
    global _PLAN, _PROGRESS
    _PLAN, _PROGRESS = plan, progress
    # The parent stops the pool (SIGTERM at once when interrupted); a terminal's Ctrl-C
    # reaches the whole process group, and is the parent's to handle.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


def _play_run(total: int, start: int, stop: int) -> PlayedRun:
    """In a worker process: play games ``[start, stop)`` of a ``total``-game match."""
    assert _PLAN is not None
    unreported = [0]

    def report(_: MatchGame) -> None:
        unreported[0] += 1
        if unreported[0] == PROGRESS_EVERY:
            _PROGRESS.put(unreported[0])
            unreported[0] = 0

    played = _play(_PLAN, total, start, stop, report)
    if unreported[0]:
        _PROGRESS.put(unreported[0])
    return played


def _play(plan: MatchPlan, total: int, start: int, stop: int,
          on_game: Callable[[MatchGame], None]) -> PlayedRun:
    schedule = duplicate_pairs(total, plan.seed)[start:stop]
    with LocalSeats(plan) as seats:
        played = play_match(seats.seats, schedule, names=plan.names, rules=plan.rules,
                            batch=plan.batch, on_game=on_game)
        printed = seats.printed()
    return PlayedRun([PlayedGame.of(g, plan.keep_records) for g in played.games],
                     [(s.name, s.gave_up.detail) for s in played.sides if s.gave_up is not None],
                     printed)


class JobPool:
    """``jobs`` processes playing parts of one match; with ``jobs == 1``, this process."""

    def __init__(self, plan: MatchPlan, jobs: int) -> None:
        self.plan = plan
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._progress: Any = None
        if jobs > 1:
            context = multiprocessing.get_context("fork")
            self._progress = context.Queue()
            self._pool = ProcessPoolExecutor(jobs, mp_context=context,
                                             initializer=_start_worker,
                                             initargs=(plan, self._progress))

    def play(self, total: int, start: int, stop: int,
             on_games: Callable[[int], None]) -> PlayedRun:
        """Games ``[start, stop)`` of the ``total``-game match, ``on_games(n)`` told as games
        end; the games come back in schedule order."""
        if self._pool is None:
            return _play(self.plan, total, start, stop, lambda _: on_games(1))
        futures = [self._pool.submit(_play_run, total, a, b)
                   for a, b in split(start, stop, self.jobs)]
        while not all(f.done() for f in futures):
            self._drain(on_games, wait=0.1)
        self._drain(on_games, wait=0.0)
        return _merge(futures)

    def _drain(self, on_games: Callable[[int], None], wait: float) -> None:
        try:
            on_games(self._progress.get(timeout=wait) if wait else self._progress.get_nowait())
            while True:
                on_games(self._progress.get_nowait())
        except queue.Empty:
            pass

    def close(self, *, interrupted: bool = False) -> None:
        """End the worker processes: once idle, or at once when the match is interrupted."""
        if self._pool is None:
            return
        pool, self._pool = self._pool, None
        if not interrupted:
            pool.shutdown(wait=True)
            return
        processes = list(getattr(pool, "_processes", {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:  # a run still playing is not waited for
            process.terminate()
        for process in processes:
            process.join()

    def __enter__(self) -> JobPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        self.close(interrupted=kind is not None)


def _merge(futures: Sequence[Future[PlayedRun]]) -> PlayedRun:
    merged = PlayedRun([], [])
    for future in futures:  # in schedule order
        merged.add(future.result())
    return merged
