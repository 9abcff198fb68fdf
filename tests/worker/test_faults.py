"""Fault tests on real worker processes: a worker SIGKILLed mid-match, one match played twice
at once, and hostile submissions (infinite loop, sleeper, memory hog, garbage on the protocol
pipe, sudden exit) both at their smoke test and inside ladder matches."""

from __future__ import annotations

import os
import signal
import tempfile
import time
from pathlib import Path

import pytest
import redis as redis_py
from rq.job import Job

from tacocat.arena import Arena, MatchStatus
from tacocat.engine import Fault, Reason
from tacocat.worker import MatchQueue, match_job_id, worker_stats
from tacocat.worker.dispatcher import lock_key
from tacocat.worker.queue import MATCH_JOB, lease_key
from tacocat_lab.chaos.procs import cmdline

from .worker_helpers import (
    HOSTILE,
    Trees,
    alive,
    children_of,
    exits_at_import,
    good_bot,
    hostile_bot,
    make_field,
    parent,
    slow_bot,
    source,
    wait_decided,
    wait_for,
    wait_ladder_done,
)

pytestmark = pytest.mark.timeout(150)


def test_a_worker_killed_mid_match_takes_its_bots_along_and_the_match_is_rerun_once(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=24, games_per_match=24)
    versions = [field.submit("ann", "slow", slow_bot("a", 0.004)),
                field.submit("bob", "slow", slow_bot("b", 0.004))]
    tree = trees(workers=2)
    field.join("ann", "slow", "main")
    field.join("bob", "slow", "main")
    assert wait_decided(arena, versions) == dict.fromkeys(versions, "")
    (match,) = wait_for(lambda: arena.matches.of_ladder("main"), 20, "the match")
    holder = wait_for(lambda: redis.get(lease_key("tacocat:", match.id)), 20, "a lease")
    worker = int(holder.decode().rsplit("-", 2)[1])
    # Both bots, not just the first one up: the second may start a moment later.
    family = wait_for(lambda: len([p for p in children_of(worker)
                                   if "tacocat.sdk.host" in cmdline(p)]) >= 2
                      and children_of(worker), 10, "the match's two bot processes")
    assert sum("tacocat.sdk.host" in cmdline(p) for p in family) >= 2

    horse_folders = [f for f in Path(tempfile.gettempdir()).glob("tacocat-match-*-*")
                     if f.name.split("-")[2].isdigit() and int(f.name.split("-")[2]) in family]
    assert horse_folders, "the horse's match folder, named after it"

    os.kill(worker, signal.SIGKILL)

    wait_for(lambda: not any(alive(p) for p in family), 5,
             "the work horse and the bots to die with their worker")
    # The killed horse could not remove its folder (both bots' sources): the supervisor's
    # sweep (every 3 s) or the restarted worker's removes it within seconds.
    wait_for(lambda: not any(f.exists() for f in horse_folders), 10,
             "the dead horse's folder to be removed")
    wait_ladder_done(arena, "main", timeout=90)
    assert arena.matches.get(match.id).status is MatchStatus.RECORDED
    assert [e.match for e in arena.ladders.recent_matches("main")] == [match.id]
    assert arena.ladders.status("main").games_played == 24
    assert "re-enqueued 1 orphaned match in main" in tree.text
    assert "exited with SIGKILL; restarting" in tree.text


def _slow_ladder(redis: redis_py.Redis) -> Arena:
    """Ladder ``main``: one match of 24 games between two active slow bots."""
    field = make_field(redis)
    field.arena.ladders.create(field.admin, "main", games_per_pairing=24, games_per_match=24)
    for owner, tag in (("ann", "a"), ("bob", "b")):
        field.arena.bots.activate(field.submit(owner, "slow", slow_bot(tag, 0.004)))
        field.join(owner, "slow", "main")
    return field.arena


def test_a_killed_work_horse_leaves_no_bot_source_on_disk_and_its_match_is_rerun(
        redis: redis_py.Redis, trees: Trees) -> None:
    arena = _slow_ladder(redis)
    tree = trees(workers=1)
    (match,) = wait_for(lambda: arena.matches.of_ladder("main"), 20, "the match")
    holder = wait_for(lambda: redis.get(lease_key("tacocat:", match.id)), 20, "a lease")
    worker = int(holder.decode().rsplit("-", 2)[1])
    horse = wait_for(lambda: [p for p in children_of(worker) if parent(p) == worker], 10,
                     "the work horse")[0]
    folders = wait_for(lambda: list(Path(tempfile.gettempdir()).glob(f"tacocat-match-{horse}-*")),
                       10, "the horse's match folder")

    os.kill(horse, signal.SIGKILL)

    # The worker reaps its horse at once (RQ polls it every monitor interval, 1 s at most
    # here) and removes what the horse could not.
    wait_for(lambda: not any(f.exists() for f in folders), 5,
             "the killed horse's folder (both bots' sources) to be removed")
    assert alive(worker), "the worker survives its horse"
    wait_ladder_done(arena, "main", timeout=90)
    assert [e.match for e in arena.ladders.recent_matches("main")] == [match.id]
    assert f"removed the match folder(s) of work horse {horse}" in tree.text


def test_a_killed_dispatcher_is_replaced_within_a_lease(redis: redis_py.Redis,
                                                          trees: Trees) -> None:
    # A 5 s dispatcher pass (the default) and a 3 s lease: the lock lasts the lease, not
    # four passes (20 s), so the other supervisor takes over within a few seconds.
    first = trees("--wait", "5", workers=1)
    wait_for(lambda: "dispatcher: active" in first.text, 20, "the first dispatcher")
    assert 0 < redis.pttl(lock_key("tacocat:")) <= 3000
    second = trees("--wait", "5", workers=1)
    first.kill()  # SIGKILL of the whole tree: the lock is not given up
    killed = time.monotonic()
    wait_for(lambda: "dispatcher: active" in second.text, 20, "the second dispatcher")
    assert time.monotonic() - killed < 3 + 1 + 4  # the lease, a poll, slack for the load


def test_ctrl_c_stops_every_process_and_an_interrupted_match_is_rerun_later(
        redis: redis_py.Redis, trees: Trees) -> None:
    arena = _slow_ladder(redis)
    tree = trees("--grace", "0.5", workers=1)
    (match,) = wait_for(lambda: arena.matches.of_ladder("main"), 20, "the match")
    wait_for(lambda: redis.get(lease_key("tacocat:", match.id)), 20, "the match to start")
    family = wait_for(lambda: [p for p in children_of(tree.proc.pid)
                               if "tacocat.sdk.host" in cmdline(p)]
                      and children_of(tree.proc.pid), 10, "the bots")

    tree.proc.send_signal(signal.SIGINT)  # what a terminal's Ctrl-C sends the supervisor

    assert tree.proc.wait(20) == 0
    assert not [p for p in family if alive(p)]
    assert "SIGINT: shutting down" in tree.text
    assert arena.matches.get(match.id).status is MatchStatus.SCHEDULED  # cut short
    trees(workers=1)  # the next worker (here, after a restart) plays it again
    wait_ladder_done(arena, "main", timeout=90)
    assert [e.match for e in arena.ladders.recent_matches("main")] == [match.id]


def test_the_same_match_played_twice_at_once_is_recorded_once(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=16, games_per_match=16)
    for owner, tag in (("ann", "a"), ("bob", "b")):
        arena.bots.activate(field.submit(owner, "slow", slow_bot(tag, 0.002)))
        field.join(owner, "slow", "main")
    queue = MatchQueue(redis)
    jobs: list[str] = []

    def twice(match_id: str) -> None:
        # Two deliveries of one match, as RQ's at-least-once delivery may make them.
        queue.enqueue_match(match_id)
        queue.matches.enqueue_call(MATCH_JOB, args=(match_id,), job_id="again")
        jobs.extend([match_job_id(match_id), "again"])

    (match,) = arena.matches.schedule("main", twice)
    trees("--no-dispatch", workers=2)

    def finished() -> list[Job] | None:
        found = Job.fetch_many(jobs, connection=redis)
        done = all(j is not None and j.get_status() == "finished" for j in found)
        return [j for j in found if j is not None] if done else None

    runs = wait_for(finished, 60, "both runs of the match")
    outcomes = sorted(job.return_value()["outcome"] for job in runs)
    assert outcomes == ["duplicate", "recorded"]
    first, second = sorted(runs, key=lambda j: j.started_at)
    assert second.started_at < first.ended_at, "the two runs did not overlap"
    assert [e.match for e in arena.ladders.recent_matches("main")] == [match.id]
    assert arena.ladders.status("main").games_played == 16
    assert worker_stats(redis)["duplicates"] == 1


def _crashes_late(tag: str) -> bytes:
    """A slow bot (a match long enough for two runs to overlap) that exits at its ninth game
    against ``ann``: the same fault, at the same point, in every run of the match."""
    return source(f"""
        import os
        import time

        from tacocat.engine.bots import GreedyBot


        started = []  # per process: the host may make a bot object per game


        class CrashesLate(GreedyBot):
            label = {tag!r}

            def on_game_start(self, seat, ruleset, opponent):
                started.append(opponent)
                if len(started) >= 9 and "ann/" in opponent:
                    os._exit(9)

            def attack(self, obs):
                time.sleep(0.003)
                return super().attack(obs)
    """)


def test_a_run_refused_as_a_late_duplicate_changes_no_failure_count_and_no_bot_stats(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=16, games_per_match=16)
    ann = field.submit("ann", "slow", slow_bot("a", 0.01))
    bob = field.submit("bob", "crashy", _crashes_late("b"))
    for owner, bot, version in (("ann", "slow", ann), ("bob", "crashy", bob)):
        arena.bots.activate(version)
        field.join(owner, bot, "main")
    queue = MatchQueue(redis)

    def twice(match_id: str) -> None:
        queue.enqueue_match(match_id)
        queue.matches.enqueue_call(MATCH_JOB, args=(match_id,), job_id="again")

    (match,) = arena.matches.schedule("main", twice)
    trees("--no-dispatch", "--max-strikes", "1", "--batch", "1", workers=2)

    def finished() -> list[Job] | None:
        found = Job.fetch_many([match_job_id(match.id), "again"], connection=redis)
        done = all(j is not None and j.get_status() == "finished" for j in found)
        return [j for j in found if j is not None] if done else None

    runs = wait_for(finished, 60, "both runs of the match")
    reports = {job.return_value()["outcome"]: job.return_value() for job in runs}
    assert sorted(reports) == ["duplicate", "recorded"]
    first, second = sorted(runs, key=lambda j: j.started_at)
    assert second.started_at < first.ended_at, "the two runs did not overlap"
    # Both runs saw bob crash once and give up: only the recorded run's crash counts.
    side = "a" if match.a == bob else "b"
    for report in reports.values():
        assert report["forfeits"][side] == {"crash": 8}, report
    stats = worker_stats(redis)
    assert stats["duplicates"] == 1
    assert stats["failures:crash"] == 1
    assert stats["gave_up"] == 1
    standing = arena.ladders.leaderboard("main").standing(bob)
    assert standing is not None and standing.forfeits == {"crash": 8}, standing


SMOKE_REASONS = {
    # A smoke test plays its two games at once; the decision hangs: 5 x 0.5 s for it.
    "loop": ("timeout", "no answer within 2.5 s (the limit is 0.5 s)"),
    "sleep": ("timeout", "no answer within 2.5 s (the limit is 0.5 s)"),
    "hog": ("crash", "the bot raised an exception"),  # MemoryError: in its owner's log
    "garbage": ("protocol", "a message over the"),
    "exit": ("crash", "its process exited"),
}
MATCH_FAULTS = {"loop": Fault.TIMEOUT, "sleep": Fault.TIMEOUT, "hog": Fault.CRASH,
                "garbage": Fault.PROTOCOL, "exit": Fault.CRASH}


def test_hostile_bots_are_rejected_or_forfeit_with_the_right_reason_and_workers_survive(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    # 128 MB of address space: the hog hits it after touching ~80 MB, well within its time.
    # Batches of 4: the first fault forfeits the game the bot was deciding (the other three
    # are played again, one at a time after a strike), the next is the second strike, and
    # the side gives up the rest.
    tree = trees("--max-strikes", "2", "--batch", "4", "--bot-memory-mb", "128", workers=2)
    workers = sorted(tree.worker_pids())

    # Hostile from the first move: the smoke test rejects them, saying why.
    rejected = {kind: field.submit("eve", f"always-{kind}", hostile_bot(kind))
                for kind in HOSTILE}
    rejected["import"] = field.submit("eve", "always-import", exits_at_import())
    reasons = wait_decided(arena, list(rejected.values()))
    for kind, (fault, detail) in SMOKE_REASONS.items():
        reason = reasons[rejected[kind]]
        assert f": {fault}: " in reason and detail in reason, (kind, reason)
    assert "did not start" in reasons[rejected["import"]]

    # Hostile only against one opponent: they pass the smoke test and turn in the ladder.
    arena.ladders.create(field.admin, "main", games_per_pairing=8, games_per_match=8,
                         decision_seconds=0.5)
    good = field.submit("tess", "good", good_bot("good"))
    field.join("tess", "good", "main")
    hostile = {kind: field.submit("mal", kind, hostile_bot(kind, only_against="tess/good"))
               for kind in HOSTILE}
    for kind in HOSTILE:
        field.join("mal", kind, "main")
    assert wait_decided(arena, [good, *hostile.values()]) == dict.fromkeys(
        [good, *hostile.values()], "")
    wait_ladder_done(arena, "main", timeout=120)

    board = arena.ladders.leaderboard("main")
    for kind, version in hostile.items():
        (match,) = [m for m in arena.matches.of_ladder("main", count=100)
                    if {m.a, m.b} == {good, version}]
        assert match.result is not None
        side = "a" if match.a == version else "b"
        for game in match.result.games:
            assert game.reason is Reason.FORFEIT and game.offender == side, (kind, game)
            assert game.fault is MATCH_FAULTS[kind], (kind, game)
        standing = board.standing(version)
        assert standing is not None
        assert standing.forfeits == {MATCH_FAULTS[kind].value: 8}, (kind, standing)
    details = [r.result.detail for m in arena.matches.of_ladder("main", count=100)
               if good in (m.a, m.b) for r in arena.matches.replays(m.id)]
    assert any("gave up after 2 faults in a row" in d for d in details)
    assert any("the bot raised an exception" in d for d in details)
    assert not any("MemoryError" in d for d in details)  # its class: its owner's log only
    good_standing = board.standing(good)
    assert good_standing is not None and good_standing.wins == 8 * len(HOSTILE)
    # The worker processes that played all this are the ones that started.
    assert sorted(tree.worker_pids()) == workers
    assert "restarting in" not in tree.text
