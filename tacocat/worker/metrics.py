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
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from functools import wraps
from typing import Any, Final

from prometheus_client import CollectorRegistry, Histogram, start_http_server, values
from prometheus_client.multiprocess import MultiProcessCollector

from tacocat.arena import standings
from tacocat.sdk import ProcessSeat

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
        self.rating_recompute = Histogram(
            "tacocat_rating_recompute_seconds", "Time to refit a ladder's standings after a "
            "recorded match.", buckets=RECOMPUTE_BUCKETS, registry=registry)

    def observe_match(self, match_id: str, seconds: float) -> None:
        self.match_duration.labels(ladder=match_id.split(".", 1)[0]).observe(seconds)


_METRICS: WorkerMetrics | None = None


def current() -> WorkerMetrics | None:
    """This process's :class:`WorkerMetrics` (None: metrics are off)."""
    return _METRICS


def setup(index: int) -> WorkerMetrics | None:
    """In RQ worker process ``index``: when ``PROMETHEUS_MULTIPROC_DIR`` is set, switch
    prometheus-client to per-slot multiprocess files, create the metrics and time the
    sandboxed decisions and the standings refits. Returns None (and does nothing) without
    the variable."""
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
    instrument(_METRICS)
    return _METRICS


def instrument(metrics: WorkerMetrics) -> None:
    """Time each sandboxed decision (``ProcessSeat.ask`` starts its clock, ``answer`` ends
    it, failures included) and each standings refit. Idempotent per process."""
    original = ProcessSeat.answer
    if not getattr(original, "_tacocat_timed", False):
        decisions = metrics.decision_seconds.labels(transport="sandbox")

        @wraps(original)
        async def answer(self: ProcessSeat) -> Any:
            got = await original(self)
            decisions.observe(max(0.0, time.monotonic() - (self._deadline - self.time_limit)))
            return got

        answer._tacocat_timed = True  # type: ignore[attr-defined]
        ProcessSeat.answer = answer  # type: ignore[method-assign]
    refit = standings.update_standings
    if not getattr(refit, "_tacocat_timed", False):

        @wraps(refit)
        def update_standings(*args: Any, **kwargs: Any) -> Any:
            with metrics.rating_recompute.time():
                return refit(*args, **kwargs)

        update_standings._tacocat_timed = True  # type: ignore[attr-defined]
        standings.update_standings = update_standings


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
