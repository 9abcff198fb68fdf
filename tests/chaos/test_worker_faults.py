"""Faults of worker hosts, each on an arena spread over network-namespace hosts: workers
SIGKILLed at random moments, a worker paused past its lease, a worker cut off the network
past its lease. Every scheduled match is recorded exactly once; the leaderboard's game
count is matches x games; a stalled worker goes on by itself."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from tacocat_lab.chaos.cluster import Cluster
from tacocat_lab.chaos.faults import (
    kill_workers,
    partition_worker,
    pause_worker,
    short_pause,
    slow_network,
)
from tacocat_lab.chaos.ladder import Counts, Ladder

from .conftest import ClusterFactory, ladder_spec

pytestmark = pytest.mark.timeout(240)


def _exactly_once(counts: Counts) -> None:
    assert counts.lost == 0 and counts.double_counted == 0, counts
    assert counts.recorded == counts.expected == counts.scheduled, counts
    assert counts.games_in_leaderboard == counts.games_expected, counts


def test_ten_kills_of_random_worker_processes_lose_and_double_count_nothing(
        cluster: Cluster) -> None:
    ladder = Ladder(cluster, ladder_spec(32, 8))
    ladder.start()

    counts = kill_workers(cluster, ladder, 10, random.Random(11), lambda _: None, timeout=120)

    assert counts.injections == 10
    _exactly_once(counts)
    assert all(seconds < 60 for seconds in counts.recovery_seconds), counts
    # No killed horse left both bots' sources on disk (its worker, or the supervisor's
    # sweep, removed them within seconds).
    assert counts.notes["match_folders_left"] == [], counts
    # Killed supervisors were started again, killed RQ workers restarted by them: every
    # host ends with a working pool.
    for host in cluster.workers.values():
        cluster.wait_worker(host, timeout=30)


def _recovered_by_itself(counts: Counts) -> None:
    notes = counts.notes
    assert notes["requeued"], counts  # the lease ran out: the match was handed out again
    assert notes["same_processes"] and notes["restarts"] == 0, counts
    assert notes["exited_lines"] == 0, counts
    if notes["recorded_by"] == "another worker":
        # The stalled run's late result came after the re-run's: refused, and its faults
        # (its bots "took" the stall) count nowhere.
        assert counts.duplicates_refused >= 1 and notes["duplicate_lines"] >= 1, counts
        assert notes.get("failures_counted", 0) == 0, counts


@pytest.mark.parametrize("stall", [pause_worker, partition_worker], ids=["pause", "partition"])
def test_a_worker_stalled_for_three_leases_is_rerun_and_recorded_once_and_goes_on_by_itself(
        cluster: Cluster, stall: Callable[..., Counts]) -> None:
    """SIGSTOP of the whole worker host (a paused VM), or its port on the bridge down (its
    packets vanish), for three leases; then SIGCONT, or the port up again."""
    ladder = Ladder(cluster, ladder_spec(24, 12))
    ladder.start()

    counts = stall(cluster, ladder, lambda _: None, factor=3.0)

    _exactly_once(counts)
    _recovered_by_itself(counts)
    assert counts.notes["stall_seconds"] == pytest.approx(3 * cluster.settings.lease)


def test_over_a_slow_lossy_link_no_lease_is_lost_and_nothing_runs_twice(
        cluster_factory: ClusterFactory) -> None:
    """Every worker reaches Redis through a relay adding 50 ms round trips and holding 1% of
    chunks back 200 ms (no netem in this kernel; see tacocat_lab.chaos.slowlink)."""
    cluster = cluster_factory(slow_link=True)
    ladder = Ladder(cluster, ladder_spec(16, 8))
    ladder.start()

    counts = slow_network(cluster, ladder, lambda _: None)

    _exactly_once(counts)
    assert counts.notes["requeued"] == 0 and counts.duplicates_refused == 0, counts
    assert counts.notes["record_ms"] > 100, counts  # the link was slow indeed


def test_a_pause_shorter_than_the_lease_charges_no_bot(
        cluster_factory: ClusterFactory) -> None:
    """SIGSTOP of a busy worker host for 5 s, with a 10 s lease: the match is not re-run, the
    paused run records it. Every bot here answers in milliseconds, so a forfeit can only be
    the pause's."""
    cluster = cluster_factory(lease=10.0)
    ladder = Ladder(cluster, ladder_spec(16, 8))
    ladder.start()

    counts = short_pause(cluster, ladder, lambda _: None)

    _exactly_once(counts)
    assert counts.duplicates_refused == 0, counts  # shorter than the lease: no re-run
    # Needs the referee's stall detection (the "clock" branch: a game stalled by the host is
    # voided or re-played, not forfeited); until it is merged this fails, naming the
    # forfeits the pause charged ("timeout: ... took 5 s").
    assert counts.notes["forfeits_charged"] == 0, counts.notes["forfeits"]
    assert counts.notes["failures_counted"] == 0, counts
