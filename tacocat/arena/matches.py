"""Match records: deterministic ids and seeds, create-if-absent, lookup, cancellation.

A match id is derived from (ladder, round, pair), so however often and however
concurrently the scheduler runs, one pairing's round is one match: creating it is a Lua
script that does nothing when the id exists. The id reads ``LADDER.ROUND.DIGEST`` where
DIGEST is 16 hex digits of sha256 over the ladder, round and the pair's two version ids
(sorted, so the pair's order never matters).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from tacocat.engine import GameRecord
from tacocat.models import Match, MatchStatus

from ._redis import Redis, script, text, text_map
from .errors import InvalidArgument, NotFound
from .ids import ladder_of_match
from .keys import Keys
from .results import decompress_replays, parse_result

_CREATE: Final = """
-- KEYS: match hash, ladder matches zset, ladder pending zset, ladder pairs hash,
--       ladder counters hash.
-- ARGV: match id, now, pair field prefix 'A|B', then the match's field/value pairs.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local number = redis.call('HINCRBY', KEYS[5], 'created', 1)
redis.call('HSET', KEYS[1], 'number', tostring(number), unpack(ARGV, 4))
redis.call('ZADD', KEYS[2], number, ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('HINCRBY', KEYS[4], ARGV[3] .. '|scheduled', 1)
return 1
"""

_CANCEL: Final = """
-- KEYS: match hash, ladder pending zset, ladder counters hash. ARGV: match id, now.
if redis.call('HGET', KEYS[1], 'status') ~= 'scheduled' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'cancelled', 'cancelled_at', ARGV[2])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'cancelled', 1)
return 1
"""

_ABORT: Final = """
-- KEYS: match hash, ladder pending zset, ladder counters hash. ARGV: match id, now, reason.
if redis.call('HGET', KEYS[1], 'status') ~= 'scheduled' then return 0 end
redis.call('HSET', KEYS[1], 'status', 'aborted', 'aborted_at', ARGV[2], 'reason', ARGV[3])
redis.call('ZREM', KEYS[2], ARGV[1])
redis.call('HINCRBY', KEYS[3], 'aborted', 1)
redis.call('HINCRBY', KEYS[3], 'aborted_games', redis.call('HGET', KEYS[1], 'games'))
return 1
"""


def match_id(ladder: str, round_number: int, a: str, b: str) -> str:
    """The id of ``round_number``'s match between versions ``a`` and ``b`` in ``ladder``."""
    first, second = sorted((a, b))
    digest = hashlib.sha256(f"{ladder}\n{round_number}\n{first}\n{second}".encode()).hexdigest()
    return f"{ladder}.{round_number}.{digest[:16]}"


def match_seed(secret: str, ladder: str, round_number: int, a: str, b: str) -> str:
    """The match's seed: an HMAC of (ladder, round, pair) under the ladder's secret.

    Deterministic, so concurrent schedulers agree; keyed, so nobody can predict the deals of
    a match that has not been played from the seeds published in replays.
    """
    first, second = sorted((a, b))
    message = f"{ladder}\n{round_number}\n{first}\n{second}".encode()
    return hmac.new(secret.encode(), message, hashlib.sha256).hexdigest()[:24]


def pair_field(a: str, b: str) -> str:
    """The field prefix of a pair in the ladder's pairs hash: ``A|B`` with A < B."""
    first, second = sorted((a, b))
    return f"{first}|{second}"


_FIELDS_PER_READ: Final = 20_000


def pair_counts(
    redis: Redis, keys: Keys, ladder: str, pairs: Sequence[str], counters: Sequence[str]
) -> list[tuple[int, ...]]:
    """For each pair field prefix (:func:`pair_field`), its ``counters`` (0 if absent).

    One HMGET per 20,000 fields, pipelined: a 1,000-version ladder has half a million pairs,
    and one command per pair would cost far more than the counts."""
    fields = [f"{pair}|{counter}" for pair in pairs for counter in counters]
    pipe = redis.pipeline(transaction=False)
    for start in range(0, len(fields), _FIELDS_PER_READ):
        pipe.hmget(keys.pairs(ladder), fields[start:start + _FIELDS_PER_READ])
    values = [int(v or 0) for chunk in pipe.execute() for v in chunk]
    width = len(counters)
    return [tuple(values[i:i + width]) for i in range(0, len(values), width)]


def create_matches(
    redis: Redis, keys: Keys, matches: Sequence[Match]
) -> list[Match]:
    """Create the matches whose ids do not exist yet (one round trip); returns those."""
    create = script(redis, "create_match", _CREATE)
    pipe = redis.pipeline(transaction=False)
    for match in matches:
        if match.seed is None:  # only a match decoded from the arena API comes without one
            raise InvalidArgument(f"match {match.id!r} has no seed; the scheduler deals every "
                                  "match its seed")
        fields = {
            "id": match.id, "ladder": match.ladder, "round": str(match.round),
            "a": match.a, "b": match.b, "games": str(match.games), "seed": match.seed,
            "status": MatchStatus.SCHEDULED.value, "created_at": repr(match.created_at),
            "enqueued_at": repr(match.enqueued_at),
        }
        create(
            keys=[keys.match(match.ladder, match.id), keys.matches(match.ladder),
                  keys.pending(match.ladder), keys.pairs(match.ladder),
                  keys.counters(match.ladder)],
            args=[match.id, repr(match.enqueued_at), pair_field(match.a, match.b),
                  *[item for pair in fields.items() for item in pair]],
            client=pipe,
        )
    replies = pipe.execute() if matches else []
    return [match for match, created in zip(matches, replies, strict=True) if created]


def get_match(redis: Redis, keys: Keys, match_id: str) -> Match:
    """The match (with its result, without replays); :class:`NotFound` if there is none."""
    ladder = ladder_of_match(match_id)
    fields = text_map(redis.hgetall(keys.match(ladder, match_id)))
    if not fields:
        raise NotFound(f"no match {match_id!r}")
    return parse_match(fields)


def get_matches(redis: Redis, keys: Keys, ladder: str, ids: Iterable[str]) -> list[Match]:
    """The existing matches among ``ids``, in that order (one round trip)."""
    ids = list(ids)
    pipe = redis.pipeline(transaction=False)
    for mid in ids:
        pipe.hgetall(keys.match(ladder, mid))
    return [parse_match(text_map(f)) for f in pipe.execute() if f]


@dataclass(frozen=True)
class MatchPage:
    """One page of a ladder's matches and how many there are in all, so that whoever shows
    the page can say when it is not the whole list."""

    matches: list[Match]
    total: int
    """How many matches the filter selects, all pages together."""


def list_matches(
    redis: Redis, keys: Keys, ladder: str, *, status: MatchStatus | None = None,
    start: int = 0, count: int = 100, newest_first: bool = False,
) -> list[Match]:
    """The ladder's matches in creation order (``start``, ``count`` page through them;
    ``newest_first``: from the newest back); with ``status``, only those in it."""
    return match_page(redis, keys, ladder, status=status, start=start, count=count,
                      newest_first=newest_first).matches


def match_page(
    redis: Redis, keys: Keys, ladder: str, *, status: MatchStatus | None = None,
    start: int = 0, count: int = 100, newest_first: bool = False,
) -> MatchPage:
    """:func:`list_matches` with the number of matches the filter selects."""
    if start < 0 or count < 1:
        raise InvalidArgument(f"start must be >= 0 and count >= 1, got {start}, {count}")
    if status is None:
        pipe = redis.pipeline(transaction=False)
        pipe.zcard(keys.matches(ladder))
        if newest_first:
            pipe.zrevrange(keys.matches(ladder), start, start + count - 1)
        else:
            pipe.zrange(keys.matches(ladder), start, start + count - 1)
        total, raw = pipe.execute()
        return MatchPage(get_matches(redis, keys, ladder, [text(m) for m in raw]), int(total))
    if status is MatchStatus.SCHEDULED:
        ids = [text(m) for m in redis.zrange(keys.pending(ladder), 0, -1)]
        found = sorted(get_matches(redis, keys, ladder, ids), key=lambda m: m.created_at)
    else:
        ids = [text(m) for m in redis.zrange(keys.matches(ladder), 0, -1)]
        found = [m for m in get_matches(redis, keys, ladder, ids) if m.status is status]
    if newest_first:
        found.reverse()
    return MatchPage(found[start:start + count], len(found))


def match_replays_blob(redis: Redis, keys: Keys, match_id: str) -> bytes:
    """The match's replays as stored: gzip-compressed JSON Lines (empty if none kept)."""
    ladder = ladder_of_match(match_id)
    pipe = redis.pipeline(transaction=False)
    pipe.exists(keys.match(ladder, match_id))
    pipe.get(keys.match_replays(ladder, match_id))
    exists, blob = pipe.execute()
    if not exists:
        raise NotFound(f"no match {match_id!r}")
    return bytes(blob or b"")


def match_replays(redis: Redis, keys: Keys, match_id: str) -> list[GameRecord]:
    """The match's game records, in game order (empty before it is recorded)."""
    return decompress_replays(match_replays_blob(redis, keys, match_id))


def cancel_match(redis: Redis, keys: Keys, match_id: str, now: float) -> bool:
    """Cancel a scheduled match (no-op unless it is still scheduled); returns whether it did."""
    ladder = ladder_of_match(match_id)
    cancelled = script(redis, "cancel_match", _CANCEL)(
        keys=[keys.match(ladder, match_id), keys.pending(ladder), keys.counters(ladder)],
        args=[match_id, repr(now)],
    )
    return bool(cancelled)


def abort_match(redis: Redis, keys: Keys, match_id: str, reason: str, now: float) -> bool:
    """Give up a scheduled match that keeps failing, with ``reason`` (no-op unless it is
    still scheduled); returns whether it did."""
    ladder = ladder_of_match(match_id)
    aborted = script(redis, "abort_match", _ABORT)(
        keys=[keys.match(ladder, match_id), keys.pending(ladder), keys.counters(ladder)],
        args=[match_id, repr(now), reason],
    )
    return bool(aborted)


def parse_match(fields: dict[str, str]) -> Match:
    raw = fields.get("result")
    result = parse_result(json.loads(raw)) if raw else None
    recorded_at = fields.get("recorded_at")
    seq = fields.get("seq")
    return Match(
        fields["id"], fields["ladder"], int(fields["round"]), fields["a"], fields["b"],
        int(fields["games"]), fields["seed"], MatchStatus(fields["status"]),
        float(fields["created_at"]), float(fields["enqueued_at"]),
        float(recorded_at) if recorded_at else None, int(seq) if seq else None, result,
        fields.get("reason", ""),
    )
