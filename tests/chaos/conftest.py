"""Fixtures of the chaos suite: ``cluster`` (an arena spread over network-namespace hosts,
built fresh for each test and torn down whatever happened) and ``cluster_factory`` for a
test that needs other settings (a serve host, Redis on a small tmpfs).

The hosts need root. Where the machine cannot build them the fixtures fail, saying why:
a skipped chaos suite would look like a passed one.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tacocat_lab.chaos.cluster import Cluster, ClusterSettings
from tacocat_lab.chaos.hosts import NETNS_PREFIX, check_support, wait_gone
from tacocat_lab.chaos.ladder import LadderSpec

from ..worker.worker_helpers import SANDBOX

ClusterFactory = Callable[..., Cluster]


@pytest.fixture(autouse=True, scope="module")
def _one_chaos_module_at_a_time(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The hosts of every cluster share the machine's bridges and subnets, so two chaos
    modules must not run at once when the suite is spread over processes (./dev test): each
    takes this lock, in the run's temporary root that all the processes share."""
    root = tmp_path_factory.getbasetemp()
    shared = root.parent if os.environ.get("PYTEST_XDIST_WORKER") else root
    with (shared / "chaos.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


@pytest.fixture
def cluster_factory(tmp_path: Path) -> Iterator[ClusterFactory]:
    """Builds started clusters on demand (``ClusterSettings`` fields as keywords); all are
    closed at teardown, and no namespace of this process may be left after that."""
    check_support()  # NetworkError (not root, no ip/nsenter) fails the test loudly
    made: list[Cluster] = []

    def make(**settings: object) -> Cluster:
        cluster = Cluster(tmp_path / f"cluster-{len(made)}",
                          ClusterSettings(sandbox=SANDBOX, **settings))  # type: ignore[arg-type]
        made.append(cluster)
        cluster.start()
        return cluster

    try:
        yield make
    finally:
        for cluster in made:
            cluster.close()
    assert wait_gone(f"{NETNS_PREFIX}{os.getpid()}-"), "chaos namespaces left behind"


@pytest.fixture
def cluster(cluster_factory: ClusterFactory) -> Cluster:
    """Redis and two worker hosts, lease 3 s, dispatcher pass 1 s."""
    return cluster_factory()


def ladder_spec(games_per_pairing: int, games_per_match: int) -> LadderSpec:
    """Three bots, activated at once (the smoke test is not what these tests are about)."""
    return LadderSpec(bots=3, games_per_pairing=games_per_pairing,
                      games_per_match=games_per_match, smoke=False)
