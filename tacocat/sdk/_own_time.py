"""A decision's own time: the wall clock less the time the bot waited for a CPU that
another process held.

On the arena both bots of a match (and the referee) share one core, and both bots think at
once; on a laptop, anything may run beside a bot. The wall clock would charge a bot for the
opponent's work: an opponent spinning (itself, its threads, its children) could make an
honest bot's decisions late. The kernel counts, per thread, the time it was ready to run but
waiting on a run queue (``/proc/thread-self/schedstat``, second field: ``run_delay``);
taking that out leaves what the bot did itself: computing, or waiting by its own choice
(sleeping, blocking). Where the kernel does not say (no ``/proc``, no schedstats), this is
the wall clock.

The referee does not take this on trust for anything but the bot's own games: a bot that
reports less than it used is charged its process tree's CPU beyond what it reported
(:class:`~tacocat.referee.ProcessSeat`, ``cpu_usage``).
"""

from __future__ import annotations

import os
import threading
import time
from typing import Final

FAST: Final = 0.001
"""A decision shorter than this on the wall clock is reported as is: it cannot have waited
long for a CPU, and the referee allows a millisecond per decision anyway."""
FRESH: Final = 0.05
"""Seconds a run-delay reading serves as the start of this thread's next decisions."""

_files: dict[int, int | None] = {}
_last: dict[int, tuple[float, float]] = {}
"""Each thread's last run-delay reading, and when it was read (``time.monotonic``)."""


def own_start() -> float:
    """A decision starts: the mark to give :func:`own_elapsed`.

    Reading the run delay costs a ``/proc`` read (~2.5 us), so a reading at most
    :data:`FRESH` old is used instead: what the thread waited on the run queue since then
    (its wake-up for this frame, earlier fast decisions) is taken off this decision too, in
    the bot's favour and by little.
    """
    thread = threading.get_native_id()
    now = time.monotonic()
    delay, read_at = _last.get(thread, (0.0, -FRESH))
    if now - read_at >= FRESH:
        delay = _run_delay(thread)
        _last[thread] = (delay, now)
    return now - delay


def own_elapsed(start: float) -> float:
    """Seconds of this thread's own time since :func:`own_start` gave ``start``: the clock
    stopped while it waited for a CPU another process held."""
    thread = threading.get_native_id()
    now = time.monotonic()
    delay = _last[thread][0]
    if now - delay - start < FAST:
        return now - delay - start
    delay = _run_delay(thread)
    _last[thread] = (delay, now)
    return now - delay - start


def _run_delay(thread: int) -> float:
    fd = _files.get(thread, -1)
    if fd == -1:
        fd = _open(thread)
    if fd is None:
        return 0.0
    try:
        return int(os.pread(fd, 80, 0).split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        _files[thread] = None
        return 0.0


def _open(thread: int) -> int | None:
    fd: int | None
    try:
        fd = os.open(f"/proc/self/task/{thread}/schedstat", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        fd = None
    _files[thread] = fd
    return fd
