"""The match and smoke-test jobs, run in this process against a real Redis and real
(sandboxed where possible) bot processes; the RQ worker processes are test_worker's."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
import redis as redis_py

from tacocat.arena import MatchStatus
from tacocat.engine import STANDARD, Fault, Reason, duplicate_pairs
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.referee import play_in_process
from tacocat.worker import (
    BotSpec,
    Dispatcher,
    JobContext,
    Launcher,
    MatchError,
    MatchPlayer,
    MatchQueue,
    WorkerSettings,
    match_job_id,
    run_match,
    run_smoke_test,
)
from tacocat.worker.dispatcher import lock_key
from tacocat.worker.jobs import _LiveFeed
from tacocat.worker.queue import lease_key, match_of_job

from .worker_helpers import SANDBOX, exits_at_import, good_bot, make_field, source

pytestmark = pytest.mark.timeout(60)

SETTINGS = WorkerSettings(smoke_decision_seconds=0.5, lease=3, sandbox=SANDBOX)
CONTEXT = JobContext(SETTINGS, Launcher(SETTINGS.sandbox_policy(), sandbox=SANDBOX), "test")

ILLEGAL = source("""
    from tacocat.engine.bots import GreedyBot


    class Illegal(GreedyBot):
        def duel(self, obs):
            return 99
""")
CRASH_ON_DUEL = source("""
    from tacocat.engine.bots import GreedyBot


    class Crash(GreedyBot):
        def duel(self, obs):
            raise SystemExit(5)
""")


def _bot(folder: Path, name: str, data: bytes) -> BotSpec:
    folder.mkdir(mode=0o755)
    path = folder / "bot.py"
    path.write_bytes(data)
    path.chmod(0o644)
    return BotSpec(name, folder)


def test_a_match_job_plays_the_matchs_seeds_and_seats_and_records_it_once(
        redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=6, games_per_match=6)
    versions = [field.submit("ann", "greedy", good_bot("g", "GreedyBot")),
                field.submit("bob", "random", good_bot("r", "RandomBot"))]
    for version in versions:
        arena.bots.activate(version)
    field.join("ann", "greedy", "main")
    field.join("bob", "random", "main")
    queued: list[str] = []
    (match,) = arena.matches.schedule("main", queued.append)

    report = run_match(arena, None, match.id, CONTEXT)

    assert report.outcome == "recorded" and report.games == 6
    assert report.game_seconds > 0 and report.seconds >= report.game_seconds
    # The same bots in this process, same seeds and seating: the same games, move for move.
    bots = {versions[0]: GreedyBot, versions[1]: RandomBot}
    expected = [g.record for g in play_in_process(bots[match.a], bots[match.b], match.schedule(),
                                                  names=(match.a, match.b)).games]
    assert [r.dumps() for r in arena.matches.replays(match.id)] == [r.dumps() for r in expected]
    assert arena.matches.get(match.id).status is MatchStatus.RECORDED
    again = run_match(arena, None, match.id, CONTEXT)
    assert again.outcome == "skipped" and "recorded" in again.detail
    assert arena.ladders.status("main").matches_recorded == 1


def test_unknown_matches_are_skipped(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    assert run_match(field.arena, None, "main.1.0123456789abcdef", CONTEXT).outcome == "skipped"


def test_a_failing_bot_is_restarted_then_forfeits_the_rest_of_the_match(tmp_path: Path) -> None:
    good = _bot(tmp_path / "good", "good@1", good_bot("good"))
    bad = _bot(tmp_path / "bad", "bad@1", CRASH_ON_DUEL)
    with MatchPlayer(CONTEXT.launcher, good, bad, STANDARD, time_limit=1.0,
                     max_strikes=2, batch=4) as player:
        played = player.play(duplicate_pairs(12, "s"))
    _, side = played.sides
    assert side.restarts == 2 and len(side.failures) == 2
    assert side.gave_up is not None and side.gave_up.fault is Fault.CRASH
    for index, record in enumerate(played.records):
        outcome = record.result
        assert outcome.reason is Reason.FORFEIT and outcome.fault is Fault.CRASH
        assert outcome.offender == 1 - played.a_seats[index]
        # Games 0-3 start at once: the crash forfeits game 0, the one it was deciding; games
        # 1-3 are played again, one at a time after that strike: game 1 crashes again, and
        # it gives up. As with batch 1.
        assert ("gave up after 2 faults in a row" in outcome.detail) == (index >= 2), \
            outcome.detail
    assert "its process exited" in played.records[0].result.detail
    assert "exited with code 5" not in played.records[0].result.detail  # its owner's only


def test_illegal_actions_forfeit_games_without_restarting_the_bot(tmp_path: Path) -> None:
    good = _bot(tmp_path / "good", "good@1", good_bot("good"))
    bad = _bot(tmp_path / "bad", "bad@1", ILLEGAL)
    with MatchPlayer(CONTEXT.launcher, good, bad, STANDARD, time_limit=1.0,
                     max_strikes=1) as player:
        played = player.play(duplicate_pairs(4, "s"))
    assert played.sides[1].restarts == 0 and played.timings.starts == 2
    assert [f.fault for f in played.sides[1].failures] == [Fault.ILLEGAL_ACTION] * 4
    assert all(r.result.fault is Fault.ILLEGAL_ACTION for r in played.records)


def test_two_bots_that_cannot_start_fail_the_job_not_the_bots(tmp_path: Path) -> None:
    a = _bot(tmp_path / "a", "a@1", exits_at_import())
    b = _bot(tmp_path / "b", "b@1", exits_at_import())
    with pytest.raises(MatchError, match="neither bot process started"), \
            MatchPlayer(CONTEXT.launcher, a, b, STANDARD, time_limit=1.0) as player:
        player.play(duplicate_pairs(2, "s"))


def test_smoke_tests_activate_good_bots_and_reject_broken_ones_with_a_reason(
        redis: redis_py.Redis) -> None:
    field = make_field(redis)
    good = field.submit("ann", "good", good_bot("good"))
    dead = field.submit("ann", "dead", exits_at_import())
    illegal = field.submit("ann", "illegal", ILLEGAL)
    assert run_smoke_test(field.arena, good, CONTEXT).outcome == "activated"
    report = run_smoke_test(field.arena, dead, CONTEXT)
    assert report.outcome == "rejected" and "did not start" in report.reason
    assert "its process exited" in field.arena.bots.version(dead).reason
    report = run_smoke_test(field.arena, illegal, CONTEXT)
    assert report.outcome == "rejected" and "illegal_action" in report.reason
    assert "house:random" in report.reason
    assert run_smoke_test(field.arena, good, CONTEXT).outcome == "skipped"


def test_enqueuing_is_idempotent_and_liveness_needs_a_lease(redis: redis_py.Redis) -> None:
    queue = MatchQueue(redis)
    match = "main.2.0123456789abcdef"
    assert match_of_job(match_job_id(match)) == match
    assert match_of_job("smoke-abc") is None
    assert not queue.job_alive(match)
    assert queue.enqueue_match(match) and not queue.enqueue_match(match)
    assert queue.job_alive(match) and queue.matches.count == 1
    key = f"rq:job:{match_job_id(match)}"
    redis.hset(key, "status", "started")  # as RQ marks it when a worker takes it
    assert not queue.job_alive(match)  # ... but no worker holds its lease: a dead worker
    redis.set(lease_key(queue.prefix, match), "w1", px=3000)
    assert queue.job_alive(match)
    redis.delete(lease_key(queue.prefix, match))
    assert queue.enqueue_match(match)  # the dead job is replaced
    assert redis.hget(key, "status") == b"queued"
    # Popped off the queue by a worker that died (or lost Redis) before marking it started:
    # "queued" in no queue is dead too, or nothing would ever run it.
    assert redis.lpop(queue.matches.key) == match_job_id(match).encode()
    assert queue.job_alive(match)  # a worker may be starting it right now ...
    queue.stray_grace = 0.05
    time.sleep(0.1)
    assert not queue.job_alive(match)  # ... but not for that long
    assert queue.enqueue_match(match) and queue.job_alive(match)
    other = "main.2.fedcba9876543210"
    redis.hset(key, "status", "started")  # its worker died: handed out again, first in line
    assert queue.enqueue_match(other) and queue.requeue_match(match)
    assert queue.matches.job_ids == [match_job_id(match), match_job_id(other)]


def test_one_dispatcher_is_active_at_a_time(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    queue = MatchQueue(redis)
    first = Dispatcher(field.arena, queue, wait=0.1, lock_ttl=1.0)
    second = Dispatcher(field.arena, queue, wait=0.1, lock_ttl=1.0)
    assert first.step() is not None and second.step() is None
    assert first.step() is not None  # the holder renews
    first.release()
    assert second.step() is not None and first.step() is None
    time.sleep(1.2)  # a holder that stops renewing loses the lock to the next one
    assert first.step() is not None and not second._hold()


def test_a_dispatcher_that_loses_its_lock_says_why_and_what_to_do(
        redis: redis_py.Redis, caplog: pytest.LogCaptureFixture) -> None:
    field = make_field(redis)
    queue = MatchQueue(redis)
    caplog.set_level(logging.INFO, "tacocat.worker")
    chief = Dispatcher(field.arena, queue, wait=0.1, lock_ttl=1.0)

    def told() -> str:
        text = caplog.text
        caplog.clear()
        return text

    # Stalled (here: not called) for longer than the TTL, with no other candidate.
    assert chief.step() is not None
    time.sleep(1.3)
    assert chief.step() is not None
    text = told()
    assert "this process did not run for 1." in text and "longer than the lock's 1 s TTL" in text
    assert "took it again (no other dispatcher held it)" in text
    assert "another worker" not in text

    # Redis refuses writes (here: it wants a replica it does not have) until the lock
    # expires: that is what is said, not a stall.
    redis.config_set("min-replicas-to-write", 1)
    try:
        with pytest.raises(redis_py.ResponseError, match="NOREPLICAS"):
            chief.step()
        time.sleep(1.3)
    finally:
        redis.config_set("min-replicas-to-write", 0)
    assert chief.step() is not None
    text = told()
    assert "its renewal could not be written (Redis refuses writes (NOREPLICAS" in text
    assert "nothing was scheduled or re-enqueued meanwhile" in text
    assert "did not run" not in text and "took it again" in text

    # Another process took it: say so, and who dispatches now.
    other = Dispatcher(field.arena, queue, wait=0.1, lock_ttl=1.0)
    redis.delete(lock_key("tacocat:"))
    assert other.step() is not None
    assert chief.step() is None
    text = told()
    assert "another process deleted or took it" in text
    assert "another worker holds it now and dispatches" in text


def test_the_dispatcher_lock_lasts_a_lease_and_is_renewed_thrice_per_ttl(
        redis: redis_py.Redis) -> None:
    field = make_field(redis)
    chief = Dispatcher(field.arena, MatchQueue(redis), wait=10.0, lock_ttl=3.0)
    started = time.monotonic()
    assert chief.step() is not None
    # A quiet pass blocks a third of the TTL, not the whole wait: the lock never lapses.
    assert 0.5 < time.monotonic() - started < 6
    assert 0 < redis.pttl(lock_key("tacocat:")) <= 3000


def test_settings_travel_as_json_and_are_checked() -> None:
    settings = WorkerSettings(pinning="bots", lease=4, max_strikes=2)
    assert WorkerSettings.from_json(settings.to_json()) == settings
    assert settings.monitor_interval == 1
    with pytest.raises(ValueError, match="pinning"):
        WorkerSettings(pinning="sometimes")
    with pytest.raises(ValueError, match="unknown worker settings"):
        WorkerSettings.from_json('{"colour": "blue"}')


def test_tacocat_worker_explains_itself(capsys: pytest.CaptureFixture[str]) -> None:
    from tacocat.cli import main  # noqa: PLC0415

    with pytest.raises(SystemExit) as exited:
        main(["worker", "--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    for words in ("RQ worker processes", "dispatcher", "sandbox", "--workers", "REDIS_URL",
                  "Ctrl-C", "--insecure-no-sandbox", "--pin"):
        assert words in text, words


def test_a_match_gives_the_same_records_for_every_batch_size(tmp_path: Path) -> None:
    """The same sandboxed match at K = 1, 7 and the default: byte-identical records, and
    the same as in one process."""
    a = _bot(tmp_path / "a", "a@1", good_bot("a", "RandomBot"))
    b = _bot(tmp_path / "b", "b@1", good_bot("b"))
    schedule = duplicate_pairs(14, "batches")
    jsonl = []
    for batch in (1, 7, WorkerSettings().batch):
        with MatchPlayer(CONTEXT.launcher, a, b, STANDARD, time_limit=2.0,
                         batch=batch) as player:
            played = player.play(schedule)
        assert not played.sides[0].failures and not played.sides[1].failures
        jsonl.append("\n".join(r.dumps() for r in played.records))
    local = play_in_process(RandomBot, GreedyBot, schedule, names=("a@1", "b@1"))
    assert jsonl[0] == jsonl[1] == jsonl[2] == "\n".join(g.record.dumps() for g in local.games)


def test_watchers_get_every_game_in_few_sends_and_the_replays_are_the_same_lines(
        redis: redis_py.Redis, monkeypatch: pytest.MonkeyPatch) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=20, games_per_match=20)
    for user, name, cls in (("ann", "greedy", "GreedyBot"), ("bob", "random", "RandomBot")):
        arena.bots.activate(field.submit(user, name, good_bot(name[0], cls)))
        field.join(user, name, "main")
    queued: list[str] = []
    (match,) = arena.matches.schedule("main", queued.append)
    sends: list[tuple[int, int]] = []  # (lines in the send, games the live copy then shows)
    add_live_games = arena.live.add_games

    def watched_send(live_match: Any, lines: Sequence[str]) -> None:
        add_live_games(live_match, lines)  # the real thing, into the real Redis
        shown = arena.live.match(live_match.id)[1]
        assert shown is not None
        sends.append((len(lines), shown.games))
        assert len(arena.live.games(live_match)) == shown.games

    monkeypatch.setattr(arena.live, "add_games", watched_send)
    ticks = [0]
    tick = _LiveFeed.tick

    def counted_tick(feed: _LiveFeed) -> None:
        ticks[0] += 1
        tick(feed)

    monkeypatch.setattr(_LiveFeed, "tick", counted_tick)
    report = run_match(arena, None, match.id, CONTEXT)

    assert report.outcome == "recorded" and report.games == 20
    # The feed hears of every decision too (a game held back must not wait for the next
    # game's end): far more often than games end.
    assert ticks[0] > 20 * 10
    # Every game reached the live copy, counted as it went, in fewer sends than games.
    assert sum(n for n, _ in sends) == 20
    assert [shown for _, shown in sends] == list(accumulate(n for n, _ in sends))
    assert sends[0][0] == 1  # the first game goes out at once
    assert len(sends) < 20
    assert arena.live.match(match.id)[1] is None  # gone once the match is recorded
    assert len(arena.matches.replays(match.id)) == 20


def test_the_live_feed_sends_at_most_every_quarter_second_and_the_rest_on_flush() -> None:
    now = [0.0]
    sent: list[list[str]] = []
    feed = _LiveFeed(sent.append, clock=lambda: now[0])
    games = play_in_process(GreedyBot, RandomBot, duplicate_pairs(3, "feed")).games
    for at, game in zip((0.0, 0.1, 0.3), games, strict=True):
        now[0] = at
        feed.add(game)
    assert sent == [[games[0].record.dumps()], [g.record.dumps() for g in games[1:3]]]
    now[0] = 0.35
    extra = play_in_process(GreedyBot, RandomBot, duplicate_pairs(1, "more")).games[0]
    feed.add(extra)
    assert len(sent) == 2  # 0.05 s after the last send: it waits
    feed.flush()
    feed.flush()  # nothing left: nothing sent
    assert sent[2:] == [[extra.record.dumps()]]
    assert feed.lines[id(extra.record)] == (extra.record, extra.record.dumps())


def test_a_game_held_back_goes_out_at_the_first_decision_past_the_quarter_second() -> None:
    now = [0.0]
    sent: list[list[str]] = []
    feed = _LiveFeed(sent.append, clock=lambda: now[0])
    first, second = play_in_process(GreedyBot, RandomBot, duplicate_pairs(2, "tick")).games
    feed.add(first)
    now[0] = 0.1
    feed.add(second)  # held back: the next game may be a whole game away
    now[0] = 0.2
    feed.tick()
    assert sent == [[first.record.dumps()]]
    now[0] = 0.26
    feed.tick()
    assert sent == [[first.record.dumps()], [second.record.dumps()]]
    feed.tick()
    feed.flush()
    assert len(sent) == 2  # nothing held: nothing more sent
