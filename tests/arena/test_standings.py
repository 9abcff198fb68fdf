"""Standings: consistent with the recorded results, ratings with intervals, the crosstable,
forfeits by reason, snapshot versions, ladder status."""

from __future__ import annotations

from collections import Counter

import pytest
import redis as redis_py

from tacocat.arena import Leaderboard, MatchStatus, recording, standings
from tacocat.arena.ratings import likelihood_of_superiority
from tacocat.arena.standings import store_standings, update_standings
from tacocat.models import SIDES

from .helpers import Field, make_field


def full_ladder(redis: redis_py.Redis) -> Field:
    field = make_field(redis)
    field.arena.ladders.create(field.admin, "main", games_per_pairing=40, games_per_match=10)
    for owner, kind in [("alice", "greedy"), ("bob", "random"), ("carol", "passive"),
                        ("dave", "crashing")]:
        field.add_bot(owner, kind, kind)
        field.arena.ladders.join(field.users[owner], kind, "main")
    field.run("main")
    return field


def test_standings_agree_with_the_recorded_matches(redis: redis_py.Redis) -> None:
    field = full_ladder(redis)
    arena = field.arena
    board = arena.ladders.leaderboard("main")
    matches = arena.matches.of_ladder("main", count=1000)
    assert all(m.status is MatchStatus.RECORDED for m in matches)
    wins: Counter[str] = Counter()
    ties: Counter[str] = Counter()
    losses: Counter[str] = Counter()
    forfeits: Counter[tuple[str, str]] = Counter()
    for match in matches:
        result = match.result
        assert result is not None
        wins[match.a] += result.wins
        losses[match.a] += result.losses
        wins[match.b] += result.losses
        losses[match.b] += result.wins
        ties[match.a] += result.ties
        ties[match.b] += result.ties
        for side, version in zip(SIDES, (match.a, match.b), strict=True):
            for fault, count in result.forfeits(side).items():
                forfeits[version, fault] += count
    assert board.version == len(matches) == 24
    assert len(board.standings) == 4
    for row in board.standings:
        assert (row.wins, row.ties, row.losses) == (wins[row.version], ties[row.version],
                                                    losses[row.version])
        assert row.wins + row.ties + row.losses == row.games == 120
        assert row.matches == 12 and row.active
        assert dict(row.forfeits) == {fault: n for (v, fault), n in forfeits.items()
                                      if v == row.version}
        assert row.rating is not None and row.low is not None and row.high is not None
        assert row.low < row.rating < row.high
    assert sum(r.wins for r in board.standings) == sum(r.losses for r in board.standings)
    crashing = board.standing("dave/crashing@1")
    assert crashing is not None and crashing.forfeits.get("crash", 0) > 0
    assert board.standings[-1].version == "dave/crashing@1"
    assert board.standings[0].version == "alice/greedy@1"
    ratings = [r.rating for r in board.standings]
    assert ratings == sorted(ratings, reverse=True)  # type: ignore[type-var]
    assert sum(ratings) / 4 == pytest.approx(1500.0)  # type: ignore[arg-type]


def test_crosstable_is_oriented_and_carries_los(redis: redis_py.Redis) -> None:
    board = full_ladder(redis).arena.ladders.leaderboard("main")
    assert len(board.pairs) == 6
    for pair in board.pairs:
        assert pair.a < pair.b and pair.matches == 4
        assert pair.wins + pair.ties + pair.losses == pair.games
        assert pair.los == likelihood_of_superiority(pair.wins, pair.losses)
        assert pair.fit_los is not None and 0.0 <= pair.fit_los <= 1.0
        flipped = board.pair(pair.b, pair.a)
        assert flipped is not None
        assert (flipped.wins, flipped.losses, flipped.ties) == (pair.losses, pair.wins,
                                                                pair.ties)
        assert flipped.los == pytest.approx(1.0 - pair.los)
    greedy_vs_crash = board.pair("alice/greedy@1", "dave/crashing@1")
    assert greedy_vs_crash is not None and greedy_vs_crash.los > 0.99
    assert board.pair("alice/greedy@1", "nobody@1") is None


def test_an_older_fit_never_overwrites_a_newer_one(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=20, games_per_match=10)
    for owner, kind in [("alice", "greedy"), ("bob", "random")]:
        field.add_bot(owner, kind, kind)
        arena.ladders.join(field.users[owner], kind, "main")
    first, second = arena.matches.schedule("main", field.enqueue)
    arena.matches.record(first.id, field.play(first))
    stale = update_standings(redis, arena.keys, "main")
    assert stale.version == 1
    arena.matches.record(second.id, field.play(second))
    assert arena.ladders.leaderboard("main").version == 2
    assert not store_standings(redis, arena.keys, stale)  # a slow worker's late refit
    assert arena.ladders.leaderboard("main").version == 2
    row = arena.ladders.leaderboard("main").standing("alice/greedy@1")
    assert row is not None and row.games == 20


def test_leaderboard_before_any_game_and_round_trip(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=20, games_per_match=10)
    field.add_bot("alice", "greedy", "greedy")
    arena.ladders.join(field.users["alice"], "greedy", "main")
    field.add_bot("bob", "random", "random", activate=False)
    arena.ladders.join(field.users["bob"], "random", "main")
    board = arena.ladders.leaderboard("main")
    assert board.version == 0
    assert [(s.version, s.rating, s.games, s.active) for s in board.standings] == [
        ("alice/greedy@1", None, 0, True)]
    assert [e.version for e in arena.ladders.entries("main")] == ["alice/greedy@1", None]
    assert Leaderboard.from_json(board.to_json()) == board


def test_ladder_status_and_recent_matches_track_progress(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=30, games_per_match=10)
    for owner, kind in [("alice", "greedy"), ("bob", "random"), ("carol", "passive")]:
        field.add_bot(owner, kind, kind)
        arena.ladders.join(field.users[owner], kind, "main")
    created = arena.matches.schedule("main", field.enqueue)
    assert len(created) == 6
    for match in created[:2]:
        arena.matches.record(match.id, field.play(match))
    status = arena.ladders.status("main")
    assert (status.entries, status.playing, status.rounds) == (3, 3, 3)
    assert (status.matches_scheduled, status.matches_recorded, status.matches_pending) == \
        (6, 2, 4)
    assert (status.games_played, status.games_target, status.games_toward_target) == \
        (20, 90, 20)
    assert not status.complete and status.rounds_completed == 0
    recent = arena.ladders.recent_matches("main", count=5)
    assert [e.match for e in recent] == [created[1].id, created[0].id]
    assert [e.seq for e in recent] == [2, 1]
    assert recent[0].wins + recent[0].ties + recent[0].losses == 10


def test_a_rerun_job_refits_standings_a_crash_left_behind(redis: redis_py.Redis) -> None:
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=20, games_per_match=10)
    for owner, kind in [("alice", "greedy"), ("bob", "random")]:
        field.add_bot(owner, kind, kind)
        arena.ladders.join(field.users[owner], kind, "main")
    first, _ = arena.matches.schedule("main", field.enqueue)
    result = field.play(first)
    # The job committed, then died before its refit.
    assert recording.record_match(redis, arena.keys, first.id, result).recorded
    assert standings.is_behind(redis, arena.keys, "main")
    assert not arena.matches.record(first.id, result).recorded  # RQ runs the job again
    assert not standings.is_behind(redis, arena.keys, "main")
