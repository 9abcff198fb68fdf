"""The arena's RQ workers: play matches between submitted bots in sandboxed processes.

- :mod:`~.errors`: the exception tree (:class:`WorkerError` at its root);
- :mod:`~.jobs`: the RQ jobs, ``play_match(match_id)`` and ``smoke_test(version_id)``;
- :mod:`~.match`: :class:`MatchPlayer`, one match between two long-lived bot processes;
- :mod:`~.launch`: :class:`Launcher`, how bot processes start (sandbox, limits, core);
- :mod:`~.sandbox`: the sandbox sub-package (bubblewrap, seccomp, rlimits, cgroup v1 or v2
  bounds) and what this host gives it (``tacocat worker --check``), one public face over
  private modules;
- :mod:`~.queue`: job ids, idempotent enqueuing, leases, the worker counters;
- :mod:`~.dispatcher`: scheduling and orphan re-enqueue, one active per Redis;
- :mod:`~.rqworker`, :mod:`~.pool`: the worker processes and ``tacocat worker``'s tree;
- ``_folders``: each match's folder of bot sources, and sweeping those of killed horses
  (:func:`match_folders_of`, every :data:`IDLE_SWEEP_EVERY` seconds).

docs/WORKER.md tells how a match job flows and what was measured.
"""

from ._folders import IDLE_SWEEP_EVERY, match_folders_of
from .dispatcher import Dispatcher
from .errors import SandboxUnavailableError, WorkerError
from .jobs import JobContext, MatchReport, SmokeReport, configure, run_match, run_smoke_test
from .launch import BotSpec, Launcher
from .match import MatchError, MatchPlayer, MatchRun
from .pool import WorkerPool
from .queue import MatchQueue, match_job_id, smoke_job_id, worker_stats
from .settings import WorkerSettings

__all__ = [
    "IDLE_SWEEP_EVERY", "BotSpec", "Dispatcher", "JobContext", "Launcher", "MatchError",
    "MatchPlayer", "MatchQueue", "MatchReport", "MatchRun", "SandboxUnavailableError",
    "SmokeReport", "WorkerError", "WorkerPool", "WorkerSettings", "configure",
    "match_folders_of", "match_job_id", "run_match", "run_smoke_test", "smoke_job_id",
    "worker_stats",
]
