"""Recording a match result exactly once, with the live Elo update in commit order.

RQ delivers a job at least once, and the same match can be played twice at the same time.
:func:`record_match` therefore commits with one Lua script, keyed by the match id, that
does everything or nothing:

1. if the match is already recorded, nothing (the first result wins; the caller learns
   it lost);
2. if the ladder's results count moved since the caller read the ratings, nothing either,
   and the caller retries (optimistic concurrency, see below);
3. otherwise, in one step: store the result and replays, mark the match recorded, append an
   entry to the ladder's results log (a stream, in commit order), set the two versions'
   new live Elo, add to the per-version and per-pair counters, bump the ladder's results
   count (its *version*), remove the match's live copy (:mod:`tacocat.arena.live`) and
   publish a ``result`` event.

**Durable before acknowledged.** Redis runs with ``appendfsync everysec``: every write
reaches the append-only file (the kernel) before its reply, so a killed Redis loses nothing,
but a crash of the machine may lose the last second. So a committed result is acknowledged
(``Recorded.persisted``) only after ``WAITAOF 1 0`` says the append-only file holding it was
fsynced: one fsync per match rather than per write, which ``appendfsync always`` would cost
every lease renewal and queue operation too (docs/WORKER.md, "Faults we test", has both
costs). A server without an append-only file (or older than 7.2) cannot promise it;
``persisted`` is then None.

**Why Python computes the Elo and the script only checks.** The new ratings come from
:func:`tacocat.arena.ratings.elo_update`, applied per rated game in game order, on ratings
read together with the results count; the script refuses them if the count moved. So the
commit order is the one writer order, and the arithmetic exists exactly once, in Python:
:func:`recompute_ratings` replays the results log through the same function and reproduces
the stored floats bit for bit, whatever the server's Lua or libm would have rounded.
Ratings are stored as ``repr`` of the float, which round-trips exactly.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from redis.exceptions import ResponseError

from tacocat.models import SIDES, Match, MatchResult, MatchStatus

from ._redis import Clock, Redis, default_clock, number, script, text, text_map
from .errors import Contention, InvalidArgument, NotFound
from .keys import Keys
from .matches import get_match, pair_field
from .ratings import DEFAULT_ANCHOR, elo_update
from .results import dumps_json

INITIAL_ELO: Final = DEFAULT_ANCHOR
"""Live Elo of a version before its first game (1500; a new version starts afresh)."""
_ATTEMPTS: Final = 50
FSYNC_TIMEOUT: Final = 5.0
"""Seconds a committed result may wait for its fsync before it is returned unpersisted."""
_LOG_PAGE: Final = 1000

_RECORD: Final = """
-- KEYS: 1 match hash, 2 match replays, 3 ladder counters, 4 ladder elo, 5 ladder stats,
--       6 ladder pairs, 7 ladder pending zset, 8 ladder results stream, 9 ladder live
--       matches zset, 10 live match hash, 11 live games list.
-- ARGV: 1 match id, 2 expected results count, 3 now, 4 result JSON, 5 replays (may be ''),
--       6 events channel, 7 event JSON, 8 version a, 9 new elo a, 10 version b,
--       11 new elo b, 12 rated scores of a, 13 wins, 14 ties, 15 losses, 16 games,
--       17 aborted, 18 number of stats increments N, then N field/increment pairs, then the
--       number of pair increments M, then M field/increment pairs.
-- Returns {1, seq} recorded, {0, seq} already recorded, {-1, count} retry, {-2, 0} missing.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {-2, 0} end
if status == 'recorded' then
  return {0, tonumber(redis.call('HGET', KEYS[1], 'seq'))}
end
local count = tonumber(redis.call('HGET', KEYS[3], 'results') or '0')
if count ~= tonumber(ARGV[2]) then return {-1, count} end
local seq = tostring(count + 1)
redis.call('HSET', KEYS[3], 'results', seq)
redis.call('HINCRBY', KEYS[3], 'games', ARGV[16])
if status == 'cancelled' then redis.call('HINCRBY', KEYS[3], 'cancelled', -1) end
if status == 'aborted' then
  redis.call('HINCRBY', KEYS[3], 'aborted', -1)
  redis.call('HINCRBY', KEYS[3], 'aborted_games', -tonumber(ARGV[16]))
end
redis.call('HSET', KEYS[1], 'status', 'recorded', 'seq', seq, 'recorded_at', ARGV[3],
           'result', ARGV[4])
if ARGV[5] ~= '' then redis.call('SET', KEYS[2], ARGV[5]) end
redis.call('HSET', KEYS[4], ARGV[8], ARGV[9], ARGV[10], ARGV[11])
local i = 18
for _ = 1, tonumber(ARGV[i]) do
  redis.call('HINCRBY', KEYS[5], ARGV[i + 1], ARGV[i + 2])
  i = i + 2
end
i = i + 1
for _ = 1, tonumber(ARGV[i]) do
  redis.call('HINCRBY', KEYS[6], ARGV[i + 1], ARGV[i + 2])
  i = i + 2
end
redis.call('ZREM', KEYS[7], ARGV[1])
redis.call('ZREM', KEYS[9], ARGV[1])
redis.call('DEL', KEYS[10], KEYS[11])
redis.call('XADD', KEYS[8], '*', 'seq', seq, 'match', ARGV[1], 'a', ARGV[8], 'b', ARGV[10],
           'scores', ARGV[12], 'wins', ARGV[13], 'ties', ARGV[14], 'losses', ARGV[15],
           'aborted', ARGV[17], 'at', ARGV[3])
redis.call('PUBLISH', ARGV[6], ARGV[7])
return {1, tonumber(seq)}
"""

_STORE_ELO: Final = """
-- KEYS: ladder counters, ladder elo. ARGV: expected results count, then version/elo pairs.
if tonumber(redis.call('HGET', KEYS[1], 'results') or '0') ~= tonumber(ARGV[1]) then
  return 0
end
redis.call('DEL', KEYS[2])
if #ARGV > 1 then redis.call('HSET', KEYS[2], unpack(ARGV, 2)) end
return 1
"""


@dataclass(frozen=True)
class Recorded:
    """What :func:`record_match` did: ``recorded`` is True for the call that committed the
    result, False for a duplicate; ``seq`` is the match's place in the results log."""

    recorded: bool
    seq: int
    match: Match
    persisted: bool | None = None
    """For the committing call: True once the append-only file holding the result was
    fsynced, False if that did not happen within ``fsync_timeout``, None when the server
    has no append-only file (or no WAITAOF) to ask, or nothing was awaited."""


def record_match(
    redis: Redis, keys: Keys, match_id: str, result: MatchResult,
    *, clock: Clock = default_clock, fsync_timeout: float | None = FSYNC_TIMEOUT,
) -> Recorded:
    """Commit ``result`` for ``match_id`` exactly once (see the module docstring), and wait
    up to ``fsync_timeout`` seconds for it to reach the disk (None: do not wait).

    Raises :class:`NotFound` for an unknown match and :class:`InvalidArgument` if the
    result's game count differs from the match's.
    """
    match = get_match(redis, keys, match_id)
    if match.status is MatchStatus.RECORDED:
        return Recorded(False, match.seq or 0, match)
    if len(result.games) != match.games:
        raise InvalidArgument(
            f"match {match_id} has {match.games} games but the result holds "
            f"{len(result.games)}; record every game (forfeits included)"
        )
    ladder = match.ladder
    stats, pairs = _increments(match, result)
    scores = result.rated_scores()
    summary = dumps_json(result.summary_json())
    record = script(redis, "record_match", _RECORD)
    for attempt in range(_ATTEMPTS):
        pipe = redis.pipeline(transaction=True)
        pipe.hget(keys.counters(ladder), "results")
        pipe.hmget(keys.elo(ladder), [match.a, match.b])
        count_raw, (elo_a, elo_b) = pipe.execute()
        count = number(count_raw)
        rating_a, rating_b = match_elo(
            float(elo_a) if elo_a is not None else INITIAL_ELO,
            float(elo_b) if elo_b is not None else INITIAL_ELO, scores)
        now = clock()
        event = dumps_json({"event": "result", "ladder": ladder, "version": count + 1,
                            "match": match_id})
        reply = record(
            keys=[keys.match(ladder, match_id), keys.match_replays(ladder, match_id),
                  keys.counters(ladder), keys.elo(ladder), keys.stats(ladder),
                  keys.pairs(ladder), keys.pending(ladder), keys.results(ladder),
                  # The live copy ends with the record, in the same step: a worker or a
                  # Redis lost right after recording cannot leave it "playing".
                  keys.live_matches(ladder), keys.live_match(ladder, match_id),
                  keys.live_games(ladder, match_id)],
            args=[match_id, count, repr(now), summary, result.replays, keys.events(ladder),
                  event, match.a, repr(rating_a), match.b, repr(rating_b),
                  " ".join(repr(s) for s in scores), result.wins, result.ties, result.losses,
                  len(result.games), result.aborted, len(stats), *_flat(stats), len(pairs),
                  *_flat(pairs)],
        )
        outcome, seq = int(reply[0]), int(reply[1])
        if outcome == 1:
            persisted = None if fsync_timeout is None else wait_persisted(redis, fsync_timeout)
            return Recorded(True, seq, get_match(redis, keys, match_id), persisted)
        if outcome == 0:
            return Recorded(False, seq, get_match(redis, keys, match_id))
        if outcome == -2:
            raise NotFound(f"match {match_id!r} vanished while being recorded")
        # Another match of this ladder committed first: re-read the ratings and go again.
        time.sleep(random.uniform(0, 0.002 * (attempt + 1)))
    raise Contention(
        f"recording match {match_id} lost the race {_ATTEMPTS} times in a row to other "
        "results of its ladder; run the job again (it stays exactly-once)"
    )


def wait_persisted(redis: Redis, timeout: float) -> bool | None:
    """Wait until this client's writes so far are fsynced to the append-only file: True
    once they are, False after ``timeout`` seconds, None if the server cannot say (no
    append-only file, or a server older than WAITAOF)."""
    try:
        reply = redis.waitaof(1, 0, max(1, int(timeout * 1000)))
    except ResponseError:
        return None
    return bool(reply and int(reply[0]) >= 1)


def _increments(match: Match, result: MatchResult) -> tuple[dict[str, int], dict[str, int]]:
    """The per-version and per-pair counter increments of a result."""
    stats: dict[str, int] = {}
    wins = {"a": result.wins, "b": result.losses}
    for side, version in zip(SIDES, (match.a, match.b), strict=True):
        rated = result.wins + result.ties + result.losses
        stats[f"{version}|matches"] = 1
        stats[f"{version}|games"] = rated
        stats[f"{version}|wins"] = wins[side]
        stats[f"{version}|ties"] = result.ties
        stats[f"{version}|losses"] = rated - wins[side] - result.ties
        stats[f"{version}|aborted"] = result.aborted
        for fault, count in result.forfeits(side).items():
            stats[f"{version}|forfeit:{fault}"] = count
    pair = pair_field(match.a, match.b)
    a_first = match.a < match.b  # the pairs hash counts from the smaller id's side
    pairs = {
        f"{pair}|matches": 1,
        f"{pair}|games": result.wins + result.ties + result.losses,
        f"{pair}|wins": result.wins if a_first else result.losses,
        f"{pair}|losses": result.losses if a_first else result.wins,
        f"{pair}|ties": result.ties,
        f"{pair}|aborted": result.aborted,
    }
    return stats, pairs


def _flat(counts: Mapping[str, int]) -> list[str | int]:
    return [item for field, value in counts.items() for item in (field, value)]


# -- the results log ---------------------------------------------------------------------------


@dataclass(frozen=True)
class LogEntry:
    """One recorded match in the results log. ``scores`` are A's rated game scores."""

    seq: int
    match: str
    a: str
    b: str
    scores: tuple[float, ...]
    wins: int
    ties: int
    losses: int
    recorded_at: float
    aborted: int | None = None
    """The match's aborted games; None in entries written before the log carried it."""


def read_log(
    redis: Redis, keys: Keys, ladder: str, *, upto: int | None = None
) -> list[LogEntry]:
    """The ladder's results log in commit order (entries with ``seq <= upto`` if given)."""
    return read_log_after(redis, keys, ladder, upto=upto)[0]


def read_log_after(
    redis: Redis, keys: Keys, ladder: str, after: str = "-", *, upto: int | None = None
) -> tuple[list[LogEntry], str]:
    """The log entries after stream id ``after`` ("-": from the start), and the stream id
    of the last one returned (``after`` if none): pass it back to read only what is new."""
    entries: list[LogEntry] = []
    start = after if after == "-" else "(" + after
    last = after
    while True:
        page = redis.xrange(keys.results(ladder), min=start, max="+", count=_LOG_PAGE) or []
        for stream_id, raw in page:
            entry = _log_entry(text_map(raw or {}))
            if upto is not None and entry.seq > upto:
                return entries, last
            entries.append(entry)
            last = text(stream_id)
        if len(page) < _LOG_PAGE:
            return entries, last
        start = "(" + last


def recent_log(redis: Redis, keys: Keys, ladder: str, count: int) -> list[LogEntry]:
    """The last ``count`` log entries, newest first."""
    page = redis.xrevrange(keys.results(ladder), max="+", min="-", count=count) or []
    return [_log_entry(text_map(raw or {})) for _, raw in page]


def _log_entry(fields: dict[str, str]) -> LogEntry:
    scores = tuple(float(s) for s in fields["scores"].split()) if fields["scores"] else ()
    return LogEntry(int(fields["seq"]), fields["match"], fields["a"], fields["b"], scores,
                    int(fields["wins"]), int(fields["ties"]), int(fields["losses"]),
                    float(fields["at"]),
                    int(fields["aborted"]) if "aborted" in fields else None)


@dataclass(frozen=True)
class EloReplay:
    """Live Elo recomputed from the results log next to the stored values, both as of
    results count ``version``."""

    version: int
    recomputed: Mapping[str, float]
    stored: Mapping[str, float]

    @property
    def consistent(self) -> bool:
        """Whether every stored rating equals its recomputed value exactly."""
        return dict(self.recomputed) == dict(self.stored)


def match_elo(rating_a: float, rating_b: float,
              scores: Iterable[float]) -> tuple[float, float]:
    """A's and B's live Elo after a match in which A scored ``scores`` (its rated games, in
    game order): one :func:`~tacocat.arena.ratings.elo_update` per game, the operations
    :func:`record_match` stores and every replay repeats, so a replay matches bit for bit."""
    for score in scores:
        rating_a, rating_b = elo_update(rating_a, rating_b, score)
    return rating_a, rating_b


def replay_elo(
    entries: Iterable[LogEntry], ratings: Mapping[str, float] | None = None,
    on_match: Callable[[LogEntry, float, float], None] | None = None,
) -> dict[str, float]:
    """Live Elo after the given log entries, replayed from ``ratings`` (the live Elo before
    them; a version not in it starts at :data:`INITIAL_ELO`). ``on_match`` gets each entry
    with A's and B's Elo after it."""
    out = dict(ratings or {})
    for entry in entries:
        rating_a, rating_b = match_elo(out.get(entry.a, INITIAL_ELO),
                                       out.get(entry.b, INITIAL_ELO), entry.scores)
        out[entry.a], out[entry.b] = rating_a, rating_b
        if on_match is not None:
            on_match(entry, rating_a, rating_b)
    return out


def recompute_ratings(
    redis: Redis, keys: Keys, ladder: str, *, store: bool = False
) -> EloReplay:
    """Rebuild the ladder's live Elo from its results log and compare with the stored one.

    With ``store``, the recomputed ratings replace the stored ones (a repair tool), unless a
    result was committed meanwhile; then :class:`Contention` asks to run it again.
    """
    pipe = redis.pipeline(transaction=True)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hgetall(keys.elo(ladder))
    version_raw, stored_raw = pipe.execute()
    version = number(version_raw)
    stored = {key: float(value) for key, value in text_map(stored_raw).items()}
    recomputed = replay_elo(read_log(redis, keys, ladder, upto=version))
    if store:
        flat = [item for pair in recomputed.items() for item in (pair[0], repr(pair[1]))]
        stored_ok = script(redis, "store_elo", _STORE_ELO)(
            keys=[keys.counters(ladder), keys.elo(ladder)], args=[version, *flat])
        if not stored_ok:
            raise Contention(f"ladder {ladder!r} got a new result while rebuilding; run again")
        stored = dict(recomputed)
    return EloReplay(version, recomputed, stored)
