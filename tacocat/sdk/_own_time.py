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


def own_time() -> float:
    """Seconds on a clock that stops while this thread waits for a CPU held by others."""
    now = time.monotonic()
    return now - _run_delay()


def _run_delay() -> float:
    thread = threading.get_native_id()
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
