"""Matches being played now, game by game, for people who watch (the web's "live now" panel
and live viewer).

The worker calls :func:`start_live` before a match's first game, :func:`add_live_games` with
the games that ended (at most a fraction of a second after each ends) and :func:`end_live`
once the match is recorded. Everything here is a
convenience copy with a time to live: the recorded match stays the only truth, and a worker
that dies mid-match leaves entries that expire (and are skipped once older than
``LIVE_TTL``) rather than a match shown as running forever.

Recording a match removes its live copy in the same Lua step (:mod:`.recording`), so a
Redis killed right after a result cannot keep the match "live"; and a read checks each live
entry against its match, since a late duplicate run may still be sending games of a match
recorded meanwhile: a match that is no longer scheduled is never shown, and its leftovers
are removed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from redis.exceptions import RedisError

from tacocat.engine import GameRecord
from tacocat.models import MatchStatus

from ._redis import Clock, Redis, default_clock, text, text_map
from .keys import Keys
from .results import dumps_json

LIVE_TTL: Final = 900
"""Seconds a live entry outlives its last game (a match's games are seconds apart)."""


@dataclass(frozen=True)
class LiveMatch:
    """A match being played: ``games`` of its ``total`` games are finished."""

    id: str
    ladder: str
    a: str
    b: str
    games: int
    total: int
    started_at: float
    worker: str


def start_live(redis: Redis, keys: Keys, ladder: str, match_id: str, *, a: str, b: str,
               total: int, worker: str = "", clock: Clock = default_clock) -> None:
    now = clock()
    live, games = keys.live_match(ladder, match_id), keys.live_games(ladder, match_id)
    pipe = redis.pipeline(transaction=True)
    pipe.delete(live, games)  # a re-run of a match whose worker died starts over
    pipe.hset(live, mapping={"a": a, "b": b, "total": total, "games": 0,
                             "started_at": repr(now), "worker": worker})
    pipe.expire(live, LIVE_TTL)
    pipe.zadd(keys.live_matches(ladder), {match_id: now})
    pipe.zremrangebyscore(keys.live_matches(ladder), "-inf", now - LIVE_TTL)
    pipe.expire(keys.live_matches(ladder), LIVE_TTL)
    pipe.publish(keys.events(ladder), dumps_json({"event": "live", "ladder": ladder,
                                                  "match": match_id}))
    pipe.execute()


def add_live_game(redis: Redis, keys: Keys, ladder: str, match_id: str,
                  record: GameRecord) -> None:
    add_live_games(redis, keys, ladder, match_id, [record.dumps()])


def add_live_games(redis: Redis, keys: Keys, ladder: str, match_id: str,
                   lines: Sequence[str]) -> None:
    """Append finished games, each one :meth:`GameRecord.dumps` line, in one transaction (a
    worker sends what ended since its last send: one round trip for many games)."""
    if not lines:
        return
    live, games = keys.live_match(ladder, match_id), keys.live_games(ladder, match_id)
    pipe = redis.pipeline(transaction=True)
    pipe.rpush(games, *lines)
    pipe.hincrby(live, "games", len(lines))
    pipe.expire(games, LIVE_TTL)
    pipe.expire(live, LIVE_TTL)
    pipe.execute()


def end_live(redis: Redis, keys: Keys, ladder: str, match_id: str) -> None:
    pipe = redis.pipeline(transaction=True)
    pipe.zrem(keys.live_matches(ladder), match_id)
    pipe.delete(keys.live_match(ladder, match_id), keys.live_games(ladder, match_id))
    pipe.execute()


def live_matches(redis: Redis, keys: Keys, ladder: str, *,
                 clock: Clock = default_clock) -> list[LiveMatch]:
    """The ladder's matches being played now, oldest first."""
    ids = [text(m) for m in redis.zrangebyscore(keys.live_matches(ladder),
                                                clock() - LIVE_TTL, "+inf")]
    pipe = redis.pipeline(transaction=False)
    for match_id in ids:
        pipe.hgetall(keys.live_match(ladder, match_id))
        pipe.hget(keys.match(ladder, match_id), "status")
    replies = pipe.execute()
    found = []
    for match_id, raw, status in zip(ids, replies[::2], replies[1::2], strict=True):
        fields = text_map(raw)
        if not _still_playing(redis, keys, ladder, match_id, status):
            continue
        if fields:  # expired: the worker went away
            found.append(_live(ladder, match_id, fields))
    return found


def live_match(redis: Redis, keys: Keys, ladder: str, match_id: str) -> LiveMatch | None:
    pipe = redis.pipeline(transaction=False)
    pipe.hgetall(keys.live_match(ladder, match_id))
    pipe.hget(keys.match(ladder, match_id), "status")
    raw, status = pipe.execute()
    fields = text_map(raw)
    if not fields or not _still_playing(redis, keys, ladder, match_id, status):
        return None
    return _live(ladder, match_id, fields)


def _still_playing(redis: Redis, keys: Keys, ladder: str, match_id: str,
                   status: bytes | str | None) -> bool:
    """Whether a live entry's match is still to be recorded; if not (recorded, cancelled or
    gone), remove the entry, which only a late duplicate run can have left."""
    if status is not None and text(status) == MatchStatus.SCHEDULED.value:
        return True
    with contextlib.suppress(RedisError):  # a read-only replica: the check alone suffices
        end_live(redis, keys, ladder, match_id)
    return False


def live_games(redis: Redis, keys: Keys, ladder: str, match_id: str,
               start: int = 0) -> list[GameRecord]:
    """The finished games of a running match, from game ``start`` (0-based) on."""
    return [GameRecord.loads(text(raw))
            for raw in redis.lrange(keys.live_games(ladder, match_id), start, -1)]


def _live(ladder: str, match_id: str, fields: dict[str, str]) -> LiveMatch:
    return LiveMatch(match_id, ladder, fields.get("a", ""), fields.get("b", ""),
                     int(fields.get("games", "0")), int(fields.get("total", "0")),
                     float(fields.get("started_at", "0")), fields.get("worker", ""))
