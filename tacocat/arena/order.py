"""Which due matches to create first: the order that makes ratings converge, with a fairness bound.

The round robin fixes *what* is played (every pairing, ``Ladder.rounds`` times); this module
only picks the *order* in which the scheduler creates and enqueues the matches that are due
(the candidates: rounds not created yet inside the scheduler's window). Workers take matches
in queue order, so creation order is play order.

:data:`Order.CONVERGE` (the default) sorts the candidates by

1. **new versions first**: a pairing with a version that has no rating yet, or whose 95%
   interval is wider than ±:data:`NEW_VERSION_MARGIN`, goes before the established ones;
2. **least certain first**: then by how sure the current fit is about who wins, the gap of
   the two ratings in units of its standard deviation, ``|ra − rb| / √(σa² + σb²)`` (small:
   the intervals overlap, a game there says the most); a pairing without ratings counts 0;
3. then by round and by the circle method's turn order (the plain round-robin order).

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
from typing import Final

from .errors import InvalidArgument
from .ratings import Z95

NEW_VERSION_MARGIN: Final = 100.0
"""A version whose 95% interval is wider than ± this many Elo counts as new: its pairings go
first. (A version's interval falls under ±100 after about 50 games against its field.)"""
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


def due_candidates(
    turns: Sequence[Sequence[tuple[str, str]]], made: Mapping[tuple[str, str], int], last: int,
) -> list[Candidate]:
    """The matches of rounds ``1 .. last`` not created yet, in plain round-robin order.

    ``turns``: the circle method's turns of the playing versions; ``made``: rounds created
    per pairing ``(a, b)``, ``a < b`` (a pairing's rounds are created in order, so the count
    says which)."""
    candidates: list[Candidate] = []
    for round_number in range(1, last + 1):
        for turn in turns:
            for x, y in turn:
                a, b = (x, y) if x < y else (y, x)
                if made.get((a, b), 0) < round_number:
                    candidates.append(Candidate(round_number, a, b))
    return candidates


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
    if fairness < 1:
        raise InvalidArgument(f"fairness must be >= 1 scheduling round, got {fairness!r}")
    if limit is not None and limit < 0:
        raise InvalidArgument(f"limit must be >= 0 or None, got {limit!r}")
    ordered = list(candidates) if order is Order.ROUND_ROBIN else _converging(candidates, ratings)
    if limit is None or limit >= len(ordered):
        chosen = ordered
    else:
        chosen = _fair_prefix(ordered, served, schedule_round, limit, fairness)
    now_served = {v: schedule_round for c in chosen for v in (c.a, c.b)}
    return Plan(tuple(chosen), now_served)


def certainty(a: Rating | None, b: Rating | None) -> float:
    """How sure the fit is about which of two versions is stronger: the rating gap over its
    standard deviation (0 when either is unrated)."""
    if a is None or b is None:
        return 0.0
    spread = math.hypot(a.margin, b.margin) / Z95
    return abs(a.rating - b.rating) / spread if spread > 0 else math.inf


def is_new(rating: Rating | None) -> bool:
    return rating is None or rating.margin > NEW_VERSION_MARGIN


def _converging(
    candidates: Sequence[Candidate], ratings: Mapping[str, Rating]
) -> list[Candidate]:
    def key(item: tuple[int, Candidate]) -> tuple[bool, float, int, int]:
        position, c = item
        ra, rb = ratings.get(c.a), ratings.get(c.b)
        return (not (is_new(ra) or is_new(rb)), certainty(ra, rb), c.round, position)

    return [c for _, c in sorted(enumerate(candidates), key=key)]


def _fair_prefix(
    ordered: Sequence[Candidate], served: Mapping[str, int], schedule_round: int,
    limit: int, fairness: int,
) -> list[Candidate]:
    """The first ``limit`` of ``ordered``, plus the best candidate of every version that
    waited ``fairness - 1`` scheduling rounds; the starving ones go first."""
    best: dict[str, int] = {}  # version -> its earliest position (its best candidate)
    for position, c in enumerate(ordered):
        best.setdefault(c.a, position)
        best.setdefault(c.b, position)
    wait = {v: schedule_round - served.get(v, 0) for v in best}
    due = sorted((v for v in best if wait[v] >= fairness), key=lambda v: (-wait[v], v))
    taken: set[int] = set()
    first: list[int] = []
    for v in due:
        # Taking a position serves both its versions, so a due version whose best position
        # is taken was served by it.
        if best[v] not in taken:
            taken.add(best[v])
            first.append(best[v])
    rest = [i for i in range(len(ordered)) if i not in taken][:max(0, limit - len(first))]
    return [ordered[i] for i in first + rest]
