"""A stalled work horse (issue 31, item 2): SIGSTOP of a real horse alone, its worker still
alive. The worker sees no progress within the match's stall limit, kills the horse and lets
its lease go; the dispatcher runs the match again and counts the stall; the match is
recorded once, long before any job timeout."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis as redis_py

from tacocat.arena import MatchStatus
from tacocat.worker import Dispatcher, MatchQueue, WorkerSettings
from tacocat.worker.bounds import MatchTimeouts, stall_seconds
from tacocat.worker.failures import failures_key
from tacocat.worker.queue import lease_key
from tacocat_lab.chaos.procs import alive, children_of, parent, wait_for

from .worker_helpers import SANDBOX, make_field, slow_bot

pytestmark = pytest.mark.timeout(180)

SETTINGS = WorkerSettings(lease=3, sandbox=SANDBOX, startup_timeout=3, stall_margin=2,
                          pinning="none")


def _horse(worker: int) -> int | None:
    """The worker's work horse (its only direct child while it plays), if any."""
    found = [p for p in children_of(worker) if parent(p) == worker and alive(p)]
    return found[0] if found else None


def test_a_stopped_horse_is_killed_and_its_match_runs_again(redis: redis_py.Redis,
                                                             redis_url: str,
                                                             tmp_path: Path) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=8, games_per_match=8,
                         decision_seconds=0.5, batch=1)
    for owner in ("ann", "bob"):  # ~38 decisions of 10 ms a game: a match of seconds
        arena.bots.activate(field.submit(owner, "slow", slow_bot(owner, 0.01)))
        field.join(owner, "slow", "main")
    queue = MatchQueue(redis, match_timeout=MatchTimeouts(arena, SETTINGS))
    dispatcher = Dispatcher(arena, queue, wait=0.2, lock_ttl=2.0, grace=0.5)
    log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-m", "tacocat.worker", "--url", redis_url, "--settings",
         SETTINGS.to_json()], stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    stopped: int | None = None
    try:
        dispatcher.step()  # schedules and enqueues the match
        (match_id,) = [m.id for m in arena.matches.of_ladder("main")]
        wait_for(lambda: redis.get(lease_key("tacocat:", match_id)), 30, "the match to start")
        stopped = wait_for(lambda: _horse(worker.pid), 10, "the work horse")
        time.sleep(0.5)  # mid-match
        os.kill(stopped, signal.SIGSTOP)
        paused = time.monotonic()

        def recorded() -> bool:
            dispatcher.step()
            return arena.matches.get(match_id).status is MatchStatus.RECORDED

        wait_for(recorded, 120, "the match to be recorded after the stall")
        took = time.monotonic() - paused
        print(f"match recorded {took:.1f} s after its horse was stopped")
        limit = stall_seconds(0.5, batch=1, startup_timeout=3, margin=2)  # 8 s
        # Found within its limit plus a lease (the check runs at each renewal), re-run, and
        # recorded: far from the job timeout that used to free it.
        job_timeout = MatchTimeouts(arena, SETTINGS)(match_id)
        assert took < limit + 60 < job_timeout, (took, limit, job_timeout)
        assert not alive(stopped), "the stopped horse still lives"
        failures = redis.hgetall(failures_key("tacocat:", match_id))
        assert failures.get(b"stalled") == b"1", failures
        assert b"no progress for" in failures[b"last:stalled"]
        assert arena.ladders.status("main").matches_recorded == 1
        assert worker.poll() is None  # the worker lived on and played it again
    finally:
        if stopped is not None and alive(stopped):
            with contextlib.suppress(ProcessLookupError):
                os.kill(stopped, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(worker.pid, signal.SIGTERM)
        try:
            worker.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(worker.pid, signal.SIGKILL)
            worker.wait()
        log.close()
        dispatcher.release()
    text = (tmp_path / "worker.log").read_text(errors="replace")
    assert "made no progress for" in text, text
