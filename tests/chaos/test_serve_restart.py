"""``tacocat serve`` restarted mid-ladder and during a live game, on its own host: the
workers do not notice, the live client gets a clear status, a client that connects while
the server is down is told why, and one that connects after the restart plays."""

from __future__ import annotations

import pytest

from tacocat_lab.chaos.faults import restart_serve
from tacocat_lab.chaos.ladder import Ladder

from .conftest import ClusterFactory, ladder_spec

pytestmark = pytest.mark.timeout(180)


def test_restarting_serve_leaves_workers_alone_and_tells_live_clients_why(
        cluster_factory: ClusterFactory) -> None:
    cluster = cluster_factory(serve=True)
    ladder = Ladder(cluster, ladder_spec(24, 8))
    ladder.start()

    counts = restart_serve(cluster, ladder, lambda _: None)

    assert counts.ok, counts
    notes = counts.notes
    assert notes["workers_unaffected"], counts
    assert notes["live_during"] == \
        "RefereeError: referee refused (UNAVAILABLE): the referee is shutting down", notes
    assert notes["live_while_down"].startswith("ConnectionLostError: "), notes
    assert "Connection refused" in notes["live_while_down"], notes
    assert notes["live_after"] == "ok: 2 games", notes
    # `tacocat leaderboard --watch` said it reconnects, and goes on after the restart.
    assert notes["watch_follower"].startswith("reconnected ("), notes
