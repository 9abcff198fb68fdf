"""Faults of the Redis host, on an arena spread over network-namespace hosts: Redis
SIGKILLed mid-ladder and started again on its data; its data volume (a small tmpfs) filled
mid-ladder, then freed. Nothing acknowledged is lost, nothing is counted twice, the workers
say what is wrong and wait rather than crash in a loop, the ladder finishes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tacocat_lab.chaos.cluster import Cluster
from tacocat_lab.chaos.faults import REDIS_VOLUME_KB, fill_disk, kill_redis
from tacocat_lab.chaos.hosts import tmpfs
from tacocat_lab.chaos.ladder import Counts, Ladder

from .conftest import ClusterFactory, ladder_spec

pytestmark = pytest.mark.timeout(240)


def _exactly_once(counts: Counts) -> None:
    assert counts.lost == 0 and counts.double_counted == 0, counts
    assert counts.recorded == counts.expected == counts.scheduled, counts
    assert counts.games_in_leaderboard == counts.games_expected, counts


def test_redis_killed_mid_ladder_keeps_every_acknowledged_result(cluster: Cluster) -> None:
    ladder = Ladder(cluster, ladder_spec(24, 8))
    ladder.start()

    counts = kill_redis(cluster, ladder, lambda _: None, kills=2)

    assert counts.injections == 2
    assert counts.notes["acknowledged_lost"] == 0, counts
    assert counts.notes["live_left"] == [], counts  # no finished match shown "live"
    _exactly_once(counts)


def test_a_full_redis_disk_is_reported_and_waited_out_then_the_ladder_resumes(
        cluster_factory: ClusterFactory, tmp_path: Path) -> None:
    with tmpfs(tmp_path, REDIS_VOLUME_KB) as volume:
        cluster = cluster_factory(serve=True, redis_dir=volume)
        ladder = Ladder(cluster, ladder_spec(24, 8))
        ladder.start()

        counts = fill_disk(cluster, ladder, lambda _: None, full_seconds=4.0)

        cluster.close()  # before the volume goes
    _exactly_once(counts)
    notes = counts.notes
    assert notes["recorded_lost"] == 0 and notes["worker_restarts"] == 0, counts
    # Every RQ worker that met the refusal (one blocked waiting for a job meets none) waited.
    said = [w for w in ("dispatcher_log", "worker_log", "server_log", "cli") if notes[w]]
    assert {"dispatcher_log", "server_log", "cli"} <= set(said), notes
    for where in said:
        assert "Redis refuses writes (MISCONF" in notes[where], (where, notes[where])
        assert "free space on the Redis host" in notes[where], (where, notes[where])
    assert notes["cli"].startswith("exit 1: tacocat submit: "), notes["cli"]
    # A dispatcher whose lock lapsed while Redis refused writes says that, not "stalled".
    if notes["dispatcher_lock_log"]:
        assert "its renewal could not be written (Redis refuses writes" in \
            notes["dispatcher_lock_log"], notes["dispatcher_lock_log"]
