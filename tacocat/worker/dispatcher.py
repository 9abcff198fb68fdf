"""The dispatcher: turns arena state into queued jobs, on exactly one process at a time.

The arena records *that* work is due (a bot joined, a version was submitted or activated, a
result arrived; see :mod:`tacocat.arena.dispatch`); the server may not import RQ, so the
worker side enqueues it. Every ``tacocat worker`` runs a :class:`Dispatcher`, but only the
holder of a Redis lock (``{prefix}worker:dispatcher``, with a TTL renewed every pass) works:
the others wait to take over if the holder dies. The work is idempotent (a match is created
and enqueued once, a live job is never enqueued again), so the lock only saves effort; a
brief overlap after a lost lock does no harm.

One pass: wait up to ``wait`` seconds for a tick request, then ``arena.tick``: schedule the
ladders asked for (all of them after a quiet ``wait``) and hand out due smoke tests; and at
most every ``wait`` seconds, over every ladder, re-enqueue orphaned matches: job gone, or
running without a live lease, for longer than ``grace`` (the arena's default grace, 10 s,
covers the gap between creating a match and enqueuing it; enqueuing here is idempotent, so
the lease length is grace enough and a dead worker's match is re-run sooner). An orphan
whose runs failed the same way ``max_failures`` times is aborted instead
(:mod:`tacocat.worker.failures`).
"""

from __future__ import annotations

import contextlib
import logging
import math
import time
from collections.abc import Callable
from typing import Final

from redis.exceptions import LockError
from redis.lock import Lock

from tacocat.arena import Arena, TickReport
from tacocat.arena.trials import Trials

from .failures import DEFAULT_MAX_FAILURES, abort_reason, count_failure, last_failure
from .queue import DEFAULT_LEASE, MatchQueue

log = logging.getLogger("tacocat.worker")

DEFAULT_WAIT: Final = 5.0
DEFAULT_LOCK_TTL: Final = 20.0
DEFAULT_ORPHAN_TIMEOUT: Final = 6 * 3600.0
"""A match enqueued this long ago without a result is enqueued again even if its job looks
alive. A safety net only: leases find dead jobs within seconds, and enqueuing a match whose
job is queued or running does nothing."""


def lock_key(prefix: str) -> str:
    return f"{prefix}worker:dispatcher"


class Dispatcher:
    """One dispatcher candidate; call :meth:`step` in a loop (each call blocks at most
    ``wait`` seconds, or returns None at once when another process holds the lock)."""

    def __init__(self, arena: Arena, queue: MatchQueue, *, wait: float = DEFAULT_WAIT,
                 lock_ttl: float = DEFAULT_LOCK_TTL, grace: float = DEFAULT_LEASE,
                 orphan_timeout: float | None = DEFAULT_ORPHAN_TIMEOUT,
                 max_failures: int = DEFAULT_MAX_FAILURES,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if lock_ttl <= wait * 2:
            raise ValueError(f"lock_ttl ({lock_ttl}) must exceed twice the wait ({wait}): "
                             "the holder renews it once per pass")
        self.arena = arena
        self.queue = queue
        self.wait = wait
        self.orphan_timeout = orphan_timeout
        self.max_failures = max_failures
        self._aborted: set[str] = set()
        """The orphans this sweep aborted rather than ran again."""
        self.grace = grace
        self.clock = clock
        self._swept = -math.inf
        self.lock = Lock(arena.redis, lock_key(arena.keys.prefix), timeout=lock_ttl,
                         thread_local=False)
        self.active = False

    def step(self) -> TickReport | None:
        """One pass if this process holds (or now takes) the lock; None otherwise."""
        if not self._hold():
            return None
        due = self.arena.wait_for_tick(self.wait)
        report = self.arena.tick(self.queue.enqueue_match, ladders_due=due,
                                 enqueue_smoke=self.queue.enqueue_smoke)
        Trials(self.arena).tick(self.queue.enqueue_match, job_alive=self.queue.job_alive,
                                grace=self.grace)
        if self.clock() - self._swept >= self.wait:
            self._swept = self.clock()
            requeued = {}
            self._aborted.clear()
            for ladder in self.arena.list_ladders():
                found = self.arena.requeue_orphans(
                    ladder.name, self._rerun_or_abort, timeout=self.orphan_timeout,
                    job_alive=self.queue.job_alive, grace=self.grace)
                requeued[ladder.name] = [m for m in found if m not in self._aborted]
            report = TickReport(report.scheduled, requeued, report.smoke_tests)
        _log_report(report)
        return report

    def _rerun_or_abort(self, match_id: str) -> bool:
        """An orphan: count how its last run failed (:mod:`tacocat.worker.failures`), and run
        it again, unless it failed that way ``max_failures`` times: then abort it."""
        failure = last_failure(self.arena.redis, match_id)
        if failure is not None:
            count = count_failure(self.arena.redis, self.arena.keys.prefix, match_id, failure)
            if count >= self.max_failures:
                reason = abort_reason(failure, count)
                if self.arena.abort_match(match_id, reason):
                    self._aborted.add(match_id)
                    log.error("aborted match %s: %s. Its bots' owners see this reason; look "
                              "at the worker logs for what failed", match_id, reason)
                    return False
            log.warning("match %s runs again (%s; %d time%s)", match_id, failure.description,
                        count, "s" * (count != 1))
        return self.queue.requeue_match(match_id)

    def release(self) -> None:
        """Give the lock up (at shutdown), so another dispatcher takes over at once."""
        if self.active:
            self.active = False
            with contextlib.suppress(LockError):
                self.lock.release()

    def _hold(self) -> bool:
        if self.active:
            try:
                self.lock.reacquire()
                return True
            except LockError:
                self.active = False
                log.warning("dispatcher: lost the lock (this process stalled for longer than "
                            "its TTL); another worker dispatches now")
        if self.lock.acquire(blocking=False):
            self.active = True
            log.info("dispatcher: active (scheduling, orphan re-enqueue, smoke tests)")
        return self.active


def _log_report(report: TickReport) -> None:
    for ladder, matches in report.scheduled.items():
        if matches:
            log.info("scheduled %d match%s in %s", len(matches), "es" * (len(matches) != 1),
                     ladder)
    for ladder, ids in report.requeued.items():
        if ids:
            log.warning("re-enqueued %d orphaned match%s in %s: %s", len(ids),
                        "es" * (len(ids) != 1), ladder, ", ".join(ids[:5])
                        + (" ..." if len(ids) > 5 else ""))
    for version in report.smoke_tests:
        log.info("smoke test queued for %s", version)
