"""Round-robin scheduling: which matches to create and enqueue, and which to enqueue again.

**Rounds.** A ladder plays in rounds; in round ``r`` every pairing of the playing versions
meets once, in a match of ``games_per_match`` games (duplicate pairs, seats swapped). Rounds
continue until every pairing has ``games_per_pairing`` games, i.e. ``Ladder.rounds`` rounds.
Within a round, matches are enqueued in the circle method's order: the round robin is cut
into turns of disjoint pairings, so each version is in at most one match per turn and the
whole field progresses evenly while workers drain the queue.

**Identity.** A match is identified by (ladder, round, pair) (:func:`~.matches.match_id`)
and created with create-if-absent, so running :func:`schedule` twice, or on two machines at
once, creates and enqueues each match once.

**Window.** Only ``rounds_ahead`` rounds beyond the last round every playing pairing has
completed are created (default 2: the next round waits in the queue while the current one
finishes, so workers never idle at a round's end). A new entrant therefore plays its first
rounds against everyone before the established pairings go further ahead, and new
versions get rated quickly. The flip side: **call :func:`schedule` again after results
arrive** (``arena.matches.record(..., enqueue=...)`` does, and a periodic tick should).

**Order.** Which due matches are created (and so played) first is :mod:`.order`'s: new
versions first, then the least certain pairings, with a fairness bound. ``queue_depth``
makes each call a *scheduling round* that only tops the ladder's pending matches up to that
depth, so the order has something to choose from; without it the whole window is created at
once, in that order.

**Orphans.** A match scheduled but not recorded for longer than a timeout, or whose job the
queue no longer has, is an orphan (a worker died, a job was lost): :func:`requeue_orphans`
enqueues it again. Recording is exactly-once, so a duplicate run costs time, never a result.

The scheduler never imports RQ: callers pass ``enqueue(match_id)``.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from tacocat.models import Match, MatchStatus

from ._redis import Clock, Redis, default_clock, number, scored, text, text_map
from .errors import InvalidArgument
from .keys import Keys
from .ladders import get_ladder, ladder_secret, playing_versions
from .matches import (
    cancel_match,
    create_matches,
    get_matches,
    match_id,
    match_seed,
    pair_counts,
    pair_field,
)
from .order import DEFAULT_FAIRNESS, Order, Rating, due_arrays, plan_arrays
from .paircounts import read_pair_counts
from .results import dumps_json

DEFAULT_ROUNDS_AHEAD: Final = 2
DEFAULT_ORPHAN_GRACE: Final = 10.0
"""Seconds a match may lack a queued job before it counts as orphaned: covers the moment
between creating a match and enqueuing it."""



@dataclass(frozen=True)
class Scheduling:
    """How an :class:`~tacocat.arena.Arena` schedules: ``order`` and ``fairness`` (see
    :mod:`.order`), and ``queue_depth``, the pending matches per ladder that each
    scheduling round tops up to (None: the whole window at once)."""

    queue_depth: int | None = None
    order: Order = Order.CONVERGE
    fairness: int = DEFAULT_FAIRNESS


DEFAULT_SCHEDULING: Final = Scheduling()

Enqueue = Callable[[str], object]
"""Puts one match on the work queue, given its id (the return value is ignored)."""
JobAlive = Callable[[str], bool]
"""Whether the queue still holds a live (queued or running) job for a match id."""


def circle_method(players: Sequence[str]) -> list[list[tuple[str, str]]]:
    """One round robin as turns of disjoint pairs (Berger's circle method).

    ``n`` players give ``n - 1`` turns of ``n / 2`` pairs (an odd count adds a bye: ``n``
    turns, one player resting in each). Every pair meets exactly once. The first player
    stays put while the others rotate one place per turn.
    """
    if len(set(players)) != len(players):
        raise InvalidArgument(f"players must be distinct, got {list(players)!r}")
    circle: list[str | None] = list(players)
    if len(circle) % 2:
        circle.append(None)
    n = len(circle)
    turns: list[list[tuple[str, str]]] = []
    for _ in range(n - 1):
        turn = []
        for i in range(n // 2):
            x, y = circle[i], circle[n - 1 - i]
            if x is not None and y is not None:
                turn.append((x, y))
        turns.append(turn)
        circle = [circle[0], circle[-1], *circle[1:-1]]
    return turns


def schedule(
    redis: Redis, keys: Keys, ladder: str, enqueue: Enqueue, *,
    rounds_ahead: int | None = DEFAULT_ROUNDS_AHEAD, queue_depth: int | None = None,
    order: Order = Order.CONVERGE, fairness: int = DEFAULT_FAIRNESS,
    clock: Clock = default_clock,
) -> list[Match]:
    """Create the ladder's due matches and enqueue them; returns the ones created, in order.

    First cancels scheduled matches of versions that no longer play (retired by a newer
    version). The due matches are every pairing's rounds ``1 .. min(Ladder.rounds,
    F + rounds_ahead)`` (``F``: rounds every pairing has completed; ``rounds_ahead=None``:
    all rounds at once) not created yet; :func:`.order.plan` picks and orders them. With
    ``queue_depth``, only enough to bring the ladder's pending matches up to it are created
    (plus what the fairness bound forces), and a call with no room does nothing.

    A match is created before it is enqueued. If ``enqueue`` raises, the error propagates
    and the matches not yet enqueued stay scheduled: :func:`requeue_orphans` picks them up.
    """
    if rounds_ahead is not None and rounds_ahead < 1:
        raise InvalidArgument(f"rounds_ahead must be >= 1 or None, got {rounds_ahead!r}")
    if queue_depth is not None and queue_depth < 1:
        raise InvalidArgument(f"queue_depth must be >= 1 or None, got {queue_depth!r}")
    settings = get_ladder(redis, keys, ladder)
    playing = playing_versions(redis, keys, ladder)
    now = clock()
    cancel_retired(redis, keys, ladder, set(playing), now=now)
    if len(playing) < 2:
        return []
    pipe = redis.pipeline(transaction=False)
    pipe.zcard(keys.pending(ladder))
    pipe.hget(keys.counters(ladder), "schedule_rounds")
    pipe.hgetall(keys.served(ladder))
    pipe.hget(keys.standings(ladder), "ratings")
    pending, rounds_done, served_raw, ratings_raw = pipe.execute()
    limit = None if queue_depth is None else queue_depth - int(pending)
    if limit is not None and limit <= 0:
        return []
    first, second = _round_robin(tuple(playing))
    completed_each, made = _progress(redis, keys, ladder, playing, first, second)
    completed = int(completed_each.min())
    last = settings.rounds if rounds_ahead is None else min(
        settings.rounds, completed + rounds_ahead)
    due = due_arrays(playing, first, second, made, last)
    schedule_round = number(rounds_done) + 1
    chosen = plan_arrays(due, ratings=_ratings(ratings_raw),
                         served={k: int(v) for k, v in text_map(served_raw).items()},
                         schedule_round=schedule_round, limit=limit, fairness=fairness,
                         order=order)
    secret = ladder_secret(redis, keys, ladder)
    wanted = [Match(match_id(ladder, c.round, c.a, c.b), ladder, c.round, c.a, c.b,
                    settings.games_per_match, match_seed(secret, ladder, c.round, c.a, c.b),
                    MatchStatus.SCHEDULED, now, now)
              for c in chosen.matches]
    created = create_matches(redis, keys, wanted)
    # Enqueue first: a Redis outage in the bookkeeping below must not leave created matches
    # unqueued (requeue_orphans would find them, but only after its timeout).
    for match in created:
        enqueue(match.id)
    if created:
        pipe = redis.pipeline(transaction=False)
        pipe.hincrby(keys.counters(ladder), "schedule_rounds", 1)
        pipe.hset(keys.served(ladder),
                  items=[x for item in chosen.served.items() for x in item])
        pipe.publish(keys.events(ladder), dumps_json(
            {"event": "scheduled", "ladder": ladder, "matches": len(created)}))
        pipe.execute()
    return created


@functools.lru_cache(maxsize=4)
def _round_robin(playing: tuple[str, ...]) -> tuple[Any, Any]:
    """The circle method's pairings of ``playing`` (sorted) in turn order, as indices
    (smaller first); kept, as the field changes far less often than it is scheduled."""
    index = {v: k for k, v in enumerate(playing)}
    pairs = [sorted((index[x], index[y])) for turn in circle_method(playing) for x, y in turn]
    table = np.array(pairs, dtype=np.intp).reshape(-1, 2)
    return table[:, 0].copy(), table[:, 1].copy()


def _progress(redis: Redis, keys: Keys, ladder: str, playing: Sequence[str], first: Any,
              second: Any) -> tuple[Any, Any]:
    """Per pairing: the matches recorded and the rounds created (``scheduled``).

    Each created match is recorded, pending, cancelled or aborted. Without cancelled or
    aborted matches the rounds created are the recorded ones (the pair counts, from the
    snapshot and the log) plus the pending ones (the queue), read at one results count: no
    read of the
    ``pairs`` hash, which holds half a million ``scheduled`` fields at 1,000 versions.
    Otherwise they are read from it."""
    pipe = redis.pipeline(transaction=True)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hget(keys.counters(ladder), "cancelled")
    pipe.hget(keys.counters(ladder), "aborted")
    pipe.zrange(keys.pending(ladder), 0, -1)
    results, cancelled, aborted, pending = pipe.execute()
    counts = read_pair_counts(redis, keys, ladder)
    recorded = counts.lookup(playing, first, second, "matches")
    if counts.version == number(results) and not number(cancelled) and not number(aborted):
        index = {v: k for k, v in enumerate(playing)}
        n = len(playing)
        queued = [m for m in get_matches(redis, keys, ladder, [text(x) for x in pending])
                  if m.status is MatchStatus.SCHEDULED and m.a in index and m.b in index]
        if len(queued) == len(pending):
            made = recorded.copy()
            wanted = np.array([min(index[m.a], index[m.b]) * n + max(index[m.a], index[m.b])
                               for m in queued], dtype=np.int64)
            where = {key: k for k, key in enumerate((first * n + second).tolist())}
            np.add.at(made, [where[key] for key in wanted.tolist()], 1)
            return recorded, made
    fields = [pair_field(playing[a], playing[b]) for a, b in zip(first.tolist(),
                                                                 second.tolist(), strict=True)]
    scheduled = pair_counts(redis, keys, ladder, fields, ("scheduled",))
    return recorded, np.array([s for (s,) in scheduled], dtype=np.int64)


def _ratings(raw: bytes | str | None) -> dict[str, Rating]:
    """The snapshot's compact ratings (version -> [rating, margin]); {} before any fit."""
    if not raw:
        return {}
    return {version: Rating(float(r), float(m)) for version, (r, m) in json.loads(raw).items()}


def cancel_retired(
    redis: Redis, keys: Keys, ladder: str, playing: set[str], *, now: float
) -> list[str]:
    """Cancel the ladder's scheduled matches with a version not in ``playing``; returns ids."""
    pending = [text(m) for m in redis.zrange(keys.pending(ladder), 0, -1)]
    stale = [m.id for m in get_matches(redis, keys, ladder, pending)
             if m.a not in playing or m.b not in playing]
    return [mid for mid in stale if cancel_match(redis, keys, mid, now)]


def find_orphans(
    redis: Redis, keys: Keys, ladder: str, *, timeout: float | None = None,
    job_alive: JobAlive | None = None, grace: float = DEFAULT_ORPHAN_GRACE,
    now: float | None = None,
) -> list[str]:
    """Scheduled matches that need enqueuing again, oldest first.

    A match is an orphan if it was last enqueued more than ``timeout`` seconds ago, or, when
    ``job_alive`` is given, if its job is gone and it was enqueued more than ``grace``
    seconds ago. Pick ``timeout`` above the time a match may wait in the queue plus the time
    it takes to play; with ``job_alive``, ``timeout`` may be None.
    """
    if timeout is None and job_alive is None:
        raise InvalidArgument("pass a timeout, a job_alive check, or both")
    if timeout is not None and timeout <= 0:
        raise InvalidArgument(f"timeout must be positive seconds, got {timeout!r}")
    now = default_clock() if now is None else now
    orphans = []
    for mid, score in scored(redis.zrange(keys.pending(ladder), 0, -1, withscores=True)):
        age = now - score
        if (timeout is not None and age > timeout) or (
            job_alive is not None and age > grace and not job_alive(mid)
        ):
            orphans.append(mid)
    return orphans


def requeue_orphans(
    redis: Redis, keys: Keys, ladder: str, enqueue: Enqueue, *,
    timeout: float | None = None, job_alive: JobAlive | None = None,
    grace: float = DEFAULT_ORPHAN_GRACE, clock: Clock = default_clock,
) -> list[str]:
    """Enqueue every orphan again (see :func:`find_orphans`); returns their ids."""
    now = clock()
    orphans = find_orphans(redis, keys, ladder, timeout=timeout, job_alive=job_alive,
                           grace=grace, now=now)
    requeued = []
    for mid in orphans:
        # XX: only if still pending; a match recorded meanwhile must not reappear.
        if not redis.zadd(keys.pending(ladder), {mid: now}, xx=True, ch=True):
            continue
        redis.hset(keys.match(ladder, mid), "enqueued_at", repr(now))
        enqueue(mid)
        requeued.append(mid)
    if requeued:
        redis.publish(keys.events(ladder), dumps_json(
            {"event": "requeued", "ladder": ladder, "matches": len(requeued)}))
    return requeued
