"""Rating history: every version's live Elo after each recorded match (read-only).

The results log (``ladder:{L}:results``) holds every recorded match in commit order with A's
rated game scores. Replaying it through the same :func:`tacocat.arena.ratings.elo_update`
calls that :func:`tacocat.arena.recording.record_match` made gives each version's live Elo
after every match it played; the last point of each series is the stored live Elo, bit for
bit (see :func:`tacocat.arena.recording.recompute_ratings`). The web UI draws it as the
rating-over-time chart.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._redis import Redis
from .keys import Keys
from .ladders import get_ladder
from .ratings import elo_update
from .recording import INITIAL_ELO, read_log


@dataclass(frozen=True)
class RatingPoint:
    """A version's live Elo right after the match with results-log number ``seq``
    (recorded at ``at``, seconds since the epoch)."""

    seq: int
    at: float
    elo: float


@dataclass(frozen=True)
class RatingHistory:
    """Live Elo over time for every version of a ladder that played, as of results count
    ``version``. ``series[v]`` is in commit order; before its first point a version stood
    at :data:`INITIAL_ELO`."""

    ladder: str
    version: int
    series: Mapping[str, tuple[RatingPoint, ...]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "ladder": self.ladder,
            "version": self.version,
            "initial": INITIAL_ELO,
            "series": {v: [[p.seq, p.at, p.elo] for p in points]
                       for v, points in self.series.items()},
        }


def rating_history(redis: Redis, keys: Keys, ladder: str) -> RatingHistory:
    """The ladder's live Elo history from its results log (:class:`NotFound` if unknown)."""
    get_ladder(redis, keys, ladder)
    ratings: dict[str, float] = {}
    series: dict[str, list[RatingPoint]] = {}
    version = 0
    for entry in read_log(redis, keys, ladder):
        rating_a = ratings.get(entry.a, INITIAL_ELO)
        rating_b = ratings.get(entry.b, INITIAL_ELO)
        for score in entry.scores:
            rating_a, rating_b = elo_update(rating_a, rating_b, score)
        ratings[entry.a], ratings[entry.b] = rating_a, rating_b
        series.setdefault(entry.a, []).append(RatingPoint(entry.seq, entry.recorded_at, rating_a))
        series.setdefault(entry.b, []).append(RatingPoint(entry.seq, entry.recorded_at, rating_b))
        version = entry.seq
    return RatingHistory(ladder, version, {v: tuple(p) for v, p in series.items()})
