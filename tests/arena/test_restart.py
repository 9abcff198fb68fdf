"""Redis restarted (cleanly, or SIGKILLed) in the middle of a ladder: nothing committed is
lost, duplicates stay no-ops, and the ladder finishes."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import pytest
import redis as redis_py
from redis.backoff import NoBackoff
from redis.retry import Retry

from tacocat.arena import Arena, ArenaError, MatchStatus, RedisUnavailable, decompress_replays
from tacocat.arena._valkey import EmbeddedValkey

from .helpers import Field, make_field, snapshot

ValkeyFactory = Callable[..., EmbeddedValkey]


def start_ladder(server: EmbeddedValkey) -> tuple[Field, redis_py.Redis]:
    client = redis_py.Redis.from_url(server.url)
    field = make_field(client)
    field.arena.ladders.create(field.admin, "main", games_per_pairing=40, games_per_match=10)
    for owner, kind in [("alice", "greedy"), ("bob", "random"), ("carol", "passive"),
                        ("dave", "random2")]:
        field.add_bot(owner, kind, kind)
        field.arena.ladders.join(field.users[owner], kind, "main")
    field.arena.matches.schedule("main", field.enqueue)
    return field, client


def play_some(field: Field, count: int) -> list[str]:
    done = []
    for _ in range(count):
        match = field.arena.matches.get(field.queue.pop(0))
        assert field.arena.matches.record(match.id, field.play(match),
                                          enqueue=field.enqueue).recorded
        done.append(match.id)
    return done


def finish_and_check(field: Field, recorded_before: list[str]) -> None:
    arena = field.arena
    for mid in recorded_before:  # a worker that re-runs a job after the outage
        match = arena.matches.get(mid)
        assert not arena.matches.record(mid, field.play(match)).recorded
    field.run("main")
    status = arena.ladders.status("main")
    assert status.complete and status.matches_recorded == 24 and status.games_played == 240
    assert all(m.status is MatchStatus.RECORDED
               for m in arena.matches.of_ladder("main", count=100))
    assert arena.ladders.recompute_ratings("main").consistent
    board = arena.ladders.leaderboard("main")
    assert board.version == 24
    assert sum(s.games + s.aborted for s in board.standings) == 2 * 240


@pytest.mark.parametrize("crash", [False, True], ids=["clean-restart", "sigkill"])
def test_redis_restart_mid_ladder_loses_nothing(valkey_factory: ValkeyFactory,
                                                crash: bool) -> None:
    server = valkey_factory()
    server.start()
    field, client = start_ladder(server)
    done = play_some(field, 7)
    admin_token = field.arena.users.create_token(field.admin)
    before = snapshot(client)
    if crash:
        server.kill()  # acknowledged writes are in the append-only file already
        server.start()
    else:
        server.restart()
    # The same client reconnects (redis-py retries), and the Lua scripts are re-loaded.
    assert snapshot(client) == before
    assert field.arena.users.authenticate(admin_token).admin
    finish_and_check(field, done)
    # A fresh process (a new client, a new Arena) sees the same finished ladder.
    fresh = Arena(redis_py.Redis.from_url(server.url))
    assert fresh.ladders.status("main").complete
    client.close()


def test_a_dead_redis_is_reported_as_unavailable(valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    client = redis_py.Redis.from_url(server.url, retry=Retry(NoBackoff(), 1))
    arena = Arena(client)
    assert arena.users.bootstrap_admin() is not None
    server.kill()
    with pytest.raises(RedisUnavailable, match="Redis did not answer"):
        arena.ladders.all()
    # Every area turns it into the one error, reads and writes alike.
    for call in (lambda: arena.users.get("admin"), arena.bots.all,
                 lambda: arena.matches.get("main.1.0123456789abcdef"),
                 lambda: arena.live.matches("main"), lambda: arena.bots.reject("a/b@1", "crash")):
        with pytest.raises(RedisUnavailable, match="Redis did not answer"):
            call()
    server.start()
    assert arena.ladders.all() == []
    client.close()


def test_every_public_area_method_reports_a_lost_redis_as_unavailable() -> None:
    arena = Arena(redis_py.Redis())
    areas = [arena.users, arena.bots, arena.ladders, arena.matches, arena.live]
    unwrapped = [f"{type(area).__name__}.{name}" for area in areas
                 for name, member in vars(type(area)).items()
                 if callable(member) and not name.startswith("_")
                 and not hasattr(member, "__wrapped__")]
    assert unwrapped == []
    assert sum(1 for area in areas for name in vars(type(area))
               if not name.startswith("_")) >= 55  # the areas' whole API is counted


def test_redis_killed_while_a_worker_records(valkey_factory: ValkeyFactory) -> None:
    """A worker keeps recording while Redis is SIGKILLed twice; it retries what failed, as
    RQ would re-run the job, and the ladder ends complete and counted once."""
    server = valkey_factory()
    server.start()
    field, client = start_ladder(server)
    worker = Arena(redis_py.Redis.from_url(server.url, retry=Retry(NoBackoff(), 0)))
    failures: list[str] = []
    recorded = threading.Semaphore(0)
    failed = threading.Semaphore(0)
    stop = threading.Event()

    def work() -> None:
        while not stop.is_set():
            if not field.queue:
                time.sleep(0.01)
                continue
            mid = field.queue[0]
            try:
                match = worker.matches.get(mid)
                worker.matches.record(mid, field.play(match), enqueue=field.enqueue)
                field.queue.pop(0)
                recorded.release()
                if worker.ladders.status("main").complete:
                    return
            except (ArenaError, redis_py.RedisError) as exc:
                failures.append(type(exc).__name__)
                failed.release()
                time.sleep(0.02)
                continue  # the job runs again

    thread = threading.Thread(target=work)
    thread.start()
    try:
        for _ in range(2):
            # Kill only once the worker is mid-ladder, and restart only once it has felt the
            # outage, so the interruption is certain rather than a matter of timing.
            assert recorded.acquire(timeout=30), "the worker recorded nothing"
            server.kill()
            assert failed.acquire(timeout=30), "the worker never noticed Redis was gone"
            server.start()
        thread.join(timeout=60)
    finally:
        stop.set()
        thread.join()
    assert failures, "the outage should have interrupted the worker at least once"
    finish_and_check(field, [])
    client.close()


def test_a_match_recorded_just_before_a_redis_kill_is_not_live_after_the_restart(
        valkey_factory: ValkeyFactory) -> None:
    server = valkey_factory()
    server.start()
    field, client = start_ladder(server)
    arena = field.arena
    recorded, playing = (arena.matches.get(field.queue.pop(0)) for _ in range(2))
    result = field.play(recorded)
    for match in (recorded, playing):
        arena.live.start(match, "worker-1")
    arena.live.add_games(recorded, [r.dumps() for r in decompress_replays(result.replays)])
    assert arena.matches.record(recorded.id, result).recorded
    # Killed before the worker's end_live could reach it: the record alone ended the entry.
    server.kill()
    server.start()
    assert [m.id for m in arena.live.matches("main")] == [playing.id]
    assert arena.live.match(recorded.id)[1] is None
    assert arena.live.match(playing.id)[1] is not None

    # A late duplicate run starts (and feeds) the live copy of a match recorded meanwhile:
    # never shown, and its leftovers go at the first read.
    arena.live.start(recorded, "worker-late")
    assert [m.id for m in arena.live.matches("main")] == [playing.id]
    assert arena.live.match(recorded.id)[1] is None
    assert not client.exists(arena.keys.live_match("main", recorded.id),
                             arena.keys.live_games("main", recorded.id))
