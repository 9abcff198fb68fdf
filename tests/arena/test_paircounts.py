"""Pair counters kept as arrays with the snapshot and brought up to date from the results
log: the same counts, standings and status as reading the whole ``pairs`` hash, and a
ladder written by the older arena (snapshot without arrays, log entries without their
aborted count) still reads correctly."""

from __future__ import annotations

import random

import numpy as np
import redis as redis_py

from tacocat.arena import Arena, MatchGameResult, MatchResult, standings
from tacocat.arena.paircounts import read_pair_counts, read_whole
from tacocat.arena.recording import record_match
from tacocat.arena.results import dumps_json
from tacocat.engine import Fault, Reason

from .helpers import stub_ladder

BOTS = 7


def random_result(rng: random.Random, games: int) -> MatchResult:
    out = []
    for i in range(games):
        kind = rng.random()
        if kind < 0.15:
            out.append(MatchGameResult(i % 2, Reason.ABORTED, None))
        elif kind < 0.3:
            out.append(MatchGameResult(i % 2, Reason.GOAL, None))
        elif kind < 0.4:
            out.append(MatchGameResult(i % 2, Reason.FORFEIT, "b", Fault.TIMEOUT, "a"))
        else:
            out.append(MatchGameResult(i % 2, Reason.GOAL, rng.choice("ab")))  # type: ignore[arg-type]
    return MatchResult(tuple(out), 0.0)


def played_ladder(redis: redis_py.Redis) -> tuple[Arena, list[str]]:
    return stub_ladder(redis, "pc", BOTS, games_per_pairing=8, games_per_match=4)


def assert_same_counts(arena: Arena, ladder: str) -> None:
    redis, keys = arena.redis, arena.keys
    now = read_pair_counts(redis, keys, ladder)
    whole, _ = read_whole(redis, keys, ladder)
    assert now.version == whole.version and now.names == whole.names
    assert np.array_equal(now.i, whole.i) and np.array_equal(now.j, whole.j)
    assert np.array_equal(now.counts, whole.counts)


def test_counts_from_the_snapshot_and_log_equal_the_whole_hash(
        redis: redis_py.Redis) -> None:
    arena, queue = played_ladder(redis)
    rng = random.Random(5)
    rng.shuffle(queue)
    for number, match_id in enumerate(queue):
        # Record without refitting now and then, so the snapshot falls behind the log.
        if number % 3:
            standings_before = arena.redis.hget(arena.keys.standings("pc"), "version")
            arena.matches.record(match_id, random_result(rng, 4))
            assert arena.redis.hget(arena.keys.standings("pc"), "version") != standings_before
        else:
            record_match(arena.redis, arena.keys, match_id, random_result(rng, 4),
                         fsync_timeout=None)
        assert_same_counts(arena, "pc")
    incremental = standings.update_standings(arena.redis, arena.keys, "pc")
    arena.redis.hdel(arena.keys.standings("pc"), "pairs_meta", "pairs", "pairs_fit_los",
                     "version")
    cold = standings.update_standings(arena.redis, arena.keys, "pc")
    assert incremental.version == cold.version == len(queue)
    assert incremental.rows_json()["standings"] == cold.rows_json()["standings"]
    assert incremental.pairs == cold.pairs and len(cold.pairs) == BOTS * (BOTS - 1) // 2
    status = arena.ladders.status("pc")
    assert status.complete and status.rounds_completed == 2
    assert status.games_toward_target == status.games_target == 8 * len(cold.pairs)


def test_a_ladder_written_by_the_older_arena_reads_the_same(redis: redis_py.Redis) -> None:
    arena, queue = played_ladder(redis)
    rng = random.Random(8)
    half = len(queue) // 2
    for match_id in queue[:half]:
        arena.matches.record(match_id, random_result(rng, 4))
    expected = arena.ladders.leaderboard("pc")
    status = arena.ladders.status("pc")
    # What the older arena left: the crosstable inside the snapshot's JSON, no arrays, and
    # a results log whose entries do not carry their aborted count.
    keys = arena.keys
    arena.redis.hset(keys.standings("pc"), "data", dumps_json(expected.to_json()))
    arena.redis.hdel(keys.standings("pc"), "board")
    first, second = expected.standings[0].version, expected.standings[1].version
    # Mid-upgrade: the older arena's JSON next to arrays a newer one stored before it.
    assert arena.ladders.leaderboard("pc") == expected
    arena.redis.hdel(keys.standings("pc"), "pairs_meta", "pairs", "pairs_fit_los")
    log = keys.results("pc")
    entries = arena.redis.xrange(log)
    arena.redis.delete(log)
    for stream_id, fields in entries:
        fields.pop(b"aborted")
        arena.redis.xadd(log, fields, id=stream_id)
    old = arena.ladders.leaderboard("pc")
    assert old == expected and old.pair(second, first) == expected.pair(second, first)
    assert arena.ladders.status("pc") == status
    # Carry on recording with the new arena: the first refit reads the whole hash, the
    # next ones go on from its arrays, and both agree with a cold read.
    for match_id in queue[half:]:
        arena.matches.record(match_id, random_result(rng, 4))
        assert_same_counts(arena, "pc")
    assert arena.ladders.status("pc").complete
