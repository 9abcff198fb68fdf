"""The RQ side of the arena: job ids, enqueuing, liveness leases and the worker counters.

**Job ids** derive from what the job works on, so a job can be found from a match id alone:
``match-ROUND-DIGEST-LADDER`` for the match ``LADDER.ROUND.DIGEST`` (RQ allows only
``[A-Za-z0-9_-]`` in ids; round and digest hold no ``-``, so the id maps back uniquely) and
``smoke-`` + a digest of the version id for a smoke test.

**Enqueuing is idempotent**: a match whose job is queued or running is not enqueued again,
so the scheduler's re-enqueue of orphans and a job's own scheduling can overlap freely. A
finished, failed or abandoned job of the same id is deleted and replaced.

**Liveness.** RQ keeps a job "started" long after a SIGKILLed worker (until the job timeout
runs out), so "started" alone cannot tell a running match from a dead one. While a match
runs, its worker holds a short **lease** (``{prefix}worker:lease:{match}``), renewed by the
worker's main process every ``lease / 3`` seconds: :meth:`MatchQueue.job_alive` is "queued,
or started with a live lease". A dead worker's match is seen as orphaned within one lease,
and the dispatcher's ``arena.matches.requeue_orphans`` runs it again.

**Counters** (``{prefix}worker:stats``, a hash of totals, safe from any number of processes
and machines): jobs and their wall time as the RQ worker saw it, and inside the match jobs
the time spent in games, starting bots and recording. ``tacocat bench ladder`` reads them;
a metrics exporter can too (``worker_stats``).
"""

from __future__ import annotations

import contextlib
import hashlib
import time
from collections.abc import Callable, Mapping
from typing import Final

from redis import Redis
from rq import Queue
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from tacocat.arena import DEFAULT_PREFIX

MATCH_QUEUE: Final = "tacocat-matches"
SMOKE_QUEUE: Final = "tacocat-smoke"
"""Smoke tests have their own queue, listed first by every worker: a new submission is
activated within seconds even behind a long ladder."""

MATCH_JOB: Final = "tacocat.worker.jobs.play_match"
SMOKE_JOB: Final = "tacocat.worker.jobs.smoke_test"

DEFAULT_JOB_TIMEOUT: Final = 3600
"""Seconds before RQ kills a smoke test's work horse, or a match's whose bound cannot be
read. A match job's own timeout is derived from its time banks
(:class:`~tacocat.worker.bounds.MatchTimeouts`, given as ``match_timeout``)."""
DEFAULT_LEASE: Final = 10.0
RESULT_TTL: Final = 600
FAILURE_TTL: Final = 7 * 24 * 3600

# Plain strings: a str-valued Enum member hashes by its name, so set lookups need .value.
_WAITING: Final = frozenset(s.value for s in (JobStatus.QUEUED, JobStatus.DEFERRED,
                                              JobStatus.SCHEDULED, JobStatus.CREATED))


def match_job_id(match_id: str) -> str:
    """``main.3.5f0c2a9e1b7d4c36`` -> ``match-3-5f0c2a9e1b7d4c36-main``."""
    ladder, round_, digest = match_id.split(".")
    return f"match-{round_}-{digest}-{ladder}"


def match_of_job(job_id: str) -> str | None:
    """The match id of a match job id (None for any other job)."""
    kind, _, rest = job_id.partition("-")
    round_, _, rest = rest.partition("-")
    digest, _, ladder = rest.partition("-")
    if kind != "match" or not (round_ and digest and ladder):
        return None
    return f"{ladder}.{round_}.{digest}"


def smoke_job_id(version_id: str) -> str:
    return "smoke-" + hashlib.sha256(version_id.encode()).hexdigest()[:24]


def lease_key(prefix: str, match_id: str) -> str:
    return f"{prefix}worker:lease:{match_id}"


def stats_key(prefix: str) -> str:
    return f"{prefix}worker:stats"


def worker_stats(redis: Redis, prefix: str = DEFAULT_PREFIX) -> dict[str, float]:
    """The worker counters (totals since the Redis was new): see the module docs."""
    raw: Mapping[bytes, bytes] = redis.hgetall(stats_key(prefix))  # type: ignore[assignment]
    return {k.decode(): float(v) for k, v in raw.items()}


class MatchQueue:
    """Enqueue matches and smoke tests on RQ, and tell whether a match's job still lives.

    ``redis`` is the bytes client RQ and the arena share. The methods fit the arena's
    ``Enqueue``/``JobAlive`` callables: ``arena.matches.tick(q.enqueue_match, job_alive=q.job_alive,
    enqueue_smoke=q.enqueue_smoke)``.
    """

    def __init__(self, redis: Redis, *, prefix: str = DEFAULT_PREFIX,
                 match_queue: str = MATCH_QUEUE, smoke_queue: str = SMOKE_QUEUE,
                 job_timeout: int = DEFAULT_JOB_TIMEOUT,
                 stray_grace: float = DEFAULT_LEASE,
                 match_timeout: Callable[[str], int] | None = None) -> None:
        self.redis = redis
        self.stray_grace = stray_grace
        self._strays: dict[str, float] = {}
        """Jobs seen "queued" in no queue, and since when (monotonic)."""
        self.prefix = prefix
        self.matches = Queue(match_queue, connection=redis)
        self.smoke = Queue(smoke_queue, connection=redis)
        self.job_timeout = job_timeout
        self.match_timeout = match_timeout
        """A match's job timeout by its id (None: ``job_timeout`` for every job)."""

    @property
    def queue_names(self) -> list[str]:
        """The queues a worker listens on, in priority order."""
        return [self.smoke.name, self.matches.name]

    def enqueue_match(self, match_id: str) -> bool:
        """Put the match on the queue unless its job is already queued or running."""
        return self._enqueue(self.matches, MATCH_JOB, match_id, match_job_id(match_id),
                             lease=lease_key(self.prefix, match_id),
                             timeout=self._match_timeout(match_id))

    def requeue_match(self, match_id: str) -> bool:
        """:meth:`enqueue_match` at the front of the queue: for a match whose worker died,
        which has waited its turn once already (behind a round's matches, it would wait
        again: the chaos suite's kills measured it)."""
        return self._enqueue(self.matches, MATCH_JOB, match_id, match_job_id(match_id),
                             lease=lease_key(self.prefix, match_id), at_front=True,
                             timeout=self._match_timeout(match_id))

    def _match_timeout(self, match_id: str) -> int:
        return self.job_timeout if self.match_timeout is None else self.match_timeout(match_id)

    def enqueue_smoke(self, version_id: str) -> bool:
        """Put a version's smoke test on the (priority) smoke queue, once."""
        return self._enqueue(self.smoke, SMOKE_JOB, version_id, smoke_job_id(version_id),
                             lease=None)

    def job_alive(self, match_id: str) -> bool:
        """Whether the match's job is waiting in the queue or running under a live lease."""
        return self._alive(self.matches, match_job_id(match_id),
                           lease_key(self.prefix, match_id))

    def _state(self, job_id: str) -> str | None:
        status = self.redis.hget(Job.key_for(job_id), "status")
        if status is None:
            return None
        return status.decode() if isinstance(status, bytes) else str(status)

    def _alive(self, queue: Queue, job_id: str, lease: str | None) -> bool:
        state = self._state(job_id)
        if state == JobStatus.QUEUED.value and self.redis.lpos(queue.key, job_id) is None:
            # "Queued" in no queue: RQ pops a job id before it marks the job started, so a
            # worker that died or lost Redis in between (a full disk did it in the chaos
            # suite) leaves a job that nothing will ever run. A worker starting it takes
            # a moment (longer over a slow network): dead only if it stays so for
            # ``stray_grace`` seconds.
            first = self._strays.setdefault(job_id, time.monotonic())
            return time.monotonic() - first < self.stray_grace
        self._strays.pop(job_id, None)
        if state is None:
            return False
        if state in _WAITING:
            return True
        if state == JobStatus.STARTED.value:
            # Without a lease (smoke tests) trust RQ; due_smoke_tests retries lost ones.
            return lease is None or bool(self.redis.exists(lease))
        return False

    def _enqueue(self, queue: Queue, func: str, arg: str, job_id: str,
                 lease: str | None, *, at_front: bool = False,
                 timeout: int | None = None) -> bool:
        if self._alive(queue, job_id, lease):
            return False
        with contextlib.suppress(NoSuchJobError):
            Job.fetch(job_id, connection=self.redis).delete()
        queue.enqueue_call(func, args=(arg,), job_id=job_id,
                           timeout=self.job_timeout if timeout is None else timeout,
                           result_ttl=RESULT_TTL, failure_ttl=FAILURE_TTL,
                           description=f"{func.rsplit('.', 1)[-1]}({arg})",
                           at_front=at_front)
        return True
