"""One RQ worker process: ``python -m tacocat.worker --url URL --index N --settings JSON``.

:class:`ArenaWorker` is RQ's forking :class:`rq.Worker` with three additions:

- it holds a **lease** on the match it runs, renewed from this (parent) process while the
  work horse plays (:mod:`tacocat.worker.queue` explains why RQ's own state is not enough);
- the **work horse gets PR_SET_PDEATHSIG**: RQ puts the horse in its own process group and
  lets it run on if the worker dies; ours dies with its worker, and its bots die with it;
- it adds each job's wall time, as RQ's main loop sees it (fork, bookkeeping, the job, the
  result), to the worker counters: the denominator of the queue-overhead share;
- it **watches its work horse's progress** (:mod:`tacocat.worker.progress`): a match's horse
  that goes without progress past its match's limit (SIGSTOPped, hung) is killed and its
  lease no longer renewed, so its match runs again at once rather than after the job timeout.

Why the forking worker rather than ``SimpleWorker``: a match job runs for seconds, a fork
costs about a millisecond (measured: docs/WORKER.md), and in exchange a job that hangs or
leaks is killed by RQ's timeout without losing the worker, and the lease keeps being renewed
by a process that is not busy refereeing.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import logging
import os
import signal
import socket
import sys
import time
from typing import Any, Final

from redis import Redis
from redis.exceptions import RedisError
from rq import Queue, Worker
from rq.executions import Execution
from rq.job import Job

from tacocat.arena import as_unavailable

from ._folders import remove_folders_of, sweep_if_due, sweep_match_folders
from .bounds import stall_seconds
from .failures import STALLED_META
from .jobs import JobContext, configure
from .launch import Launcher, pin_to, set_parent_death_signal, worker_cpu
from .metrics import current as current_metrics
from .metrics import setup as setup_metrics
from .progress import Progress
from .progress import attach as attach_progress
from .queue import MATCH_JOB, lease_key, match_of_job, stats_key
from .settings import WorkerSettings

log = logging.getLogger("tacocat.worker")

_REDIS_WAIT: Final = (1.0, 10.0)
"""Seconds between checks while Redis is away or refuses writes: first, and at most."""
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


class ArenaWorker(Worker):
    """RQ's forking worker, with match leases, work horses that die with it, and counters."""

    def __init__(self, *args: Any, settings: WorkerSettings, **kwargs: Any) -> None:
        kwargs.setdefault("job_monitoring_interval", settings.monitor_interval)
        super().__init__(*args, **kwargs)
        self.settings = settings
        self._lease: str | None = None
        self._horse = 0
        self._progress = Progress()

    def execute_job(self, job: Job, queue: Queue) -> None:
        sweep_if_due()  # match folders of horses killed since (they hold bots' sources)
        match = match_of_job(job.id) if job.func_name == MATCH_JOB else None
        self._lease = lease_key(self.settings.prefix, match) if match else None
        # Until the horse knows its match's limits: unpacking and a first start.
        self._progress.reset(stall_seconds(1.0, batch=1,
                                           startup_timeout=self.settings.startup_timeout,
                                           margin=self.settings.stall_margin))
        self._renew()
        started = time.perf_counter()
        try:
            super().execute_job(job, queue)
        finally:
            if self._horse:
                # The horse has ended and been reaped: a killed one left both bots' sources.
                remove_folders_of(self._horse)
                self._horse = 0
            seconds = time.perf_counter() - started
            if match is not None and (metrics := current_metrics()) is not None:
                metrics.observe_match(match, seconds)
            pipe = self.connection.pipeline(transaction=False)
            key = stats_key(self.settings.prefix)
            pipe.hincrby(key, "jobs", 1)
            pipe.hincrbyfloat(key, "job_seconds", seconds)
            if self._lease is not None:
                pipe.hincrby(key, "match_jobs", 1)
                pipe.hincrbyfloat(key, "match_job_seconds", seconds)
                pipe.eval(_RELEASE, 1, self._lease, self.name)
            pipe.execute()
            self._lease = None

    def register_birth(self, *args: Any, **kwargs: Any) -> None:
        super().register_birth(*args, **kwargs)  # type: ignore[no-untyped-call, unused-ignore]
        # Beside RQ's own fields, and gone with them: whether this worker can sandbox
        # submitted bots (the server's /metrics and /healthz read it).
        self.connection.hset(self.key, "tacocat_sandbox",
                             self.settings.sandbox_problem or
                             ("ready" if self.settings.sandbox else "insecure"))

    def fork_work_horse(self, job: Job, queue: Queue) -> None:
        super().fork_work_horse(job, queue)
        self._horse = self.horse_pid  # RQ forgets it as the horse ends

    def maintain_heartbeats(self, job: Job, execution: Execution) -> None:
        stalled = self._progress.stalled_for() if self._lease is not None else None
        if stalled is not None:
            self._stop_stalled(job, stalled)
            return
        super().maintain_heartbeats(job, execution)
        self._renew()

    def _stop_stalled(self, job: Job, stalled: float) -> None:
        """Kill a horse that made no progress for ``stalled`` seconds. RQ sees it die at once
        and fails its job; then :meth:`execute_job` releases the lease (in that order, so the
        dispatcher finds a failed job marked stalled, not a lost one) and the match runs
        again."""
        log.error("the work horse of %s made no progress for %.0f s (stopped or hung): "
                  "killing it so that its match runs again; if this repeats, look at the "
                  "machine (a paused container, a hung disk)", job.id, stalled)
        with contextlib.suppress(RedisError):  # the kill matters more than the note
            job.meta[STALLED_META] = round(stalled, 1)
            job.save_meta()  # type: ignore[no-untyped-call]
        self.kill_horse(signal.SIGKILL)

    def main_work_horse(self, job: Job, queue: Queue) -> None:
        # In the horse, right after the fork: die with the worker (and so take the bots).
        set_parent_death_signal()
        attach_progress(self._progress)
        super().main_work_horse(job, queue)

    def _renew(self) -> None:
        if self._lease is not None:
            self.connection.set(self._lease, self.name,
                                px=int(self.settings.lease * 1000))


def worker_name(index: int) -> str:
    """Unique among live workers (RQ requires it) and readable in RQ's dashboards."""
    return f"{socket.gethostname().split('.')[0]}-{os.getpid()}-w{index}"


def make_worker(url: str, settings: WorkerSettings, index: int) -> ArenaWorker:
    """An :class:`ArenaWorker` for this process, with its job context configured: the
    launcher pins bots to this worker's core (unless ``settings.pinning`` is ``none``)."""
    cpu = worker_cpu(index) if settings.pinning != "none" else None
    if settings.pinning == "all":
        pin_to(cpu)
    name = worker_name(index)
    metrics = setup_metrics(index)  # with PROMETHEUS_MULTIPROC_DIR (--metrics-port)
    configure(JobContext(settings, Launcher(settings.sandbox_policy(), sandbox=settings.sandbox,
                                            cpu=cpu), name, metrics))
    redis = Redis.from_url(url)
    return ArenaWorker([settings.smoke_queue, settings.match_queue], connection=redis,
                       name=name, settings=settings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tacocat.worker",
                                     description="One arena RQ worker process (started by "
                                                 "`tacocat worker`).")
    parser.add_argument("--url", required=True, help="the Redis URL")
    parser.add_argument("--index", type=int, default=0, help="worker number (picks its core)")
    parser.add_argument("--settings", default="{}", help="WorkerSettings as JSON")
    parser.add_argument("--log-level", default="INFO")
    parser.add_argument("--orphan", action="store_true",
                        help="do not die with the parent process (default: die with it)")
    args = parser.parse_args(argv)
    if not args.orphan:
        set_parent_death_signal()
    settings = WorkerSettings.from_json(args.settings)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format=f"%(asctime)s w{args.index} %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    logging.getLogger("rq").setLevel(logging.WARNING)
    sweep_match_folders()
    # What is imported by now lives as long as the worker, and every work horse forks from
    # it: out of the cyclic collector's sight, a horse's full collections walk only what its
    # match made, and leave the pages it shares with this process unwritten.
    gc.collect()
    gc.freeze()
    return work_until_stopped(args.url, settings, args.index)


def work_until_stopped(url: str, settings: WorkerSettings, index: int) -> int:
    """Run an RQ worker until it is told to stop; outlive Redis being away or refusing
    writes (a full disk): RQ quits on either, and a restart by the supervisor would only
    fail again, in a loop. Instead wait, saying why, and start a fresh RQ worker once Redis
    answers writes again. Any other error still ends the process (the supervisor restarts
    it)."""
    wait = _REDIS_WAIT[0]
    while True:
        worker = make_worker(url, settings, index)
        log.debug("worker %s listening on %s", worker.name, ", ".join(worker.queue_names()))
        try:
            worker.work(logging_level="WARNING")
            return 0
        except RedisError as exc:
            unavailable = as_unavailable(exc)
            if unavailable is None or worker._stop_requested:
                raise
        # RQ's signal handlers only set a flag that nothing reads now: while waiting,
        # SIGTERM/SIGINT stop the process at once (there is no match to finish).
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        log.error("%s; waiting %.0f s before working again (not restarting)", unavailable, wait)
        while not _writable(worker.connection, settings.prefix):
            time.sleep(wait)
            wait = min(wait * 2, _REDIS_WAIT[1])
        # The old worker could not say it died: its registration would refuse the new one
        # of the same name.
        with contextlib.suppress(RedisError):
            worker.register_death()  # type: ignore[no-untyped-call]
        log.warning("Redis takes writes again; back to work")
        wait = _REDIS_WAIT[0]


def _writable(redis: Redis, prefix: str) -> bool:
    """Whether Redis answers and takes a write now."""
    try:
        redis.set(f"{prefix}worker:probe:{os.getpid()}", b"1", px=1000)
    except RedisError:
        return False
    return True
