"""A work horse's progress, seen by its worker: how a stalled horse is found.

The worker's main process renews a running match's lease while its work horse plays; a horse
that stops (SIGSTOP, a hung system call, a deadlock) would keep its match for the job's
whole timeout, lease renewed all along. So the horse beats, and the worker watches:

- :class:`Progress` is a few bytes of memory shared by the worker and every horse it forks
  (an anonymous shared mapping made before the fork): the time of the horse's last beat
  and how long it may go without one;
- the horse beats at every decision its match's seats answer (the jobs' decision hook) and
  sets its limit once it knows its match (:func:`expect`):
  :func:`~tacocat.worker.bounds.stall_seconds`, twice the longest a working step takes
  (a frame's progress deadline, a bot's start) plus a margin;
- the worker, each time it would renew the lease (every third of a lease), asks
  :meth:`Progress.stalled_for`; once the horse is past its limit, the worker marks the job
  stalled (:data:`~tacocat.worker.failures.STALLED_META`), kills the horse (SIGKILL stops a
  stopped process too) and stops renewing the lease. The dispatcher then runs the match
  again, on any worker, and counts the stall (:mod:`tacocat.worker.failures`).

A beat costs a clock read and an 8-byte write (well under a microsecond; a decision costs
tens). ``time.monotonic`` is one clock for every process of the machine.
"""

from __future__ import annotations

import mmap
import time
from typing import Final

_DOUBLE: Final = 8
"""Bytes of each slot: the last beat (``time.monotonic``), then the seconds the horse may go
without one."""


class Progress:
    """The shared beat of one worker's horses (one job at a time)."""

    def __init__(self) -> None:
        memory = mmap.mmap(-1, 2 * _DOUBLE)  # anonymous and shared: seen across fork
        # Two doubles as a typed view: a beat is one item store (~0.1 us against ~0.35 us
        # through struct.pack_into; the horse beats at every decision).
        self._slots = memoryview(memory).cast("d")

    def reset(self, stall_seconds: float) -> None:
        """Before a job's fork: a beat now, and the limit until the horse sets its own."""
        self.expect(stall_seconds)

    def beat(self) -> None:
        self._slots[0] = time.monotonic()

    def expect(self, stall_seconds: float) -> None:
        """The horse's limit from now on (and a beat)."""
        self._slots[1] = stall_seconds
        self._slots[0] = time.monotonic()

    def stalled_for(self) -> float | None:
        """Seconds since the last beat once past the limit; None while the horse is fine."""
        quiet = time.monotonic() - self._slots[0]
        return quiet if quiet > self._slots[1] else None


_current: Progress | None = None


def attach(progress: Progress | None) -> None:
    """In the horse, right after the fork: where :func:`beat` and :func:`expect` write."""
    global _current
    _current = progress


def beat() -> None:
    """The horse made progress (a no-op outside a watched horse)."""
    if _current is not None:
        _current.beat()


def expect(stall_seconds: float) -> None:
    """The horse's match is known: it may go this long between two beats."""
    if _current is not None:
        _current.expect(stall_seconds)
