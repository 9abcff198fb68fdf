"""Which due matches to create first: the order that makes ratings converge, with a fairness bound.

The round robin fixes *what* is played (every pairing, ``Ladder.rounds`` times); this module
only picks the *order* in which the scheduler creates and enqueues the matches that are due
(the candidates: rounds not created yet inside the scheduler's window). Workers take matches
in queue order, so creation order is play order.

:data:`Order.CONVERGE` (the default) sorts the candidates by

1. **new versions first**: a pairing with a version that has no rating yet, or whose 95%
   interval is wider than ±:data:`NEW_VERSION_MARGIN`, goes before the established ones;
2. **least certain first, with a share in plain order**: the established pairings by how
   sure the current fit is about who wins, the gap of the two ratings in units of its
   standard deviation, ``|ra − rb| / √(σa² + σb²)`` (small: the intervals overlap, a game
   there says the most; a pairing without ratings counts 0), except that
   :data:`PLAIN_SHARE` of the places go to the plain round-robin order (a row takes the
   earlier of its two places, ``min(certainty rank / (1 − share), (plain rank + ½) / share)``,
   so that the least certain pairing still comes first);
3. ties by round and by the circle method's turn order (the plain round-robin order).

Why the share: least-certain-first alone pairs every version with its neighbours in
rating, and a ladder of local comparisons pins the *spread* of the ratings poorly. Early
noise stretches the scale (simulated at 1,000 versions: the fitted ratings were 1.36x the
true spread after 20,000 matches, still 1.08x after 120,000) and the extremes sit several
intervals off the truth. Long-range pairings, which the plain order mixes in, fix the scale:
with a quarter of the places in plain order the same simulation (true ratings known, the
same fit as here, one refit per scheduling round) had every version inside its simultaneous
95% interval after 26,000 matches instead of 108,000, and 200 versions no later than
without the share (``docs/ARENA.md``, "Big ladders").

:data:`Order.ROUND_ROBIN` keeps the plain order (rounds in turn order): the baseline that
``tacocat bench scale --order round-robin`` compares against.

**Fairness.** With a ``limit`` on how many matches one scheduling round creates (the
scheduler tops the queue up to a depth), a version whose pairings all sort late could wait
for ever. So each scheduling round first serves every version that has a candidate and got
no match created in the last ``fairness - 1`` scheduling rounds: each gets its best candidate,
beyond the limit if need be. Hence the bound: **a version with a match left to create gets
one at least once every ``fairness`` scheduling rounds** (tested as a property over random
ladders, submissions and results in ``tests/arena/test_order.py``).

Pure functions over plain data: the scheduler reads the state from Redis and writes back.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from .errors import InvalidArgument
from .ratings import Z95

NEW_VERSION_MARGIN: Final = 100.0
"""A version whose 95% interval is wider than ± this many Elo counts as new: its pairings go
first. (A version's interval falls under ±100 after about 50 games against its field.)"""
PLAIN_SHARE: Final = 0.25
"""The share of the established pairings' places that follow the plain round-robin order
under :data:`Order.CONVERGE` (see the module docstring: it keeps the rating scale honest)."""
DEFAULT_FAIRNESS: Final = 2
"""The fairness bound, in scheduling rounds (see the module docstring)."""


class Order(enum.Enum):
    CONVERGE = "converge"
    ROUND_ROBIN = "round-robin"


@dataclass(frozen=True, order=True)
class Candidate:
    """A match that may be created now: ``round`` of the pairing ``a < b``."""

    round: int
    a: str
    b: str


@dataclass(frozen=True)
class Rating:
    """What the order needs of the current fit: rating and 95% margin, in Elo."""

    rating: float
    margin: float


@dataclass(frozen=True)
class Plan:
    """The candidates to create, in queue order, and the scheduling round each version was
    last served in afterwards (``served``, only the versions this plan served)."""

    matches: tuple[Candidate, ...]
    served: Mapping[str, int]


@dataclass(frozen=True)
class DueArrays:
    """Candidates as arrays, in plain round-robin order: row ``r`` is round ``round[r]`` of
    the pairing ``versions[a[r]] < versions[b[r]]`` (``versions`` sorted). What the
    scheduler builds for a 1,000-version ladder, where half a million :class:`Candidate`
    objects and a Python sort per scheduling round took seconds."""

    versions: Sequence[str]
    a: Any
    b: Any
    round: Any

    def candidate(self, row: int) -> Candidate:
        return Candidate(int(self.round[row]), self.versions[int(self.a[row])],
                         self.versions[int(self.b[row])])


def due_arrays(versions: Sequence[str], first: Any, second: Any, made: Any,
               last: int) -> DueArrays:
    """The matches of rounds ``1 .. last`` not created yet: ``first``/``second`` are the
    pairings (indices into the sorted ``versions``, smaller first) in the circle method's
    turn order, ``made`` the rounds created of each (a pairing's rounds are created in
    order, so the count says which)."""
    rows = [np.flatnonzero(made < number) for number in range(1, last + 1)]
    picked = np.concatenate(rows) if rows else np.zeros(0, dtype=np.intp)
    rounds = np.concatenate([np.full(len(r), k, dtype=np.int64)
                             for k, r in enumerate(rows, 1)]) if rows else picked
    return DueArrays(versions, first[picked], second[picked], rounds)


def due_candidates(
    turns: Sequence[Sequence[tuple[str, str]]], made: Mapping[tuple[str, str], int], last: int,
) -> list[Candidate]:
    """:func:`due_arrays` of plain data, as :class:`Candidate` objects. ``turns``: the
    circle method's turns of the playing versions; ``made``: rounds created per pairing
    ``(a, b)``, ``a < b``."""
    pairs = [(x, y) if x < y else (y, x) for turn in turns for x, y in turn]
    versions = sorted({v for pair in pairs for v in pair})
    index = {v: k for k, v in enumerate(versions)}
    first = np.array([index[a] for a, _ in pairs], dtype=np.intp)
    second = np.array([index[b] for _, b in pairs], dtype=np.intp)
    counts = np.array([made.get(pair, 0) for pair in pairs], dtype=np.int64)
    due = due_arrays(versions, first, second, counts, last)
    return [due.candidate(row) for row in range(len(due.a))]


def plan(
    candidates: Sequence[Candidate], *, ratings: Mapping[str, Rating],
    served: Mapping[str, int], schedule_round: int, limit: int | None,
    fairness: int = DEFAULT_FAIRNESS, order: Order = Order.CONVERGE,
) -> Plan:
    """Choose and order the matches of scheduling round ``schedule_round`` (1, 2, ...).

    ``candidates`` come in the plain round-robin order (round, then circle turns), each
    pairing's rounds ascending. ``served``: version -> the scheduling round of its last
    created match (absent: never). ``limit``: how many to create (None: all), exceeded only
    by the fairness rule.
    """
    versions = sorted({v for c in candidates for v in (c.a, c.b)})
    index = {v: k for k, v in enumerate(versions)}
    due = DueArrays(versions, np.array([index[c.a] for c in candidates], dtype=np.intp),
                    np.array([index[c.b] for c in candidates], dtype=np.intp),
                    np.array([c.round for c in candidates], dtype=np.int64))
    return plan_arrays(due, ratings=ratings, served=served, schedule_round=schedule_round,
                       limit=limit, fairness=fairness, order=order)


def plan_arrays(
    due: DueArrays, *, ratings: Mapping[str, Rating], served: Mapping[str, int],
    schedule_round: int, limit: int | None, fairness: int = DEFAULT_FAIRNESS,
    order: Order = Order.CONVERGE,
) -> Plan:
    """:func:`plan` of candidates held as arrays."""
    if fairness < 1:
        raise InvalidArgument(f"fairness must be >= 1 scheduling round, got {fairness!r}")
    if limit is not None and limit < 0:
        raise InvalidArgument(f"limit must be >= 0 or None, got {limit!r}")
    ordered = (np.arange(len(due.a)) if order is Order.ROUND_ROBIN
               else _converging(due, ratings))
    if limit is not None and limit < len(ordered):
        ordered = _fair_prefix(due, ordered, served, schedule_round, limit, fairness)
    chosen = tuple(due.candidate(row) for row in ordered.tolist())
    now_served = {v: schedule_round for c in chosen for v in (c.a, c.b)}
    return Plan(chosen, now_served)


def certainty(a: Rating | None, b: Rating | None) -> float:
    """How sure the fit is about which of two versions is stronger: the rating gap over its
    standard deviation (0 when either is unrated)."""
    if a is None or b is None:
        return 0.0
    spread = math.hypot(a.margin, b.margin) / Z95
    return abs(a.rating - b.rating) / spread if spread > 0 else math.inf


def is_new(rating: Rating | None) -> bool:
    return rating is None or rating.margin > NEW_VERSION_MARGIN


def _converging(due: DueArrays, ratings: Mapping[str, Rating]) -> Any:
    """The rows of ``due`` in converging order: new versions' pairings first (by
    :func:`certainty`), then the established ones by certainty with :data:`PLAIN_SHARE` of
    the places in plain order; ties by round and plain order."""
    known = [ratings.get(v) for v in due.versions]
    rated = np.array([r is not None for r in known], dtype=bool)
    rating = np.array([r.rating if r is not None else 0.0 for r in known])
    margin = np.array([r.margin if r is not None else 0.0 for r in known])
    new = np.array([is_new(r) for r in known], dtype=bool)
    a, b = due.a, due.b
    both = rated[a] & rated[b]
    spread = np.hypot(margin[a], margin[b]) / Z95
    with np.errstate(divide="ignore", invalid="ignore"):
        sure = np.where(spread > 0, np.abs(rating[a] - rating[b]) / spread, math.inf)
    sure = np.where(both, sure, 0.0)
    established = ~(new[a] | new[b])
    plain = np.arange(len(a))
    # Rows come in plain order, so an established row's plain rank is its rank among them.
    settled = np.flatnonzero(established)
    by_certainty = np.empty(len(settled))
    by_certainty[np.lexsort((settled, due.round[settled], sure[settled]))] = np.arange(
        len(settled))
    place = np.full(len(a), -1.0)  # the new versions' pairings before every established one
    place[settled] = np.minimum(by_certainty / (1.0 - PLAIN_SHARE),
                                (np.arange(len(settled)) + 0.5) / PLAIN_SHARE)
    return np.lexsort((plain, due.round, np.where(established, 0.0, sure), place))


def _fair_prefix(
    due: DueArrays, ordered: Any, served: Mapping[str, int], schedule_round: int,
    limit: int, fairness: int,
) -> Any:
    """The first ``limit`` of ``ordered``, plus the best candidate of every version that
    waited ``fairness - 1`` scheduling rounds; the starving ones go first."""
    size = len(ordered)
    positions = np.arange(size)
    best = np.full(len(due.versions), size)  # version -> its earliest position (best one)
    np.minimum.at(best, due.a[ordered], positions)
    np.minimum.at(best, due.b[ordered], positions)
    last = np.array([served.get(v, 0) for v in due.versions], dtype=np.int64)
    wait = schedule_round - last
    starving = np.flatnonzero((best < size) & (wait >= fairness))
    # Longest wait first, then by name (versions are sorted, so by index).
    starving = starving[np.lexsort((starving, -wait[starving]))]
    taken: list[int] = []
    seen: set[int] = set()
    for position in best[starving].tolist():
        # Taking a position serves both its versions, so a due version whose best position
        # is taken was served by it.
        if position not in seen:
            seen.add(position)
            taken.append(position)
    free = np.ones(size, dtype=bool)
    free[taken] = False
    rest = np.flatnonzero(free)[:max(0, limit - len(taken))]
    return ordered[np.concatenate([np.array(taken, dtype=np.intp), rest])]
