"""Prometheus metrics of the arena, served on the web UI's ``/metrics``.

Two kinds, for two reasons:

- **Counters that must equal the recorded results** (games and matches by ladder and outcome,
  forfeits by reason, submissions, smoke tests, worker job totals) and the **cluster gauges**
  (queue depth, age of the oldest queued job, busy/idle workers, pending matches) are read
  from the arena's Redis at scrape time by :class:`ArenaCollector`. The recording script
  increments those Redis counters in the same atomic step that records a match, so the
  exported values are exactly the recorded results: no process holds them in memory, a
  SIGKILLed worker or a restarted server loses nothing, and however many workers run on
  however many hosts (RQ forks a work horse per job) nothing is counted twice. Ladders are
  admin-created, so ``ladder`` labels stay bounded; nothing is labelled per bot.
- **In-process observations** of this server (:class:`ServerMetrics`): the live referee's
  per-decision latency (``transport="live"``), live games in progress, and scrape errors.
  The worker hosts export the sandbox side (``tacocat.worker.metrics``).

Every class takes a :class:`~prometheus_client.CollectorRegistry` (tests use a fresh one);
:func:`server_metrics` is the process-wide instance on the default registry. Nothing is
patched in: the referee is handed its :class:`ServerMetrics` and gives each live seat
:meth:`ServerMetrics.observe_decision` as its ``on_decision`` hook.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime
from typing import Any, Final

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from redis import Redis

from tacocat.arena import DEFAULT_PREFIX
from tacocat.arena.keys import Keys

DECISION_BUCKETS: Final = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
                           1.0, 2.5, 5.0, 10.0)
"""Per-decision latency buckets: a sandboxed greedy bot answers in well under a millisecond,
a live bot over the network in tens of milliseconds, the limit is seconds."""

MATCH_QUEUE: Final = "tacocat-matches"
SMOKE_QUEUE: Final = "tacocat-smoke"
"""The worker's RQ queue names (``tacocat.worker.queue``; the server may not import it)."""

GAME_OUTCOMES: Final = ("decisive", "tie", "aborted")

# Every metric name this module exports (deploy/ tests check alert rules and dashboards
# against it): name -> type.
ARENA_METRICS: Final = {
    "tacocat_redis_up": "gauge",
    "tacocat_games_total": "counter",
    "tacocat_matches_total": "counter",
    "tacocat_matches_scheduled_total": "counter",
    "tacocat_matches_pending": "gauge",
    "tacocat_forfeits_total": "counter",
    "tacocat_queue_jobs": "gauge",
    "tacocat_queue_oldest_age_seconds": "gauge",
    "tacocat_workers": "gauge",
    "tacocat_workers_without_sandbox": "gauge",
    "tacocat_submissions_total": "counter",
    "tacocat_submissions_pending": "gauge",
    "tacocat_smoke_tests_total": "counter",
    "tacocat_worker_jobs_total": "counter",
    "tacocat_match_duplicates_total": "counter",
    "tacocat_bot_failures_total": "counter",
}
SERVER_METRICS: Final = {
    "tacocat_decision_seconds": "histogram",
    "tacocat_live_games": "gauge",
    "tacocat_metrics_scrape_errors_total": "counter",
}


class ServerMetrics:
    """The server's in-process metrics, registered on ``registry``."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.registry = registry
        self.decision_seconds = Histogram(
            "tacocat_decision_seconds", "Time from a decision request to the bot's answer.",
            ["transport"], buckets=DECISION_BUCKETS, registry=registry)
        self._live_decisions = self.decision_seconds.labels(transport="live")
        self.live_games = Gauge("tacocat_live_games",
                                "Live (gRPC referee) matches in progress.", registry=registry)
        self.scrape_errors = Counter("tacocat_metrics_scrape_errors",
                                     "Scrapes whose Redis read failed.", registry=registry)
        self._referee: Callable[[], Any] | None = None
        self.live_games.set_function(self._live_games)

    def track_live_games(self, referee: Any) -> None:
        """Report ``referee.active_matches`` (a :class:`RefereeService`) as live games; held
        weakly, so a stopped server does not live on in the metrics."""
        self._referee = weakref.ref(referee)

    def observe_decision(self, seconds: float) -> None:
        """One live decision: ``seconds`` from the request to the answer or the failure (the
        live seats' ``on_decision`` hook)."""
        self._live_decisions.observe(seconds)

    def _live_games(self) -> float:
        referee = self._referee() if self._referee is not None else None
        return float(referee.active_matches) if referee is not None else 0.0


_SERVER: ServerMetrics | None = None


def server_metrics() -> ServerMetrics:
    """The process-wide :class:`ServerMetrics` on the default registry (created once)."""
    global _SERVER  # one per process, like the default registry
    if _SERVER is None:
        _SERVER = ServerMetrics(REGISTRY)
    return _SERVER


class ArenaCollector(Collector):
    """Reads the arena's counters from Redis at each scrape (see the module docs)."""

    def __init__(self, redis: Redis, *, prefix: str = DEFAULT_PREFIX,
                 queues: Iterable[str] = (SMOKE_QUEUE, MATCH_QUEUE),
                 on_error: Callable[[], None] | None = None,
                 clock: Callable[[], float] = time.time, stale_after: float = 30.0) -> None:
        self.redis = redis
        self.keys = Keys(prefix)
        self.queues = tuple(queues)
        self.on_error = on_error
        self.clock = clock
        self.stale_after = stale_after

    def describe(self) -> Iterable[Metric]:
        return []  # collected at scrape time only: registering must not touch Redis

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("tacocat_redis_up", "Whether the arena's Redis answered this "
                               "scrape (1) or not (0).")
        try:
            families = list(self._families())
        except Exception:  # any Redis failure: report down, keep serving
            if self.on_error is not None:
                self.on_error()
            up.add_metric([], 0.0)
            yield up
            return
        up.add_metric([], 1.0)
        yield up
        yield from families

    # -- reading ------------------------------------------------------------------------------

    def _families(self) -> Iterator[Metric]:
        r: Any = self.redis
        k = self.keys
        ladders = sorted(_s(x) for x in r.smembers(k.ladders))
        pipe = r.pipeline(transaction=False)
        for name in ladders:
            pipe.hgetall(k.counters(name))
            pipe.hgetall(k.pairs(name))
            pipe.hgetall(k.stats(name))
            pipe.zcard(k.pending(name))
        per_ladder = pipe.execute()
        games = CounterMetricFamily("tacocat_games", "Recorded games, by ladder and outcome "
                                    "(decisive, tie, aborted).", labels=["ladder", "outcome"])
        matches = CounterMetricFamily("tacocat_matches", "Matches by ladder and outcome "
                                      "(recorded, cancelled, aborted: failed the same way "
                                      "too often).", labels=["ladder", "outcome"])
        scheduled = CounterMetricFamily("tacocat_matches_scheduled", "Matches created by the "
                                        "scheduler.", labels=["ladder"])
        pending = GaugeMetricFamily("tacocat_matches_pending", "Scheduled matches not "
                                    "recorded yet.", labels=["ladder"])
        forfeits = CounterMetricFamily("tacocat_forfeits", "Games forfeited, by ladder and "
                                       "reason (the fault).", labels=["ladder", "reason"])
        for i, name in enumerate(ladders):
            counters, pairs, stats, waiting = per_ladder[4 * i: 4 * i + 4]
            c = {_s(f): int(v) for f, v in counters.items()}
            outcome = dict.fromkeys(GAME_OUTCOMES, 0)
            for field, value in pairs.items():
                kind = _s(field).rsplit("|", 1)[-1]
                if kind in ("wins", "losses"):
                    outcome["decisive"] += int(value)
                elif kind == "ties":
                    outcome["tie"] += int(value)
                elif kind == "aborted":
                    outcome["aborted"] += int(value)
            for key, value in outcome.items():
                games.add_metric([name, key], value)
            matches.add_metric([name, "recorded"], c.get("results", 0))
            matches.add_metric([name, "cancelled"], c.get("cancelled", 0))
            matches.add_metric([name, "aborted"], c.get("aborted", 0))
            scheduled.add_metric([name], c.get("created", 0))
            pending.add_metric([name], waiting)
            faults: dict[str, int] = {}
            for field, value in stats.items():
                _, _, kind = _s(field).partition("|")
                if kind.startswith("forfeit:"):
                    fault = kind.removeprefix("forfeit:")
                    faults[fault] = faults.get(fault, 0) + int(value)
            for fault, count in sorted(faults.items()):
                forfeits.add_metric([name, fault], count)
        yield from (games, matches, scheduled, pending, forfeits)
        yield from self._queues()
        yield from self._workers()
        yield from self._submissions()
        yield from self._worker_stats()

    def _queues(self) -> Iterator[Metric]:
        r: Any = self.redis
        depth = GaugeMetricFamily("tacocat_queue_jobs", "Jobs waiting in an RQ queue.",
                                  labels=["queue"])
        age = GaugeMetricFamily("tacocat_queue_oldest_age_seconds", "Age of the oldest "
                                "waiting job of an RQ queue (0 when empty).", labels=["queue"])
        now = self.clock()
        for queue in self.queues:
            key = f"rq:queue:{queue}"
            pipe = r.pipeline(transaction=False)
            pipe.llen(key)
            pipe.lindex(key, 0)
            length, head = pipe.execute()
            depth.add_metric([queue], length)
            oldest = 0.0
            if head is not None:
                stamp = r.hget(f"rq:job:{_s(head)}", "enqueued_at")
                if stamp is not None:
                    oldest = max(0.0, now - _rq_time(_s(stamp)))
            age.add_metric([queue], oldest)
        yield from (depth, age)

    def _workers(self) -> Iterator[Metric]:
        r: Any = self.redis
        names = sorted(_s(x) for x in r.smembers("rq:workers"))
        pipe = r.pipeline(transaction=False)
        for key in names:
            pipe.hmget(key, "state", "last_heartbeat", "tacocat_sandbox")
        states: dict[str, int] = {"busy": 0, "idle": 0, "lost": 0}
        unsandboxed = 0
        now = self.clock()
        for state, beat, sandbox in pipe.execute():
            if state is None:
                continue  # a dead worker's key expired; RQ prunes the set later
            unsandboxed += cannot_sandbox(sandbox)
            kind = _s(state)
            if kind == "busy" and beat is not None and now - _rq_time(_s(beat)) > self.stale_after:
                kind = "lost"  # a busy worker heartbeats every few seconds: this one died
            kind = kind if kind in states else "other"
            states[kind] = states.get(kind, 0) + 1
        workers = GaugeMetricFamily("tacocat_workers", "RQ workers by state: busy (playing a "
                                    "job), idle, lost (busy without a heartbeat for "
                                    "stale_after seconds: killed), other.", labels=["state"])
        for state, count in sorted(states.items()):
            workers.add_metric([state], count)
        yield workers
        without = GaugeMetricFamily("tacocat_workers_without_sandbox", "Live RQ workers whose "
                                    "host cannot sandbox submitted bots (they play only "
                                    "trusted owners' bots; `tacocat worker --check` on the "
                                    "host says what is missing).")
        without.add_metric([], unsandboxed)
        yield without

    def _submissions(self) -> Iterator[Metric]:
        r: Any = self.redis
        k = self.keys
        bots = list(r.smembers(k.bots))
        pipe = r.pipeline(transaction=False)
        for bot in bots:
            pipe.hget(k.bot(_s(bot)), "versions")
        total = sum(int(v or 0) for v in pipe.execute())
        submitted = CounterMetricFamily("tacocat_submissions", "Bot versions submitted "
                                        "(accepted for a smoke test).")
        submitted.add_metric([], total)
        waiting = GaugeMetricFamily("tacocat_submissions_pending", "Submitted versions "
                                    "awaiting their smoke test.")
        waiting.add_metric([], r.zcard(k.pending_versions))
        yield from (submitted, waiting)

    def _worker_stats(self) -> Iterator[Metric]:
        raw: dict[bytes, bytes] = self.redis.hgetall(  # type: ignore[assignment]
            f"{self.keys.prefix}worker:stats")
        s = {_s(f): float(v) for f, v in raw.items()}
        smoke = CounterMetricFamily("tacocat_smoke_tests", "Smoke tests of new versions, by "
                                    "outcome.", labels=["outcome"])
        rejected = s.get("smoke_rejected", 0.0)
        smoke.add_metric(["activated"], s.get("smoke_tests", 0.0) - rejected)
        smoke.add_metric(["rejected"], rejected)
        jobs = CounterMetricFamily("tacocat_worker_jobs", "Jobs the RQ workers ran (matches "
                                   "and smoke tests, any outcome).")
        jobs.add_metric([], s.get("jobs", 0.0))
        dups = CounterMetricFamily("tacocat_match_duplicates", "Match runs whose result was "
                                   "already recorded (a re-run after a lost worker).")
        dups.add_metric([], s.get("duplicates", 0.0))
        failures = CounterMetricFamily("tacocat_bot_failures", "Bot process failures in "
                                       "matches, by fault.", labels=["fault"])
        for field, value in sorted(s.items()):
            if field.startswith("failures:"):
                failures.add_metric([field.removeprefix("failures:")], value)
        yield from (smoke, jobs, dups, failures)


def cannot_sandbox(field: bytes | str | None) -> bool:
    """Whether an RQ worker's ``tacocat_sandbox`` field (set by ``tacocat.worker.rqworker``:
    ``ready``, ``insecure`` or the host check's summary of what is missing) says it cannot
    sandbox submitted bots."""
    return field is not None and _s(field) not in ("ready", "insecure")


def unsandboxed_workers(redis: Any) -> list[tuple[str, str]]:
    """``(worker name, what its host lacks)`` of each live worker that cannot sandbox."""
    names = sorted(_s(x) for x in redis.smembers("rq:workers"))
    pipe = redis.pipeline(transaction=False)
    for key in names:
        pipe.hget(key, "tacocat_sandbox")
    return [(key.removeprefix("rq:worker:"), _s(field))
            for key, field in zip(names, pipe.execute(), strict=True) if cannot_sandbox(field)]


def _s(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


def _rq_time(text: str) -> float:
    """RQ's ``2026-11-29T19:56:01.123456Z`` (UTC) -> Unix seconds."""
    text = text.rstrip("Z")
    try:
        stamp = datetime.fromisoformat(text)
    except ValueError:
        return time.time()
    if stamp.tzinfo is None:
        stamp = stamp.replace(tzinfo=UTC)
    return stamp.timestamp()


def exported_metric_names() -> dict[str, str]:
    """Every server-side metric family name -> type (histograms: the base name)."""
    return {**ARENA_METRICS, **SERVER_METRICS}
