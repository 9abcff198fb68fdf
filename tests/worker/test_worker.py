"""``tacocat worker`` for real: RQ worker processes, the dispatcher, sandboxed bots, a Redis."""

from __future__ import annotations

import time

import pytest
import redis as redis_py

from tacocat.worker import worker_stats

from .worker_helpers import (
    Trees,
    good_bot,
    make_field,
    recorded,
    wait_decided,
    wait_ladder_done,
)

pytestmark = pytest.mark.timeout(120)


def test_a_full_round_robin_is_recorded_exactly_once_with_consistent_standings(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=8, games_per_match=4,
                         decision_seconds=1.0)
    first = trees(workers=2)
    second = trees("--pin", "none", workers=1)  # a second machine, as far as Redis knows
    bases = ["GreedyBot", "RandomBot", "GreedyBot", "RandomBot"]
    versions = [field.submit(f"user{i}", "bot", good_bot(f"b{i}", base))
                for i, base in enumerate(bases)]
    for i in range(4):
        field.join(f"user{i}", "bot", "main")
    assert wait_decided(arena, versions) == dict.fromkeys(versions, "")

    wait_ladder_done(arena, "main")

    status = arena.ladders.status("main")
    assert status.matches_scheduled == status.matches_recorded == 12  # 6 pairs x 2 rounds
    assert status.games_played == 48
    log = arena.ladders.recent_matches("main", count=100)
    assert sorted(e.seq for e in log) == list(range(1, 13))
    assert len({e.match for e in log}) == 12 == len(recorded(arena, "main"))
    board = arena.ladders.leaderboard("main")
    assert {s.version for s in board.standings} == set(versions)
    for standing in board.standings:
        assert standing.games == 24 and standing.matches == 6
        assert standing.wins + standing.ties + standing.losses + standing.aborted == 24
        assert not standing.forfeits
    assert sum(s.wins for s in board.standings) == sum(s.losses for s in board.standings)
    replay = arena.ladders.recompute_ratings("main")
    assert replay.version == 12 and replay.consistent
    # A job adds its figures to the worker counters just after recording its match.
    deadline = time.monotonic() + 20
    stats = worker_stats(redis)
    while stats["matches"] < 12 and time.monotonic() < deadline:
        time.sleep(0.1)
        stats = worker_stats(redis)
    assert stats["matches"] >= 12 and stats["smoke_tests"] == 4
    # However many `tacocat worker`s run, one dispatcher works.
    active = [t for t in (first, second) if "dispatcher: active" in t.text]
    assert len(active) == 1, [t.text for t in (first, second)]
    # Both machines played.
    assert all(" recorded main." in t.text for t in (first, second)), first.text + second.text
    assert first.stop() == 0 and second.stop() == 0
    assert "stopping 2 workers" in first.text
