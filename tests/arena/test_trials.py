"""Trials (unrated SPRT tests) on a real Valkey, without workers: the results are made here,
so the counts, the verdict and the races can be checked exactly."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence

import pytest
import redis as redis_py

from tacocat.arena import (
    FailedPrecondition,
    InvalidArgument,
    MatchGameResult,
    MatchResult,
    NotFound,
    PermissionDenied,
)
from tacocat.arena.trials import (
    IN_FLIGHT,
    MAX_OPEN_TRIALS,
    Trial,
    TrialMatchStatus,
    Trials,
    TrialStatus,
    make_sprt,
)
from tacocat.engine import Reason
from tacocat.engine.sprt import Pentanomial

from ..worker.worker_helpers import ArenaField, good_bot, make_field


def result(scores: Sequence[float]) -> MatchResult:
    """A's games with these scores (1, 0.5, 0), seats alternating as in duplicate pairs."""
    winner = {1.0: "a", 0.0: "b", 0.5: None}
    return MatchResult(tuple(MatchGameResult(i % 2, Reason.GOAL, winner[s])  # type: ignore[arg-type]
                             for i, s in enumerate(scores)), 0.1)


@pytest.fixture
def field(redis: redis_py.Redis) -> ArenaField:
    return make_field(redis)


def versions(field: ArenaField, *, activate: bool = True) -> tuple[str, str]:
    mine = field.submit("alice", "mine", good_bot("mine"))
    theirs = field.submit("bob", "theirs", good_bot("theirs", "RandomBot"))
    for version in (mine, theirs) if activate else (theirs,):
        field.arena.bots.activate(version)
    return mine, theirs


def running(field: ArenaField, **settings: object) -> tuple[Trials, Trial, list[str]]:
    trials = Trials(field.arena)
    mine, theirs = versions(field)
    trial = trials.create(field.user("alice"), mine, theirs, **settings)  # type: ignore[arg-type]
    queued: list[str] = []
    trials.tick(queued.append)
    return trials, trials.get(trial.id), queued


def test_matches_are_scheduled_a_few_at_a_time_and_counted_exactly_once(
        field: ArenaField) -> None:
    trials, trial, queued = running(field, max_games=40, games_per_match=4)
    assert trial.status is TrialStatus.RUNNING
    assert len(queued) == IN_FLIGHT == trial.matches_created
    assert trials.tick(queued.append) == []  # nothing more while they are pending
    first = trials.get_match(queued[0])
    assert (first.a, first.b, first.games, first.number) == (trial.candidate, trial.baseline,
                                                             4, 0)
    assert [g.a_seat for g in first.schedule()] == [0, 1, 0, 1]

    scores = [1.0, 0.0, 1.0, 0.5]
    assert trials.record(first.id, result(scores)) is TrialMatchStatus.RECORDED
    assert trials.record(first.id, result(scores)) is None  # a re-run of the job
    after = trials.get(trial.id)
    assert (after.games, after.wins, after.ties, after.losses) == (4, 2, 1, 1)
    assert after.penta == tuple(Pentanomial.of_scores(scores).counts) == (0, 0, 1, 1, 0)
    with pytest.raises(InvalidArgument, match="has 4 games; the result has 2"):
        trials.record(queued[1], result([1.0, 1.0]))


def test_concurrent_results_and_schedulers_lose_nothing(field: ArenaField) -> None:
    trials, trial, queued = running(field, max_games=400, games_per_match=2)
    created: list[list[str]] = []

    def schedule() -> None:
        created.append(trials.schedule(trial.id, lambda _: None))

    outcomes: list[TrialMatchStatus | None] = []

    def record(match_id: str) -> None:
        outcomes.append(trials.record(match_id, result([1.0, 0.5])))

    for _ in range(6):
        threads = [threading.Thread(target=record, args=(m,)) for m in queued]
        threads += [threading.Thread(target=schedule) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        queued = [m for made in created for m in made]
        created.clear()
        if not queued:  # every scheduler ran before the results: the next pass refills
            queued = trials.schedule(trial.id, lambda _: None)
        numbers = [trials.get_match(m).number for m in queued]
        assert len(set(numbers)) == len(numbers) <= IN_FLIGHT  # each match created once
    done = trials.get(trial.id)
    assert outcomes and set(outcomes) == {TrialMatchStatus.RECORDED}
    assert done.matches_recorded == len(outcomes) == done.games // 2
    assert done.penta == (0, 0, 0, done.matches_recorded, 0)
    assert done.matches_created == done.matches_recorded + len(queued)


def test_a_verdict_ends_the_trial_and_later_results_are_dropped(field: ArenaField) -> None:
    trials, trial, queued = running(field, sprt=make_sprt(0, 300, 0.05, 0.05),
                                    max_games=1000, games_per_match=10)
    status = None
    while queued:
        match_id = queued.pop(0)
        status = trials.record(match_id, result([1.0] * 10), enqueue=queued.append)
        if trials.get(trial.id).status is not TrialStatus.RUNNING:
            break
    done = trials.get(trial.id)
    assert status is TrialMatchStatus.RECORDED and done.status is TrialStatus.H1
    assert done.llr >= done.sprt.upper and done.ended_at is not None
    assert done.verdict().startswith("SPRT H1 accepted: A is stronger than B")
    # The matches still in flight: their results no longer count.
    assert queued
    assert trials.record(queued[0], result([0.0] * 10)) is TrialMatchStatus.DROPPED
    assert trials.get(trial.id) == done
    assert trials.tick(queued.append) == [] and trials.schedule(trial.id, queued.append) == []


def test_games_running_out_end_without_a_verdict(field: ArenaField) -> None:
    trials, trial, queued = running(field, max_games=6, games_per_match=4)
    assert [trials.get_match(m).games for m in queued] == [4, 2]
    for match_id in queued:
        trials.record(match_id, result([1.0, 0.0] * (trials.get_match(match_id).games // 2)))
    done = trials.get(trial.id)
    assert done.status is TrialStatus.EXHAUSTED and done.games == 6
    assert "no verdict: --games ran out" in done.verdict()


def test_a_trial_waits_for_its_candidate_and_fails_if_it_is_rejected(
        field: ArenaField) -> None:
    trials = Trials(field.arena)
    mine, theirs = versions(field, activate=False)
    trial = trials.create(field.user("alice"), mine, theirs)
    assert trials.tick(lambda _: None) == [] and trials.get(trial.id).status is \
        TrialStatus.WAITING
    field.arena.bots.reject(mine, "crash: RuntimeError")
    assert trials.tick(lambda _: None) == []
    failed = trials.get(trial.id)
    assert failed.status is TrialStatus.FAILED
    assert failed.reason == f"{mine} was rejected by its smoke test: crash: RuntimeError"
    with pytest.raises(FailedPrecondition, match="was rejected by its smoke test"):
        trials.create(field.user("alice"), mine, theirs)


def test_refusals_say_what_was_wrong(field: ArenaField) -> None:
    trials = Trials(field.arena)
    mine, theirs = versions(field)
    alice, bob = field.user("alice"), field.user("bob")
    pending = field.submit("bob", "new", good_bot("new"))
    with pytest.raises(FailedPrecondition, match=f"the baseline {pending} is pending"):
        trials.create(alice, mine, pending)
    with pytest.raises(PermissionDenied, match="only its owner may test it"):
        trials.create(bob, mine, theirs)
    with pytest.raises(NotFound, match=re.escape(
            "no version alice/mine@2 (the candidate): alice/mine has 1 version")):
        trials.create(alice, "alice/mine@2", theirs)
    with pytest.raises(InvalidArgument, match="version id 'mine' must look like"):
        trials.create(alice, "mine", theirs)
    with pytest.raises(InvalidArgument, match="bad SPRT bounds: alpha"):
        make_sprt(0, 5, 0.6, 0.05)
    with pytest.raises(InvalidArgument, match="games_per_match must be an even number"):
        trials.create(alice, mine, theirs, games_per_match=3)
    with pytest.raises(InvalidArgument, match="decision_seconds"):
        trials.create(alice, mine, theirs, decision_seconds=0)
    with pytest.raises(InvalidArgument, match="test id 'X1' must look like T17"):
        trials.get("X1")
    with pytest.raises(NotFound, match="no test 'T99'"):
        trials.get("T99")
    made = [trials.create(alice, mine, theirs) for _ in range(MAX_OPEN_TRIALS)]
    with pytest.raises(FailedPrecondition, match=f"has {MAX_OPEN_TRIALS} tests waiting"):
        trials.create(alice, mine, theirs)
    trials.cancel(field.admin, made[0].id)  # an admin may cancel anyone's
    assert trials.create(alice, mine, theirs).id == f"T{MAX_OPEN_TRIALS + 1}"
    assert [t.id for t in trials.find(owner="alice", count=2)] == ["T6", "T5"]
    assert trials.find(owner="bob") == []
