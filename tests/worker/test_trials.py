"""Unrated SPRT tests (trials) for real: a Valkey, ``tacocat worker`` trees with their RQ
workers and dispatcher, sandboxed bots; a verdict, a cancel, and a ladder left untouched."""

from __future__ import annotations

import time

import pytest
import redis as redis_py

from tacocat.arena.trials import Trials, TrialStatus, make_sprt
from tacocat_lab.chaos.procs import wait_for

from .worker_helpers import Trees, good_bot, make_field, slow_bot, wait_decided, wait_ladder_done

pytestmark = pytest.mark.timeout(150)


def ladder_state(redis: redis_py.Redis, ladder: str) -> dict[bytes, bytes | None]:
    """Every key of the ladder and its matches, serialised (``DUMP``), but the watchers'
    copy of the last match being played (it ends just after the result is recorded)."""
    keys = sorted(k for k in redis.scan_iter(match=f"*{{{ladder}}}*")
                  if not k.endswith((b":live", b":live-games")))
    assert keys
    return {key: redis.dump(key) for key in keys}


def settled_ladder_state(redis: redis_py.Redis, ladder: str) -> dict[bytes, bytes | None]:
    """:func:`ladder_state` once it stops changing: a match's owner logs are stored just
    after its result, so the ladder's last match may still be adding them when it is done."""
    last = ladder_state(redis, ladder)

    def unchanged() -> dict[bytes, bytes | None] | None:
        nonlocal last
        now, before = ladder_state(redis, ladder), last
        last = now
        return now if now == before else None

    return wait_for(unchanged, 20, f"ladder {ladder}'s keys to settle", interval=0.5)


def test_a_test_reaches_its_verdict_on_the_workers_and_leaves_the_ladder_alone(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    trials = Trials(arena)
    arena.ladders.create(field.admin, "main", games_per_pairing=4, games_per_match=2,
                         decision_seconds=1.0)
    trees(workers=2)
    base = field.submit("bob", "rando", good_bot("rando", "RandomBot"))
    mine = field.submit("alice", "greedy", good_bot("greedy", "GreedyBot"))
    field.join("bob", "rando", "main")
    field.join("alice", "greedy", "main")
    assert wait_decided(arena, [base, mine]) == {base: "", mine: ""}
    wait_ladder_done(arena, "main")
    board = arena.ladders.leaderboard("main")
    before = settled_ladder_state(redis, "main")

    # A new upload of another of alice's bots: the test waits for its smoke game.
    candidate = field.submit("alice", "dev", good_bot("dev", "GreedyBot"))
    trial = trials.create(field.user("alice"), candidate, base,
                          sprt=make_sprt(0, 300, 0.05, 0.05), max_games=400,
                          games_per_match=10, decision_seconds=1.0)
    assert trial.status is TrialStatus.WAITING and trial.id == "T1"

    done = wait_for(lambda: None if (t := trials.get(trial.id)).status.open else t,
                    90, "the test's verdict", interval=0.2)
    assert done.status is TrialStatus.H1, done.verdict()
    assert done.llr >= done.sprt.upper
    assert done.games == 2 * sum(done.penta) + done.aborted and done.games % 10 == 0
    assert done.games < 400 and done.wins > done.losses
    assert done.verdict().startswith("SPRT H1 accepted")
    # Once decided, no match waits and none is counted twice.
    assert trials.find(version=candidate) == [done]
    time.sleep(1.5)
    assert trials.get(trial.id) == done
    assert not redis.zcard(trials.keys.pending(trial.id))

    # The ladder: not one key changed, the same standings.
    assert ladder_state(redis, "main") == before
    assert arena.ladders.leaderboard("main") == board


def test_a_cancelled_test_stops_scheduling_and_only_its_owner_may_cancel(
        redis: redis_py.Redis, trees: Trees) -> None:
    field = make_field(redis)
    arena = field.arena
    trials = Trials(arena)
    trees(workers=2)
    slow = field.submit("alice", "slow", slow_bot("slow", 0.02))
    other = field.submit("bob", "slow", slow_bot("bob-slow", 0.02))
    assert wait_decided(arena, [slow, other]) == {slow: "", other: ""}
    trial = trials.create(field.user("alice"), slow, other, max_games=2000,
                          games_per_match=4)
    wait_for(lambda: trials.get(trial.id).matches_recorded >= 1, 60, "a first match")

    with pytest.raises(Exception, match="only its owner"):
        trials.cancel(field.user("bob"), trial.id)
    assert trials.get(trial.id).status is TrialStatus.RUNNING

    cancelled = trials.cancel(field.user("alice"), trial.id)
    assert cancelled.status is TrialStatus.CANCELLED and cancelled.reason == "by alice"
    # Matches queued are skipped, one being played is dropped: the counts stay.
    time.sleep(3)
    after = trials.get(trial.id)
    assert (after.games, after.matches_created) == (cancelled.games, cancelled.matches_created)
    assert after.matches_created < after.matches_total
    assert trials.cancel(field.user("alice"), trial.id) == after  # cancelling again: no-op
