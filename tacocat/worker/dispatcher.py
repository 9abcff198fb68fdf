"""The dispatcher: turns arena state into queued jobs, on exactly one process at a time.

The arena records *that* work is due (a bot joined, a version was submitted or activated, a
result arrived; see :mod:`tacocat.arena.dispatch`); the server may not import RQ, so the
worker side enqueues it. Every ``tacocat worker`` runs a :class:`Dispatcher`, but only the
holder of a Redis lock (``{prefix}worker:dispatcher``, with a TTL renewed every pass) works:
the others wait to take over if the holder dies. The work is idempotent (a match is created
and enqueued once, a live job is never enqueued again), so the lock only saves effort; a
brief overlap after a lost lock does no harm.

One pass: wait for a tick request (up to ``wait`` seconds, less when the lock must be
renewed sooner: a third of its TTL), then ``arena.matches.tick``: schedule the ladders asked for
(all of them after ``wait`` quiet seconds) and hand out due smoke tests; and at most every ``wait``
seconds, over every ladder, re-enqueue orphaned matches: job gone, or running without a live
lease, for longer than ``grace`` (the arena's default grace, 10 s, covers the gap between
creating a match and enqueuing it; enqueuing here is idempotent, so the lease length is
grace enough and a dead worker's match is re-run sooner).

The lock's TTL is the match lease (``tacocat worker`` passes it): a SIGKILLed dispatcher,
which cannot give the lock up, is replaced no later than a dead worker's match is noticed.

Losing the lock is logged with its cause, since the remedies differ: Redis refused or
missed the renewals (a full disk, an outage: fix Redis), this process did not run for
longer than the TTL (an overloaded or suspended host), or another process took the lock. An orphan
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

from tacocat.arena import Arena, TickReport, as_unavailable
from tacocat.arena.dispatch import ALL
from tacocat.arena.dispatch import wait_for_tick as wait_for_requests
from tacocat.arena.trials import Trials

from .failures import DEFAULT_MAX_FAILURES, abort_reason, count_failure, last_failure
from .queue import DEFAULT_LEASE, MatchQueue

log = logging.getLogger("tacocat.worker")

DEFAULT_WAIT: Final = 5.0
DEFAULT_LOCK_TTL: Final = DEFAULT_LEASE
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
        if lock_ttl <= 0 or wait <= 0:
            raise ValueError(f"lock_ttl ({lock_ttl}) and wait ({wait}) must be positive")
        self.arena = arena
        self.queue = queue
        self.wait = wait
        self.lock_ttl = lock_ttl
        self.renew_every = min(wait, lock_ttl / 3)
        """The longest a pass blocks: three renewals per TTL, so one late pass keeps it."""
        self.orphan_timeout = orphan_timeout
        self.max_failures = max_failures
        self._aborted: set[str] = set()
        """The orphans this sweep aborted rather than ran again."""
        self.grace = grace
        self.clock = clock
        self._swept = -math.inf
        self._quiet_since = -math.inf
        self._renewed = -math.inf
        self._refusal: str | None = None
        """Why Redis refused or missed a write since the last renewal (None: it did not)."""
        self.lock = Lock(arena.redis, lock_key(arena.keys.prefix), timeout=lock_ttl,
                         thread_local=False)
        self.active = False

    def step(self) -> TickReport | None:
        """One pass if this process holds (or now takes) the lock; None otherwise."""
        try:
            return self._step()
        except Exception as exc:
            unavailable = as_unavailable(exc)
            if unavailable is not None:
                self._refusal = str(unavailable)
            raise

    def _step(self) -> TickReport | None:
        if not self._hold():
            return None
        asked = wait_for_requests(self.arena.redis, self.arena.keys, self.renew_every)
        due: set[str] | None = asked - {ALL}
        now = self.clock()
        if asked:
            self._quiet_since = now
        # Every ladder when asked, or after ``wait`` quiet seconds (as when a pass blocked
        # the whole ``wait``): a busy arena's requests name the ladders that changed.
        if ALL in asked or (not asked and now - self._quiet_since >= self.wait):
            self._quiet_since = now
            due = None
        report = self.arena.matches.tick(self.queue.enqueue_match, ladders_due=due,
                                         enqueue_smoke=self.queue.enqueue_smoke)
        Trials(self.arena).tick(self.queue.enqueue_match, job_alive=self.queue.job_alive,
                                grace=self.grace)
        if self.clock() - self._swept >= self.wait:
            self._swept = self.clock()
            requeued = {}
            self._aborted.clear()
            for ladder in self.arena.ladders.all():
                found = self.arena.matches.requeue_orphans(
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
                if self.arena.matches.abort(match_id, reason):
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
        lost = ""
        if self.active:
            try:
                self.lock.reacquire()
                self._renewed, self._refusal = self.clock(), None
                return True
            except LockError:
                self.active = False
                lost = self._why_lost()
        if self.lock.acquire(blocking=False):
            self._renewed, self._refusal = self.clock(), None
            self.active = True
            if lost:
                log.warning("dispatcher: %s; took it again (no other dispatcher held it), "
                            "dispatching again", lost)
            else:
                log.info("dispatcher: active (scheduling, orphan re-enqueue, smoke tests)")
        elif lost:
            log.warning("dispatcher: %s; another worker holds it now and dispatches", lost)
        return self.active

    def _why_lost(self) -> str:
        """Why the lock expired or changed hands, with what the operator should do."""
        if self._refusal is not None:
            return (f"lost the lock: its renewal could not be written ({self._refusal}); "
                    "nothing was scheduled or re-enqueued meanwhile")
        silent = self.clock() - self._renewed
        if silent > self.lock_ttl:
            return (f"lost the lock: this process did not run for {silent:.1f} s, longer "
                    f"than the lock's {self.lock_ttl:g} s TTL (the host was overloaded or "
                    "suspended: check its load, memory and swap)")
        return (f"lost the lock {silent:.1f} s after renewing it (TTL {self.lock_ttl:g} s): "
                "another process deleted or took it; check that every worker on this Redis "
                "runs the same tacocat version and that nothing else writes "
                f"{self.lock.name!r}")


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
