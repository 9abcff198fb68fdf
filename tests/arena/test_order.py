"""The scheduling order: new versions first, least certain pairings next, a fairness bound."""

from __future__ import annotations

import itertools
import random
from collections import Counter
from dataclasses import dataclass, field

import pytest
import redis as redis_py
from hypothesis import given, settings
from hypothesis import strategies as st

from tacocat.arena import Arena, MatchStatus, Order, Scheduling
from tacocat.arena.order import (
    NEW_VERSION_MARGIN,
    PLAIN_SHARE,
    Candidate,
    Rating,
    certainty,
    due_candidates,
    plan,
)
from tacocat.arena.scheduler import circle_method

from .helpers import make_field

# -- the fairness bound, as a property over random ladders -------------------------------------


@dataclass
class Ladder:
    """A ladder in memory, scheduled by the real planner the way ``schedule`` does it: the
    window of ``rounds_ahead`` rounds past the slowest pairing, topped up to ``depth``."""

    rounds: int
    depth: int
    fairness: int
    order: Order
    playing: list[str] = field(default_factory=list)
    made: Counter[tuple[str, str]] = field(default_factory=Counter)
    done: Counter[tuple[str, str]] = field(default_factory=Counter)
    pending: list[Candidate] = field(default_factory=list)
    served: dict[str, int] = field(default_factory=dict)
    ratings: dict[str, Rating] = field(default_factory=dict)
    schedule_round: int = 0
    versions: int = 0

    def submit(self, replaces: str | None = None) -> None:
        if replaces is not None:
            self.playing.remove(replaces)
            self.pending = [c for c in self.pending if replaces not in (c.a, c.b)]
        self.versions += 1
        self.playing.append(f"v{self.versions:03d}")
        self.playing.sort()

    def schedule(self) -> tuple[list[Candidate], list[Candidate]] | None:
        """One scheduling round: (candidates, chosen), or None without room in the queue."""
        limit = self.depth - len(self.pending)
        if limit <= 0 or len(self.playing) < 2:
            return None
        pairs = list(itertools.combinations(self.playing, 2))
        last = min(self.rounds, min(self.done[p] for p in pairs) + 2)
        candidates = due_candidates(circle_method(self.playing),
                                    {p: self.made[p] for p in pairs}, last)
        if not candidates:
            return None
        self.schedule_round += 1
        chosen = plan(candidates, ratings=self.ratings, served=self.served,
                      schedule_round=self.schedule_round, limit=limit,
                      fairness=self.fairness, order=self.order)
        for c in chosen.matches:
            assert c.round == self.made[(c.a, c.b)] + 1  # a pairing's rounds, in order
            self.made[(c.a, c.b)] += 1
            self.pending.append(c)
        self.served.update(chosen.served)
        return candidates, list(chosen.matches)

    def record(self, rng: random.Random, share: float) -> None:
        """Workers drain the queue in order; ``share`` of it gets recorded."""
        count = round(share * len(self.pending))
        for c in self.pending[:count]:
            self.done[(c.a, c.b)] += 1
        self.pending = self.pending[count:]


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    bots=st.integers(2, 14),
    rounds=st.integers(1, 4),
    depth=st.integers(1, 30),
    fairness=st.integers(1, 4),
    order=st.sampled_from(Order),
)
def test_no_version_waits_longer_than_the_fairness_bound(
    seed: int, bots: int, rounds: int, depth: int, fairness: int, order: Order
) -> None:
    rng = random.Random(seed)
    ladder = Ladder(rounds, depth, fairness, order)
    for _ in range(bots):
        ladder.submit()
    # When each version with a match left to create last had one created (or joined).
    since: dict[str, int] = {}
    for _ in range(60):
        event = rng.random()
        if event < 0.08:
            ladder.submit()  # a new entrant
        elif event < 0.12 and ladder.playing:
            ladder.submit(replaces=rng.choice(ladder.playing))  # a new version retires one
        # Ratings come and go with the refits: some versions unrated, some far apart.
        ladder.ratings = {v: Rating(rng.gauss(1500, 300), rng.choice([20.0, 60.0, 200.0]))
                          for v in ladder.playing if rng.random() < 0.8}
        outcome = ladder.schedule()
        if outcome is not None:
            candidates, chosen = outcome
            waiting = {v for c in candidates for v in (c.a, c.b)}
            served = {v for c in chosen for v in (c.a, c.b)}
            for version in ladder.playing:
                since.setdefault(version, ladder.schedule_round - 1)
                if version in served or version not in waiting:
                    since[version] = ladder.schedule_round
                # The bound: a version with a match to create gets one at least once every
                # `fairness` scheduling rounds.
                assert ladder.schedule_round - since[version] < fairness, (
                    f"{version} waited {ladder.schedule_round - since[version]} scheduling "
                    f"rounds (bound {fairness})")
            # Never more than the room in the queue, plus one per starving version.
            assert len(chosen) <= depth + len(ladder.playing)
        ladder.record(rng, rng.choice([0.0, 0.3, 1.0]))


# -- the order itself --------------------------------------------------------------------------


def test_new_versions_first_then_the_least_certain_pairings() -> None:
    playing = ["a", "b", "c", "d", "new"]
    ratings = {"a": Rating(1700, 30), "b": Rating(1690, 30), "c": Rating(1300, 30),
               "d": Rating(1500, 30), "new": Rating(1500, NEW_VERSION_MARGIN + 1)}
    candidates = due_candidates(circle_method(playing), {}, 1)
    chosen = plan(candidates, ratings=ratings, served={}, schedule_round=1, limit=None)
    order = [(c.a, c.b) for c in chosen.matches]
    assert set(order[:4]) == {("a", "new"), ("b", "new"), ("c", "new"), ("d", "new")}
    # The established six: the least certain first, the plain order's first among the
    # next two, and the most certain last.
    rest = order[4:]
    plain_rest = [(c.a, c.b) for c in candidates if "new" not in (c.a, c.b)]
    by_gap = sorted(plain_rest, key=lambda p: certainty(ratings[p[0]], ratings[p[1]]))
    assert by_gap[0] == ("a", "b") and by_gap[-1] == ("a", "c")
    assert rest[0] == by_gap[0] and plain_rest[0] in rest[1:3]
    assert rest[-1] == ("a", "c")
    plain = plan(candidates, ratings=ratings, served={}, schedule_round=1, limit=None,
                 order=Order.ROUND_ROBIN)
    assert list(plain.matches) == candidates  # the baseline keeps the circle order


def test_a_share_of_the_places_follows_the_plain_order() -> None:
    # 40 established versions spread out: a quarter of every prefix of the order is the
    # plain round-robin order's start, the rest the least certain pairings.
    playing = [f"v{i:02d}" for i in range(40)]
    ratings = {v: Rating(1000 + 25 * i, 40) for i, v in enumerate(playing)}
    candidates = due_candidates(circle_method(playing), {}, 1)
    chosen = plan(candidates, ratings=ratings, served={}, schedule_round=1, limit=None)
    by_gap = sorted(candidates, key=lambda c: certainty(ratings[c.a], ratings[c.b]))
    assert sorted(chosen.matches) == sorted(candidates)
    for length in (8, 100, 400):
        prefix = set(chosen.matches[:length])
        assert set(candidates[: int(length * PLAIN_SHARE)]) <= prefix
        assert set(by_gap[: int(length * (1 - PLAIN_SHARE))]) <= prefix
        # ... and not the certainty order alone: long-range pairings are in every prefix.
        assert prefix != set(by_gap[:length])


def test_without_ratings_the_order_is_the_round_robin_order() -> None:
    candidates = due_candidates(circle_method([f"v{i}" for i in range(7)]), {}, 2)
    chosen = plan(candidates, ratings={}, served={}, schedule_round=1, limit=None)
    assert list(chosen.matches) == candidates
    assert [c.round for c in candidates] == [1] * 21 + [2] * 21


def test_a_limit_serves_starving_versions_first() -> None:
    playing = ["a", "b", "c", "d"]
    ratings = {"a": Rating(1500, 20), "b": Rating(1505, 20), "c": Rating(1000, 20),
               "d": Rating(2000, 20)}
    candidates = due_candidates(circle_method(playing), {}, 1)
    # c and d are far from everyone: by certainty alone they would always come last.
    chosen = plan(candidates, ratings=ratings, served={"a": 4, "b": 4, "c": 2, "d": 3},
                  schedule_round=5, limit=1, fairness=2)
    # Each starving version gets its best pairing (its first in the unlimited order), c
    # first (it waited longest), beyond the limit of one; nothing else fits.
    unlimited = plan(candidates, ratings=ratings, served={}, schedule_round=5, limit=None)
    c_best = next(m for m in unlimited.matches if "c" in (m.a, m.b))
    d_best = next(m for m in unlimited.matches if "d" in (m.a, m.b) and "c" not in (m.a, m.b)
                  and not {m.a, m.b} & {c_best.a, c_best.b})
    assert chosen.matches == (c_best, d_best)
    assert dict(chosen.served) == dict.fromkeys("abcd", 5)
    relaxed = plan(candidates, ratings=ratings, served=dict.fromkeys("abcd", 4),
                   schedule_round=5, limit=1, fairness=2)
    assert relaxed.matches == (Candidate(1, "a", "b"),)  # nobody starving: the most uncertain


def test_plan_refuses_bad_settings() -> None:
    with pytest.raises(ValueError, match="fairness must be >= 1"):
        plan([], ratings={}, served={}, schedule_round=1, limit=None, fairness=0)
    with pytest.raises(ValueError, match="limit must be >= 0"):
        plan([], ratings={}, served={}, schedule_round=1, limit=-1)


# -- through the real scheduler and Redis ------------------------------------------------------


def test_a_topped_up_queue_still_completes_the_round_robin(redis: redis_py.Redis) -> None:
    field = make_field(redis, scheduling=Scheduling(queue_depth=3))
    field.arena.ladders.create(field.admin, "main", games_per_pairing=4, games_per_match=2)
    versions = []
    for i, kind in enumerate(["greedy", "random", "random2", "passive", "greedy"]):
        versions.append(field.add_bot(f"user{i}", kind, kind))
        field.arena.ladders.join(field.users[f"user{i}"], kind, "main")
    assert len(field.arena.matches.schedule("main", field.enqueue)) == 3  # the queue's depth
    assert field.arena.matches.schedule("main", field.enqueue) == []  # no room: nothing to do
    field.run("main")
    everything = field.arena.matches.of_ladder("main", count=1000)
    assert all(m.status is MatchStatus.RECORDED for m in everything)
    per_pair = Counter((m.a, m.b) for m in everything)
    assert per_pair == dict.fromkeys(itertools.combinations(sorted(versions), 2), 2)
    status = field.arena.ladders.status("main")
    assert status.complete and status.games_toward_target == status.games_target == 40


def test_a_new_entrant_jumps_the_established_pairings(redis: redis_py.Redis) -> None:
    field = make_field(redis, scheduling=Scheduling(queue_depth=4))
    arena: Arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=40, games_per_match=10)
    for i, kind in enumerate(["greedy", "random", "passive"]):
        field.add_bot(f"user{i}", kind, kind)
        arena.ladders.join(field.users[f"user{i}"], kind, "main")
    arena.matches.schedule("main", field.enqueue)
    for _ in range(6):  # some results, so the three have ratings
        match = arena.matches.get(field.queue.pop(0))
        arena.matches.record(match.id, field.play(match))
        arena.matches.schedule("main", field.enqueue)
    newcomer = field.add_bot("erin", "greedy2", "greedy")
    arena.ladders.join(field.users["erin"], "greedy2", "main")
    while field.queue:  # what was queued before it joined
        match = arena.matches.get(field.queue.pop(0))
        arena.matches.record(match.id, field.play(match))
    created = arena.matches.schedule("main", field.enqueue)
    assert len(created) == 4
    assert all(newcomer in (m.a, m.b) for m in created[:3])
