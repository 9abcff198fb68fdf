"""Every match has a bounded duration (issue 30, item 4): a slow-but-legal bot's match ends
within its bound and is recorded; the job timeout derives from that bound; a match whose
runs keep failing the same way is aborted after a few, and the ladder goes on."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis as redis_py
from rq.job import Job

from tacocat.arena import MatchStatus
from tacocat.engine import Fault, Reason
from tacocat.referee import match_bound
from tacocat.server.metrics import ArenaCollector
from tacocat.worker import Dispatcher, JobContext, Launcher, MatchQueue, WorkerSettings, run_match
from tacocat.worker.bounds import MatchTimeouts, job_timeout
from tacocat.worker.failures import failures_key
from tacocat.worker.queue import match_job_id
from tacocat.worker.rqworker import ArenaWorker

from .worker_helpers import (
    SANDBOX,
    ArenaField,
    exits_at_import,
    good_bot,
    make_field,
    slow_bot,
)

pytestmark = pytest.mark.timeout(120)

SETTINGS = WorkerSettings(lease=3, sandbox=SANDBOX, bank_limits_per_game=2)
CONTEXT = JobContext(SETTINGS, Launcher(SETTINGS.sandbox_policy(), sandbox=SANDBOX), "test")
DAWDLER = (Path(__file__).parents[1] / "referee" / "bots" / "dawdling_bot.py").read_bytes()


def _ladder(field: ArenaField, a: bytes, b: bytes, **ladder: float) -> str:
    """A ladder of two bots (ann's, bob's), with their first match scheduled; its id."""
    arena = field.arena
    arena.ladders.create(field.admin, "main", **ladder)  # type: ignore[arg-type]
    for owner, data in (("ann", a), ("bob", b)):
        arena.bots.activate(field.submit(owner, owner, data))
        field.join(owner, owner, "main")
    queued: list[str] = []
    arena.matches.schedule("main", queued.append)
    return queued[0]


def test_a_match_job_timeout_derives_from_its_bound(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    match_id = _ladder(field, good_bot("a"), good_bot("b"), games_per_pairing=20,
                       games_per_match=10, decision_seconds=0.5, batch=4)
    timeouts = MatchTimeouts(field.arena, SETTINGS)
    expected = job_timeout(0.5, 10, batch=4, startup_timeout=SETTINGS.startup_timeout,
                           limits_per_game=2)
    assert timeouts(match_id) == expected
    # The bound plus its margins: both banks (11 games x 2 limits x 0.5 s), both first
    # starts and one step's overshoot each.
    assert expected > match_bound(0.5, 10, batch=4, startup_timeout=10.0, limits_per_game=2)
    assert expected == pytest.approx(2 * (10 + 11 + 10) * 1.5 + 60, abs=1)
    assert timeouts("main.9.0123456789abcdef") == SETTINGS.job_timeout  # unknown: fallback
    queue = MatchQueue(redis, match_timeout=timeouts)
    assert queue.enqueue_match(match_id)
    assert Job.fetch(match_job_id(match_id), connection=redis).timeout == expected


def test_a_slow_but_legal_bots_match_ends_within_its_bound_and_is_recorded(
        redis: redis_py.Redis) -> None:
    field = make_field(redis)
    limit, games = 0.5, 2
    match_id = _ladder(field, DAWDLER, good_bot("g"), games_per_pairing=games,
                       games_per_match=games, decision_seconds=limit, batch=1)
    started = time.monotonic()
    report = run_match(field.arena, None, match_id, CONTEXT)
    took = time.monotonic() - started

    assert report.outcome == "recorded"
    assert took < match_bound(limit, games, batch=1, startup_timeout=SETTINGS.startup_timeout,
                              limits_per_game=2), took
    match = field.arena.matches.get(match_id)
    assert match.status is MatchStatus.RECORDED
    details = []
    for index, record in enumerate(field.arena.matches.replays(match_id)):
        result = record.result
        if result.reason is Reason.FORFEIT and "time bank" in result.detail:
            assert result.fault is Fault.TIMEOUT
            details.append((index, result.detail))
    assert details, "the dawdler never ran out of its time bank"
    # What it used and what its bank was: 3 x 2 limits of 0.5 s.
    assert "used up its time bank of 3 s for this match" in details[0][1], details


def test_a_match_that_keeps_failing_is_aborted_after_three_runs_and_the_ladder_goes_on(
        redis: redis_py.Redis, tmp_path: Path) -> None:
    field = make_field(redis)
    match_id = _ladder(field, exits_at_import(), exits_at_import(), games_per_pairing=4,
                       games_per_match=2, decision_seconds=0.5)
    settings = WorkerSettings(lease=3, sandbox=SANDBOX, prefix=field.arena.keys.prefix)
    queue = MatchQueue(redis, match_timeout=MatchTimeouts(field.arena, settings))
    assert queue.enqueue_match(match_id)
    dispatcher = Dispatcher(field.arena, queue, wait=0.1, lock_ttl=1.0, grace=0.01)
    from tacocat.worker.jobs import configure  # noqa: PLC0415 - the horse's job context

    configure(JobContext(settings, Launcher(settings.sandbox_policy(), sandbox=SANDBOX),
                         "test"))
    for run in range(1, 4):
        worker = ArenaWorker([queue.matches], connection=redis, settings=settings,
                             name=f"bound-test-{run}")
        worker.work(burst=True)  # forks a real work horse; the job raises MatchError
        status = Job.fetch(match_job_id(match_id), connection=redis).get_status()
        assert status == "failed", status
        time.sleep(0.15)
        report = dispatcher.step()  # the orphan: counted, run again, or the third time aborted
        assert report is not None
        assert (match_id in report.requeued["main"]) == (run < 3), report
        match = field.arena.matches.get(match_id)
        if run < 3:
            assert match.status is MatchStatus.SCHEDULED
            assert queue.job_alive(match_id)
    assert match.status is MatchStatus.ABORTED
    assert "the match job failed with MatchError" in match.reason, match.reason
    assert "3 runs failed this way" in match.reason, match.reason
    assert redis.hget(failures_key(field.arena.keys.prefix, match_id), "error:MatchError") \
        == b"3"
    assert not queue.job_alive(match_id)
    status = field.arena.ladders.status("main")
    assert status.matches_aborted == 1 and status.games_aborted == 2
    # Operators see it in /metrics (the alert TacocatMatchesAborted watches this counter).
    collector = ArenaCollector(redis, prefix=field.arena.keys.prefix)
    metrics = {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
               for family in collector.collect() for sample in family.samples}
    assert metrics[("tacocat_matches_total", (("ladder", "main"), ("outcome", "aborted")))] == 1
    # The ladder goes on: its next round is scheduled without the aborted match.
    time.sleep(0.15)
    dispatcher.step()
    later = field.arena.matches.of_ladder("main")
    assert [m.round for m in later if m.status is MatchStatus.SCHEDULED] == [2], later


def test_a_match_that_keeps_running_past_its_job_timeout_is_aborted_with_that_reason(
        redis: redis_py.Redis) -> None:
    # Issue 30's loop: killed at its job timeout, re-queued, killed again, forever. Here
    # the timeout is forced below what the match needs (real ones derive from its bound).
    field = make_field(redis)
    match_id = _ladder(field, slow_bot("a", 0.05), slow_bot("b", 0.05), games_per_pairing=2,
                       games_per_match=2, decision_seconds=0.5)
    settings = WorkerSettings(lease=3, sandbox=SANDBOX, prefix=field.arena.keys.prefix)
    queue = MatchQueue(redis, match_timeout=lambda _: 1)
    assert queue.enqueue_match(match_id)
    dispatcher = Dispatcher(field.arena, queue, wait=0.1, lock_ttl=1.0, grace=0.01)
    from tacocat.worker.jobs import configure  # noqa: PLC0415 - the horse's job context

    configure(JobContext(settings, Launcher(settings.sandbox_policy(), sandbox=SANDBOX),
                         "test"))
    for run in range(1, 4):
        ArenaWorker([queue.matches], connection=redis, settings=settings,
                    name=f"timeout-test-{run}").work(burst=True)
        time.sleep(0.15)
        dispatcher.step()
    match = field.arena.matches.get(match_id)
    assert match.status is MatchStatus.ABORTED, match
    assert match.reason.startswith("it ran past its job timeout of 1 s; 3 runs failed"), \
        match.reason
