"""Prometheus metrics, end to end: a small ladder played by real ``tacocat worker`` processes
(one SIGKILLed mid-match), then ``/metrics`` of the server (the web UI) and of the worker host
scraped over HTTP and parsed with prometheus-client's parser: the counters equal the recorded
results exactly, and the worker histograms saw every completed match job."""

from __future__ import annotations

import os
import re
import signal
import time
import urllib.request

import pytest
import redis as redis_py
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from tacocat.arena import MatchStatus
from tacocat.server.metrics import ArenaCollector, ServerMetrics, exported_metric_names
from tacocat.web import WebServer
from tacocat.worker import worker_stats
from tacocat.worker.metrics import WORKER_METRICS, WorkerMetrics
from tacocat.worker.queue import lease_key
from tests.web.conftest import ServerThread
from tests.worker.worker_helpers import (
    Trees,
    children_of,
    hostile_bot,
    make_field,
    slow_bot,
    wait_decided,
    wait_for,
    wait_ladder_done,
)

pytestmark = pytest.mark.timeout(150)

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(url: str) -> Samples:
    with urllib.request.urlopen(url, timeout=10) as reply:
        assert reply.status == 200
        assert reply.headers["Content-Type"].startswith("text/plain")
        text = reply.read().decode()
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_equal_the_recorded_results_even_after_a_worker_was_killed_mid_match(
        redis: redis_py.Redis, redis_url: str, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=8, games_per_match=8,
                         decision_seconds=0.5)
    versions = [field.submit("ann", "slow", slow_bot("a", 0.004)),
                field.submit("bob", "slow", slow_bot("b", 0.004)),
                # crashes in its first duel against ann: forfeits with reason "crash"
                field.submit("mal", "exit", hostile_bot("exit", only_against="ann/"))]
    tree = trees("--metrics-port", "0", workers=2)
    found = wait_for(lambda: re.search(r"metrics on http://([\d.]+):(\d+)/metrics", tree.text),
                     10, "the worker metrics port")
    worker_url = f"http://{found[1]}:{found[2]}/metrics"
    for owner, bot in (("ann", "slow"), ("bob", "slow"), ("mal", "exit")):
        field.join(owner, bot, "main")
    assert wait_decided(arena, versions) == dict.fromkeys(versions, "")

    # Kill the worker of the first running match (its horse and bots die with it).
    holder = wait_for(lambda: next((redis.get(lease_key("tacocat:", m.id))
                                    for m in arena.matches.of_ladder("main")
                                    if redis.get(lease_key("tacocat:", m.id))), None),
                      30, "a running match")
    assert isinstance(holder, bytes)
    worker = int(holder.decode().rsplit("-", 2)[1])
    wait_for(lambda: children_of(worker), 10, "the work horse")
    os.kill(worker, signal.SIGKILL)
    wait_ladder_done(arena, "main", timeout=90)

    matches = [m for m in arena.matches.of_ladder("main", count=100)
               if m.status is MatchStatus.RECORDED]
    assert len(matches) == 3
    games = {"decisive": 0, "tie": 0, "aborted": 0}
    forfeits: dict[str, int] = {}
    for m in matches:
        result = m.result
        assert result is not None
        games["tie"] += result.ties
        games["aborted"] += result.aborted
        games["decisive"] += len(result.games) - result.ties - result.aborted
        for side in ("a", "b"):
            for fault, count in result.forfeits(side).items():
                forfeits[fault] = forfeits.get(fault, 0) + count
    assert forfeits.get("crash", 0) > 0

    with ServerThread(WebServer(arena, redis_url, port=0)) as web:
        # The tree starts a worker in place of the killed one; with both cores busy (the suite
        # in two processes) it may report idle seconds after the ladder is done: scrape again
        # until it does, for 30 s at most (the assertion below still says whether it did).
        deadline = time.monotonic() + 30
        server = scrape(web.url + "/metrics")
        while value(server, "tacocat_workers", state="idle") < 2 \
                and time.monotonic() < deadline:
            time.sleep(0.5)
            server = scrape(web.url + "/metrics")
    assert value(server, "tacocat_redis_up") == 1
    for outcome, count in games.items():
        assert value(server, "tacocat_games_total", ladder="main", outcome=outcome) == count
    assert sum(games.values()) == arena.ladders.status("main").games_played == 24
    assert value(server, "tacocat_matches_total", ladder="main", outcome="recorded") == 3
    assert value(server, "tacocat_matches_scheduled_total", ladder="main") == 3
    assert value(server, "tacocat_matches_pending", ladder="main") == 0
    for fault, count in forfeits.items():
        assert value(server, "tacocat_forfeits_total", ladder="main", reason=fault) == count
    assert sum(v for (name, _), v in server.items() if name == "tacocat_forfeits_total") \
        == sum(forfeits.values())
    assert value(server, "tacocat_submissions_total") == 3
    assert value(server, "tacocat_smoke_tests_total", outcome="activated") == 3
    assert value(server, "tacocat_queue_jobs", queue="tacocat-matches") == 0
    assert value(server, "tacocat_workers", state="idle") >= 2
    # The killed worker's RQ record still says busy (until RQ's TTL): with no heartbeat for
    # stale_after seconds it counts as lost, not busy.
    time.sleep(1.5)
    registry = CollectorRegistry()
    registry.register(ArenaCollector(redis, stale_after=1.0))
    assert registry.get_sample_value("tacocat_workers", {"state": "busy"}) == 0
    assert registry.get_sample_value("tacocat_workers", {"state": "lost"}) == 1
    stats = worker_stats(redis)
    assert value(server, "tacocat_match_duplicates_total") == stats.get("duplicates", 0)

    # The worker host: every match job that completed (the killed one did not) was timed by
    # its worker, decisions and refits by the horses (through the hooks the worker hands its
    # jobs in their JobContext: nothing is patched).
    host = scrape(worker_url)
    completed = 3 + stats.get("duplicates", 0)
    assert value(host, "tacocat_match_duration_seconds_count", ladder="main") == completed
    assert value(host, "tacocat_decision_seconds_count", transport="sandbox") > 24 * 10
    assert value(host, "tacocat_rating_recompute_seconds_count") >= 3
    assert "re-enqueued 1 orphaned match in main" in tree.text


def test_server_metrics_read_back_from_a_fresh_registry() -> None:
    registry = CollectorRegistry()
    metrics = ServerMetrics(registry)

    class Referee:
        active_matches = 3

    referee = Referee()
    metrics.track_live_games(referee)
    assert registry.get_sample_value("tacocat_decision_seconds_count",
                                     {"transport": "live"}) == 0
    metrics.observe_decision(0.02)  # the live seats' on_decision hook
    assert registry.get_sample_value("tacocat_live_games") == 3
    assert registry.get_sample_value("tacocat_decision_seconds_count",
                                     {"transport": "live"}) == 1
    assert registry.get_sample_value("tacocat_decision_seconds_sum",
                                     {"transport": "live"}) == 0.02
    del referee
    assert registry.get_sample_value("tacocat_live_games") == 0


def test_an_unreachable_redis_is_reported_not_raised() -> None:
    registry = CollectorRegistry()
    errors: list[int] = []
    dead = redis_py.Redis(port=1, socket_connect_timeout=0.5)
    registry.register(ArenaCollector(dead, on_error=lambda: errors.append(1)))
    assert registry.get_sample_value("tacocat_redis_up") == 0
    assert errors == [1]


def test_every_exported_name_follows_prometheus_conventions() -> None:
    worker, server = CollectorRegistry(), CollectorRegistry()
    WorkerMetrics(worker)
    ServerMetrics(server)
    names = {**exported_metric_names(), **WORKER_METRICS}
    for name, kind in names.items():
        assert re.fullmatch(r"tacocat_[a-z_]+", name), name
        assert name.endswith("_total") == (kind == "counter"), name
        if "seconds" in name:
            assert name.endswith("_seconds") or name.endswith("_seconds_total"), name
    for family in [*worker.collect(), *server.collect()]:
        base = family.name + ("_total" if family.type == "counter" else "")
        assert base in names, base
