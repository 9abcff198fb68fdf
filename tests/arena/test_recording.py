"""Exactly-once recording, live Elo in commit order, and its exact recomputation."""

from __future__ import annotations

import json
import multiprocessing
import threading
import time
from dataclasses import replace

import pytest
import redis as redis_py

from tacocat.arena import (
    Arena,
    InvalidArgument,
    MatchGameResult,
    MatchResult,
    MatchStatus,
    NotFound,
)
from tacocat.arena.ratings import elo_update
from tacocat.arena.recording import INITIAL_ELO
from tacocat.engine import Fault, Reason
from tacocat.models import ModelError

from .helpers import Field, make_field, record_in_process


def ladder(redis: redis_py.Redis, bots: int = 4, *, pairing: int = 20,
           per_match: int = 10) -> Field:
    field = make_field(redis)
    field.arena.ladders.create(field.admin, "main", games_per_pairing=pairing,
                               games_per_match=per_match)
    kinds = ["greedy", "random", "random2", "passive"]
    for i in range(bots):
        owner = f"user{i}"
        field.add_bot(owner, "bot", kinds[i % len(kinds)])
        field.arena.ladders.join(field.users[owner], "bot", "main")
    return field


def all_a_wins(games: int) -> MatchResult:
    return MatchResult(tuple(MatchGameResult(i % 2, Reason.GOAL, "a") for i in range(games)), 1.0)


def elo_after(scores: list[float]) -> tuple[float, float]:
    a, b = INITIAL_ELO, INITIAL_ELO
    for score in scores:
        a, b = elo_update(a, b, score)
    return a, b


def test_a_result_is_recorded_once(redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    arena = field.arena
    (match, *_) = arena.matches.schedule("main", field.enqueue)
    result = field.play(match)
    first = arena.matches.record(match.id, result)
    assert first.recorded and first.seq == 1
    assert first.persisted is True  # the embedded server's append-only file was fsynced
    assert first.match.status is MatchStatus.RECORDED and first.match.result is not None
    assert first.match.result.games == result.games
    again = arena.matches.record(match.id, all_a_wins(10))
    assert not again.recorded and again.seq == 1
    assert arena.matches.get(match.id).result == replace(result, replays=b"")
    assert redis.xlen(arena.keys.results("main")) == 1
    stored = arena.ladders.recompute_ratings("main").stored
    assert (stored[match.a], stored[match.b]) == elo_after(result.rated_scores())
    status = arena.ladders.status("main")
    assert (status.matches_recorded, status.games_played) == (1, 10)


def test_without_an_append_only_file_a_result_is_recorded_but_not_called_persisted(
        redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    redis.config_set("appendonly", "no")
    try:
        done = field.arena.matches.record(match.id, field.play(match))
    finally:
        redis.config_set("appendonly", "yes")
    assert done.recorded and done.persisted is None


def test_concurrent_duplicates_from_threads_record_one_result(redis_url: str,
                                                              redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    real = field.play(match)
    candidates = [real, all_a_wins(10)] * 4
    outcomes: list[bool] = []
    barrier = threading.Barrier(len(candidates))

    def run(result: MatchResult) -> None:
        arena = Arena(redis_py.Redis.from_url(redis_url))
        barrier.wait()
        outcomes.append(arena.matches.record(match.id, result).recorded)

    threads = [threading.Thread(target=run, args=(c,)) for c in candidates]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == [False] * 7 + [True]
    stored = field.arena.matches.get(match.id).result
    assert stored is not None
    winner = real if stored.games == real.games else all_a_wins(10)
    ratings = field.arena.ladders.recompute_ratings("main")
    assert ratings.consistent and ratings.version == 1
    assert (ratings.stored[match.a], ratings.stored[match.b]) == elo_after(
        winner.rated_scores())
    board = field.arena.ladders.leaderboard("main")
    row = board.standing(match.a)
    assert row is not None and (row.wins, row.ties, row.losses) == (
        winner.wins, winner.ties, winner.losses)


def test_concurrent_duplicates_from_processes_record_one_result(redis_url: str,
                                                                redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    result = field.play(match)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(4)
    outcomes = context.Queue()
    processes = [
        context.Process(target=record_in_process, args=(
            redis_url, match.id, result.summary_json(), result.replays, barrier, outcomes))
        for _ in range(4)
    ]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    assert sorted(outcomes.get(timeout=5) for _ in processes) == [False, False, False, True]
    assert redis.xlen(field.arena.keys.results("main")) == 1
    assert field.arena.ladders.recompute_ratings("main").consistent
    assert field.arena.ladders.status("main").games_played == 10


def test_concurrent_different_matches_commit_in_one_order(redis_url: str,
                                                          redis: redis_py.Redis) -> None:
    field = ladder(redis, 4, pairing=40)
    created = field.arena.matches.schedule("main", field.enqueue, rounds_ahead=None)
    results = {m.id: field.play(m) for m in created}
    barrier = threading.Barrier(len(created))

    def run(match_id: str) -> None:
        arena = Arena(redis_py.Redis.from_url(redis_url))
        barrier.wait()
        assert arena.matches.record(match_id, results[match_id]).recorded

    threads = [threading.Thread(target=run, args=(m.id,)) for m in created]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    arena = field.arena
    log = arena.ladders.recent_matches("main", count=100)
    assert sorted(e.seq for e in log) == list(range(1, len(created) + 1))
    assert {e.match for e in log} == set(results)
    replay = arena.ladders.recompute_ratings("main")
    assert replay.consistent and replay.version == len(created)
    assert sum(replay.stored.values()) == pytest.approx(4 * INITIAL_ELO)  # zero-sum


def test_recompute_reproduces_live_elo_exactly(redis: redis_py.Redis) -> None:
    field = ladder(redis, 4, pairing=60)
    assert field.run("main") == 6 * 6
    replay = field.arena.ladders.recompute_ratings("main")
    assert replay.version == 36
    assert replay.stored and replay.consistent
    for version, rating in replay.recomputed.items():
        assert rating.hex() == replay.stored[version].hex()  # bit for bit
    # A damaged rating is detected, and store=True repairs it from the log.
    victim = next(iter(replay.stored))
    redis.hset(field.arena.keys.elo("main"), victim, "1234.5")
    assert not field.arena.ladders.recompute_ratings("main").consistent
    repaired = field.arena.ladders.recompute_ratings("main", store=True)
    assert repaired.consistent and field.arena.ladders.recompute_ratings("main").consistent


def test_results_are_checked_against_the_match(redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    with pytest.raises(InvalidArgument, match="has 10 games but the result holds 4"):
        field.arena.matches.record(match.id, all_a_wins(4))
    with pytest.raises(NotFound):
        field.arena.matches.record("main.1.0000000000000000", all_a_wins(10))
    with pytest.raises(InvalidArgument, match=r"LADDER\.ROUND\.DIGEST"):
        field.arena.matches.record("nonsense", all_a_wins(10))
    with pytest.raises(ModelError, match="winner must be 'a'"):
        MatchGameResult(0, Reason.FORFEIT, "b", Fault.TIMEOUT, "b")
    with pytest.raises(ModelError, match="needs its fault"):
        MatchGameResult(0, Reason.FORFEIT, "a", offender="b")


def test_a_cancelled_match_that_was_played_anyway_is_recorded(redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    field.add_bot("user0", "bot", "greedy")  # a new version retires user0/bot@1
    assert field.arena.matches.get(match.id).status is MatchStatus.CANCELLED
    assert field.arena.ladders.status("main").matches_cancelled == 2
    assert field.arena.matches.record(match.id, field.play(match)).recorded
    status = field.arena.ladders.status("main")
    assert (status.matches_cancelled, status.matches_recorded) == (1, 1)


def test_replays_are_kept_compressed_and_replay(redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    result = field.play(match)
    field.arena.matches.record(match.id, result)
    records = field.arena.matches.replays(match.id)
    assert len(records) == 10
    assert field.arena.matches.replays_blob(match.id) == result.replays
    assert len(result.replays) < sum(len(r.dumps()) for r in records) / 3
    for index, record in enumerate(records):
        record.replay()
        planned = match.schedule()[index]
        assert record.seed == planned.seed == f"{match.seed}/{index // 2}"
        assert record.players[planned.a_seat] == match.a


def test_every_commit_is_announced_with_its_version(redis: redis_py.Redis) -> None:
    field = ladder(redis, 3)
    arena = field.arena
    pubsub = redis.pubsub(ignore_subscribe_messages=True)  # type: ignore[no-untyped-call]
    pubsub.subscribe(arena.ladders.events_channel("main"))
    created = arena.matches.schedule("main", field.enqueue)
    for match in created[:2]:
        arena.matches.record(match.id, field.play(match))
    events: list[dict[str, object]] = []
    deadline = time.monotonic() + 5
    while len(events) < 5 and time.monotonic() < deadline:
        message = pubsub.get_message(timeout=0.5)
        if message is not None:
            events.append(json.loads(message["data"]))
    pubsub.close()
    assert events == [
        {"event": "scheduled", "ladder": "main", "matches": len(created)},
        {"event": "result", "ladder": "main", "version": 1, "match": created[0].id},
        {"event": "standings", "ladder": "main", "version": 1},
        {"event": "result", "ladder": "main", "version": 2, "match": created[1].id},
        {"event": "standings", "ladder": "main", "version": 2},
    ]


def test_aborted_games_are_kept_but_not_rated(redis: redis_py.Redis) -> None:
    field = ladder(redis, 2)
    (match, *_) = field.arena.matches.schedule("main", field.enqueue)
    games = [MatchGameResult(i % 2, Reason.GOAL, "a") for i in range(8)]
    games += [MatchGameResult(0, Reason.ABORTED, None), MatchGameResult(1, Reason.ABORTED, None)]
    result = MatchResult(tuple(games), 2.0)
    assert (result.wins, result.ties, result.losses, result.aborted) == (8, 0, 0, 2)
    field.arena.matches.record(match.id, result)
    row = field.arena.ladders.leaderboard("main").standing(match.a)
    assert row is not None and (row.games, row.wins, row.aborted) == (8, 8, 2)
    stored = field.arena.ladders.recompute_ratings("main").stored
    assert stored[match.a] == elo_after([1.0] * 8)[0]
