"""Rating history: every version's live Elo after each recorded match (read-only).

The results log (``ladder:{L}:results``) holds every recorded match in commit order with A's
rated game scores. Replaying it (:func:`tacocat.arena.recording.replay_elo`, the same
operations :func:`tacocat.arena.recording.record_match` made) gives each version's live Elo
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
from .recording import INITIAL_ELO, LogEntry, read_log_after, replay_elo


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
    log_id: str = "-"
    """The results-log stream id of the last match in it (to read on from there)."""
    created_at: float = 0.0
    """The ladder's creation time: a history never continues on a ladder made anew."""

    def to_json(self) -> dict[str, Any]:
        return {
            "ladder": self.ladder,
            "version": self.version,
            "initial": INITIAL_ELO,
            "series": {v: [[p.seq, p.at, p.elo] for p in points]
                       for v, points in self.series.items()},
        }


def rating_history(
    redis: Redis, keys: Keys, ladder: str, *, since: RatingHistory | None = None
) -> RatingHistory:
    """The ladder's live Elo history from its results log (:class:`NotFound` if unknown).

    With ``since``, an earlier history of this ladder, only the log entries after it are read
    and replayed (a 200-version ladder's log holds tens of thousands of matches; the web page
    asks for the history on every render)."""
    created_at = get_ladder(redis, keys, ladder).created_at
    if since is None or since.ladder != ladder or since.created_at != created_at:
        since = RatingHistory(ladder, 0, {}, "-", created_at)
    ratings = {v: points[-1].elo for v, points in since.series.items()}
    series: dict[str, list[RatingPoint]] = {}
    entries, log_id = read_log_after(redis, keys, ladder, since.log_id)
    version = entries[-1].seq if entries else since.version

    def point(entry: LogEntry, rating_a: float, rating_b: float) -> None:
        series.setdefault(entry.a, []).append(RatingPoint(entry.seq, entry.recorded_at, rating_a))
        series.setdefault(entry.b, []).append(RatingPoint(entry.seq, entry.recorded_at, rating_b))

    replay_elo(entries, ratings, point)
    merged = dict(since.series)
    for v, points in series.items():
        merged[v] = merged.get(v, ()) + tuple(points)
    return RatingHistory(ladder, version, merged, log_id, created_at)
