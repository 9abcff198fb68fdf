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

_files: dict[int, int | None] = {}
_last_delay: dict[int, float] = {}
"""Each thread's run delay at its last :func:`own_elapsed`."""


def own_start() -> float:
    """A decision starts: the mark to give :func:`own_elapsed`.

    The run delay is the one read at the end of this thread's last decision (one read of
    ``/proc`` per decision, not two: ~2.5 us each). Since then the thread did its own
    protocol work or slept waiting for a frame, which adds no run delay; what it waited on
    the run queue after its wake-up is taken off this decision, in the bot's favour.
    """
    thread = threading.get_native_id()
    delay = _last_delay.get(thread)
    if delay is None:
        delay = _run_delay(thread)
    return time.monotonic() - delay


def own_elapsed(start: float) -> float:
    """Seconds of this thread's own time since :func:`own_start` gave ``start``: the clock
    stopped while it waited for a CPU another process held."""
    thread = threading.get_native_id()
    delay = _last_delay[thread] = _run_delay(thread)
    return time.monotonic() - delay - start


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
