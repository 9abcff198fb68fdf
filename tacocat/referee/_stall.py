"""Whether the referee itself was stalled: so that a paused machine is charged to no bot.

A bot is charged only for time it could use. When the process running the match loop is
stopped (``SIGSTOP`` of a worker's tree, a paused VM or container, a machine swapping), the
wall clock runs on for everyone: the bot's deadline passes without the referee reading its
answer, or the host, stopped with it, reports a decision as long as the pause. To tell, a
daemon thread ticks every :data:`TICK` seconds; a tick later than :data:`STALL` beyond that
means this process was not running in between, and the stretch is recorded.
:class:`~tacocat.referee.ProcessSeat` waits that long more before calling a decision late,
and does not hold a host's reported time against a bot while a stall fell in the frame.

A false alarm (the tick thread starved on a loaded machine) only makes the referee more
patient, never stricter.
"""

from __future__ import annotations

import os
import threading
import time
from collections import deque
from typing import Final

TICK: Final = 0.02
"""Seconds between two ticks."""
STALL: Final = 0.25
"""Seconds a tick may be late before the process counts as having been stopped."""


class StallClock:
    """The stalls of this process, from a tick thread started on first use (again in a
    forked child, where the parent's thread does not exist)."""

    def __init__(self) -> None:
        self._stalls: deque[tuple[float, float]] = deque(maxlen=64)
        self._count = 0
        self._last_tick = time.monotonic()
        self._running = False
        self._lock = threading.Lock()
        # A forked child has no tick thread: it starts its own on first use.
        os.register_at_fork(after_in_child=self._forked)

    def watch(self) -> StallWatch:
        """A watch that says whether a stall happens from now on."""
        self._ensure()
        return StallWatch(self, self._count)

    def within(self, start: float, end: float) -> float:
        """Seconds of ``[start, end]`` (``time.monotonic``) this process was stalled."""
        self._ensure()
        with self._lock:
            spans = [*self._stalls, *self._pending(end)]
        return sum(max(0.0, min(b, end) - max(a, start)) for a, b in spans)

    def stalls(self) -> int:
        """How many stalls were seen, the one going on (not yet ticked) included."""
        # No lock: called once a frame, and an int and a float are read atomically.
        late = time.monotonic() - self._last_tick > TICK + STALL
        return self._count + late

    def _pending(self, now: float) -> list[tuple[float, float]]:
        """A stall the tick thread has not recorded yet (it resumes after the caller)."""
        if now - self._last_tick > TICK + STALL:
            return [(self._last_tick + TICK, now)]
        return []

    def _ensure(self) -> None:
        if self._running:
            return
        self._running = True
        self._last_tick = time.monotonic()
        threading.Thread(target=self._run, name="tacocat-stall-clock", daemon=True).start()

    def _forked(self) -> None:
        self._running = False
        self._lock = threading.Lock()

    def _run(self) -> None:
        while True:
            time.sleep(TICK)
            now = time.monotonic()
            with self._lock:
                if now - self._last_tick > TICK + STALL:
                    self._stalls.append((self._last_tick + TICK, now))
                    self._count += 1
                self._last_tick = now


class StallWatch:
    """Whether :class:`StallClock` saw a stall since the watch began."""

    __slots__ = ("_clock", "_start")

    def __init__(self, clock: StallClock, start: int) -> None:
        self._clock = clock
        self._start = start

    def seen(self) -> bool:
        return self._clock.stalls() > self._start


STALLS: Final = StallClock()
"""This process's stall clock."""
