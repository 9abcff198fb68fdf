"""Round-robin scheduling: the circle method, idempotence, new entrants, retirement, orphans."""

from __future__ import annotations

import itertools
import threading
from collections import Counter

import pytest
import redis as redis_py
from hypothesis import given
from hypothesis import strategies as st

from tacocat.arena import Arena, InvalidArgument, MatchStatus
from tacocat.arena.matches import match_id, match_seed
from tacocat.arena.scheduler import circle_method

from .helpers import Field, make_field

BOTS = [("alice", "greedy"), ("bob", "random"), ("carol", "random2"), ("dave", "passive")]


def four_bot_ladder(redis: redis_py.Redis, **arena_kwargs: object) -> tuple[Field, list[str]]:
    field = make_field(redis, **arena_kwargs)
    field.arena.ladders.create(field.admin, "main", games_per_pairing=40, games_per_match=10)
    versions = []
    for owner, kind in BOTS:
        versions.append(field.add_bot(owner, kind, kind))
        field.arena.ladders.join(field.users[owner], kind, "main")
    return field, sorted(versions)


@given(st.integers(min_value=2, max_value=12))
def test_circle_method_meets_every_pair_once_in_disjoint_turns(n: int) -> None:
    players = [f"p{i}" for i in range(n)]
    turns = circle_method(players)
    assert len(turns) == (n - 1 if n % 2 == 0 else n)
    met = Counter(frozenset(pair) for turn in turns for pair in turn)
    assert set(met) == {frozenset(p) for p in itertools.combinations(players, 2)}
    assert set(met.values()) == {1}
    for turn in turns:
        busy = [p for pair in turn for p in pair]
        assert len(busy) == len(set(busy)) >= n - 1


def test_circle_method_refuses_duplicates() -> None:
    with pytest.raises(InvalidArgument):
        circle_method(["a", "a"])


def test_four_bots_full_round_robin(redis: redis_py.Redis) -> None:
    field, versions = four_bot_ladder(redis)
    arena = field.arena
    first = arena.matches.schedule("main", field.enqueue)
    # rounds_ahead=2: rounds 1 and 2 of all 6 pairings, in circle order: each turn of
    # round 1 is two disjoint matches.
    assert len(first) == 12 and field.queue == [m.id for m in first]
    assert [m.round for m in first] == [1] * 6 + [2] * 6
    for turn in (first[0:2], first[2:4], first[4:6]):
        assert len({m.a for m in turn} | {m.b for m in turn}) == 4
    assert field.run("main") == 24

    everything = arena.matches.of_ladder("main", count=1000)
    assert len(everything) == 24
    expected = {match_id("main", r, a, b)
                for r in range(1, 5) for a, b in itertools.combinations(versions, 2)}
    assert {m.id for m in everything} == expected
    assert all(m.status is MatchStatus.RECORDED and m.games == 10 for m in everything)
    per_pair = Counter((m.a, m.b) for m in everything)
    assert per_pair == dict.fromkeys(itertools.combinations(versions, 2), 4)
    board = arena.ladders.leaderboard("main")
    assert {(p.a, p.b): p.games + p.aborted for p in board.pairs} == dict.fromkeys(
        itertools.combinations(versions, 2), 40)
    status = arena.ladders.status("main")
    assert status.complete and status.rounds_completed == 4
    assert (status.matches_scheduled, status.matches_recorded, status.matches_pending) == \
        (24, 24, 0)
    assert (status.games_played, status.games_target, status.games_toward_target) == \
        (240, 240, 240)
    assert arena.matches.schedule("main", field.enqueue) == []


def test_scheduling_twice_creates_nothing_new(redis: redis_py.Redis) -> None:
    field, _ = four_bot_ladder(redis)
    created = field.arena.matches.schedule("main", field.enqueue)
    assert len(created) == 12
    assert field.arena.matches.schedule("main", field.enqueue) == []
    assert field.arena.matches.schedule("main", field.enqueue, rounds_ahead=None) != []  # the rest
    assert field.arena.matches.schedule("main", field.enqueue, rounds_ahead=None) == []
    assert len(field.queue) == len(set(field.queue)) == 24


def test_concurrent_schedulers_create_each_match_once(redis_url: str,
                                                      redis: redis_py.Redis) -> None:
    four_bot_ladder(redis)
    enqueued: list[str] = []
    lock = threading.Lock()
    barrier = threading.Barrier(6)

    def enqueue(mid: str) -> None:
        with lock:
            enqueued.append(mid)

    def run() -> None:
        arena = Arena(redis_py.Redis.from_url(redis_url))
        barrier.wait()
        arena.matches.schedule("main", enqueue, rounds_ahead=None)

    threads = [threading.Thread(target=run) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(enqueued) == len(set(enqueued)) == 24
    assert Arena(redis).ladders.status("main").matches_scheduled == 24


def test_a_new_entrant_is_scheduled_against_everyone(redis: redis_py.Redis) -> None:
    field, versions = four_bot_ladder(redis)
    arena = field.arena
    field.run("main")
    newcomer = field.add_bot("erin", "greedy", "greedy")
    arena.ladders.join(field.users["erin"], "greedy", "main")
    created = arena.matches.schedule("main", field.enqueue)
    assert {(m.a, m.b) for m in created} == {tuple(sorted((v, newcomer))) for v in versions}
    assert [m.round for m in created] == [1] * 4 + [2] * 4
    field.run("main")
    board = arena.ladders.leaderboard("main")
    for version in versions:
        pair = board.pair(newcomer, version)
        assert pair is not None and pair.games + pair.aborted == 40 and pair.matches == 4
    status = arena.ladders.status("main")
    assert status.complete and status.matches_recorded == 24 + 16
    assert status.games_target == 10 * 40


def test_a_new_version_retires_the_old_one(redis: redis_py.Redis) -> None:
    field, _ = four_bot_ladder(redis)
    arena = field.arena
    arena.matches.schedule("main", field.enqueue)
    old = "alice/greedy@1"
    first = arena.matches.get(field.queue.pop(0))
    assert arena.matches.record(first.id, field.play(first)).recorded
    new = field.add_bot("alice", "greedy", "greedy")
    assert new == "alice/greedy@2"
    pending = arena.matches.of_ladder("main", status=MatchStatus.SCHEDULED, count=100)
    assert pending and all(old not in (m.a, m.b) for m in pending)
    cancelled = arena.matches.of_ladder("main", status=MatchStatus.CANCELLED, count=100)
    assert cancelled and all(old in (m.a, m.b) for m in cancelled)
    created = arena.matches.schedule("main", field.enqueue)
    assert created and all(new in (m.a, m.b) for m in created)
    field.queue[:] = [mid for mid in field.queue
                      if arena.matches.get(mid).status is MatchStatus.SCHEDULED]
    field.run("main")
    board = arena.ladders.leaderboard("main")
    old_row, new_row = board.standing(old), board.standing(new)
    assert old_row is not None and not old_row.active and old_row.games > 0
    assert new_row is not None and new_row.active and new_row.matches == 3 * 4
    status = arena.ladders.status("main")
    assert status.complete and status.matches_cancelled == len(cancelled)


def test_orphans_are_found_and_requeued(redis: redis_py.Redis) -> None:
    now = [1000.0]
    field, _ = four_bot_ladder(redis, clock=lambda: now[0])
    arena = field.arena
    created = arena.matches.schedule("main", field.enqueue)
    done = arena.matches.get(field.queue[0])
    arena.matches.record(done.id, field.play(done))
    assert arena.matches.find_orphans("main", timeout=60) == []
    now[0] += 61
    orphans = arena.matches.find_orphans("main", timeout=60)
    assert set(orphans) == {m.id for m in created} - {done.id}
    # With a job check, a match whose job is gone is an orphan once the grace passed.
    lost = created[5].id
    alive = lambda mid: mid != lost  # noqa: E731
    assert arena.matches.find_orphans("main", job_alive=alive, grace=100) == []
    assert arena.matches.find_orphans("main", job_alive=alive, grace=10) == [lost]
    again: list[str] = []
    assert arena.matches.requeue_orphans("main", again.append, job_alive=alive) == [lost]
    assert again == [lost]
    assert arena.matches.find_orphans("main", job_alive=alive) == []  # just re-enqueued
    assert arena.matches.get(lost).enqueued_at == now[0]
    with pytest.raises(InvalidArgument):
        arena.matches.find_orphans("main")


def test_match_ids_and_seeds_are_deterministic() -> None:
    assert match_id("main", 3, "a/x@1", "b/y@2") == match_id("main", 3, "b/y@2", "a/x@1")
    assert match_id("main", 3, "a/x@1", "b/y@2") != match_id("main", 4, "a/x@1", "b/y@2")
    assert match_id("main", 3, "a/x@1", "b/y@2").startswith("main.3.")
    seed = match_seed("secret", "main", 3, "a/x@1", "b/y@2")
    assert seed == match_seed("secret", "main", 3, "b/y@2", "a/x@1")
    assert seed != match_seed("other", "main", 3, "a/x@1", "b/y@2")


def test_tick_schedules_what_was_asked(redis: redis_py.Redis) -> None:
    field, _ = four_bot_ladder(redis)
    arena = field.arena
    # Submissions asked for a tick of everything, joins for "main": drained at once.
    assert arena.matches.wait_for_tick(timeout=0.1) is None
    assert redis.scard(arena.keys.ticks) == 0 and redis.llen(arena.keys.wake) == 0
    arena.ladders.create(field.admin, "other", games_per_pairing=10, games_per_match=10)
    arena.ladders.join(field.users["bob"], "random", "other")
    assert arena.matches.wait_for_tick(timeout=0.1) == {"other"}
    report = arena.matches.tick(field.enqueue, ladders_due=["main", "gone"])
    assert len(report.scheduled["main"]) == 12 and "gone" not in report.scheduled
    smoke: list[str] = []
    field.arena.bots.submit(field.users["bob"], "newbot", "bot.py", b"x = 1\n")
    report = arena.matches.tick(field.enqueue, enqueue_smoke=smoke.append, orphan_timeout=3600)
    assert smoke == ["bob/newbot@1"] and report.smoke_tests == smoke
    assert report.requeued == {"main": [], "other": []}
