"""Prometheus metrics of a worker host (``tacocat worker --metrics-port``).

RQ forks a work horse per job, and ``tacocat worker`` runs several RQ worker processes: a
metric held in one process's memory would be lost with the horse and seen by no exporter.
So the host runs prometheus-client's **multiprocess mode**: ``tacocat worker`` makes a fresh
``PROMETHEUS_MULTIPROC_DIR`` per host (per run), its worker processes inherit it, every
process writes its values to memory-mapped files there, and the supervisor's exporter sums the
files at scrape time (:func:`serve_metrics`).

The files are named per **worker slot**, not per pid (prometheus-client's default): worker
``i`` writes ``*_w{i}.db`` and its horses, one at a time, ``*_h{i}.db`` (a horse reopens the
file from disk after the fork, so each continues the last one's totals). A horse per match
would otherwise leave a file per match behind, and the scrape would slow down for ever. A
horse SIGKILLed mid-match keeps what it observed so far (the pages are the kernel's).

What is observed here is what only a process can see, as histograms:

- ``tacocat_match_duration_seconds{ladder}``: a match job's wall time, from the worker's
  (parent's) side (fork, the games, recording);
- ``tacocat_decision_seconds{transport="sandbox"}``: request to answer of each decision of a
  sandboxed bot (the horse; the server's live referee exports ``transport="live"``);
- ``tacocat_rating_recompute_seconds``: the standings refit after each recorded match.

Counters that must equal the recorded results (games, matches, forfeits, submissions) and the
queue and worker gauges come from Redis, on the server's ``/metrics``
(``tacocat.server.metrics``): exact whatever happens to a worker.

Nothing is patched in. :func:`setup` returns the process's :class:`WorkerMetrics`, which the
worker puts in its :class:`~tacocat.worker.jobs.JobContext`; the jobs pass
:meth:`WorkerMetrics.observe_decision` to the match's bot seats (``on_decision``) and
:meth:`WorkerMetrics.observe_refit` to ``arena.matches.record`` (``on_refit``).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from typing import Final

from prometheus_client import CollectorRegistry, Histogram, start_http_server, values
from prometheus_client.multiprocess import MultiProcessCollector

ENV: Final = "PROMETHEUS_MULTIPROC_DIR"

DECISION_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                           1.0, 2.5, 5.0, 10.0)
MATCH_BUCKETS: Final = (0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0)
RECOMPUTE_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
                            2.5, 5.0)

WORKER_METRICS: Final = {
    "tacocat_match_duration_seconds": "histogram",
    "tacocat_decision_seconds": "histogram",
    "tacocat_rating_recompute_seconds": "histogram",
}
"""Every metric family a worker host exports: name -> type."""


class WorkerMetrics:
    """The worker-side histograms, registered on ``registry``."""

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.match_duration = Histogram(
            "tacocat_match_duration_seconds", "Wall time of a match job, as its worker saw it.",
            ["ladder"], buckets=MATCH_BUCKETS, registry=registry)
        self.decision_seconds = Histogram(
            "tacocat_decision_seconds", "Time from a decision request to the bot's answer.",
            ["transport"], buckets=DECISION_BUCKETS, registry=registry)
        self._sandbox_decisions = self.decision_seconds.labels(transport="sandbox")
        self.rating_recompute = Histogram(
            "tacocat_rating_recompute_seconds", "Time to refit a ladder's standings after a "
            "recorded match.", buckets=RECOMPUTE_BUCKETS, registry=registry)

    def observe_match(self, match_id: str, seconds: float) -> None:
        self.match_duration.labels(ladder=match_id.split(".", 1)[0]).observe(seconds)

    def observe_decision(self, seconds: float) -> None:
        """One sandboxed decision: ``seconds`` from the request to the answer or the failure
        (the ``on_decision`` hook of a match's :class:`~tacocat.sdk.ProcessSeat` s)."""
        self._sandbox_decisions.observe(seconds)

    def observe_refit(self, seconds: float) -> None:
        """One standings refit after a recorded match (``arena.matches.record``'s
        ``on_refit`` hook)."""
        self.rating_recompute.observe(seconds)


_METRICS: WorkerMetrics | None = None


def current() -> WorkerMetrics | None:
    """This process's :class:`WorkerMetrics` (None: metrics are off)."""
    return _METRICS


def setup(index: int) -> WorkerMetrics | None:
    """In RQ worker process ``index``: when ``PROMETHEUS_MULTIPROC_DIR`` is set, switch
    prometheus-client to per-slot multiprocess files and create the metrics, which the
    caller hands to the jobs (``JobContext.metrics``). Returns None (and does nothing)
    without the variable."""
    global _METRICS  # one per process
    if not os.environ.get(ENV):
        return None
    if _METRICS is not None:
        return _METRICS
    worker = os.getpid()

    def slot() -> str:  # the horse (a fork of this process) writes its own files
        return f"w{index}" if os.getpid() == worker else f"h{index}"

    values.ValueClass = values.MultiProcessValue(  # type: ignore[no-untyped-call]
        process_identifier=slot)
    _METRICS = WorkerMetrics(None)
    return _METRICS


@contextlib.contextmanager
def serve_metrics(port: int, host: str = "127.0.0.1") -> Iterator[int]:
    """Export this host's worker metrics on ``http://host:port/metrics`` (port 0: a free one,
    yielded) for as long as the block runs: makes a fresh multiprocess directory, sets
    ``PROMETHEUS_MULTIPROC_DIR`` for the worker processes started inside the block, and
    removes the directory at the end."""
    directory = tempfile.mkdtemp(prefix="tacocat-metrics-")
    previous = os.environ.get(ENV)
    os.environ[ENV] = directory
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=directory)  # type: ignore[no-untyped-call]
    server, thread = start_http_server(port, addr=host, registry=registry)
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
        if previous is None:
            os.environ.pop(ENV, None)
        else:
            os.environ[ENV] = previous
        shutil.rmtree(directory, ignore_errors=True)
