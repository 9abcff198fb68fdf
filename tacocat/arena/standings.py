"""Standings: the leaderboard snapshot, the crosstable, ladder progress and change events.

After every recorded match :func:`update_standings` refits the whole ladder with the batch
maximum-likelihood model (:func:`tacocat.arena.ratings.fit_arrays`, ratings with 95%
intervals) from the per-pair counters, and stores the result as a snapshot tagged with the
ladder's *version* (its results count). Several workers may refit at once; a Lua guard
stores a snapshot only if it is newer than the stored one, so an older fit never overwrites
a newer one. :func:`leaderboard` reads the snapshot (refitting first if it is behind) and
marks which versions play now and which retired.

Every change is announced on the ladder's pub/sub channel (``Keys.events``) as JSON:
``{"event": "result", "ladder", "version", "match"}`` when a result commits,
``{"event": "standings", "ladder", "version"}`` when a newer snapshot is stored, and
``{"event": "scheduled" | "requeued", "ladder", "matches"}`` from the scheduler. Versions
increase by one per recorded match, so a subscriber that missed messages can tell.
"""

from __future__ import annotations

import json
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final

import numpy as np

from tacocat.models import LadderStatus, Leaderboard, PairStanding, Standing

from ._redis import Clock, Redis, default_clock, number, script, text_map
from .keys import Keys
from .ladders import get_ladder, playing_versions
from .paircounts import (
    BLOB_FIELD,
    COUNTERS,
    META_FIELD,
    PairCounts,
    advance,
    read_pair_counts,
    read_whole,
    stored_base,
)
from .ratings import fit_arrays, likelihood_of_superiority
from .recording import INITIAL_ELO, LogEntry, recent_log
from .results import dumps_json

_STORE: Final = """
-- KEYS: ladder standings hash. ARGV: version, snapshot JSON (without the crosstable), events
--       channel, event JSON, compact ratings JSON, pair counts' meta JSON, pair counts blob,
--       fit LOS blob.
local stored = redis.call('HGET', KEYS[1], 'version')
if stored and tonumber(stored) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'board', ARGV[2], 'ratings', ARGV[5],
           'pairs_meta', ARGV[6], 'pairs', ARGV[7], 'pairs_fit_los', ARGV[8])
-- 'data' is where an older arena keeps its snapshot (crosstable inside): gone, so an older
-- reader refits for itself instead of misreading this one.
redis.call('HDEL', KEYS[1], 'data')
redis.call('PUBLISH', ARGV[3], ARGV[4])
return 1
"""

_RELEASE: Final = """
-- KEYS: the refit lease. ARGV: the holder's token. Deletes the lease only if still ours.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
REFIT_LEASE_SECONDS: Final = 60.0
"""How long a refit lease lasts if its holder dies mid-refit (a refit takes well under 5 s
even at 1,000 versions); meanwhile readers still refit on read."""
_REFIT_PASSES: Final = 3



@dataclass(frozen=True)
class CrosstableArrays:
    """Every pair's head-to-head record as arrays (a :class:`~tacocat.models.Crosstable`):
    the counters the fit used and, per row, the fit's likelihood of superiority (NaN without
    rated games). Pages look up a block of pairs; :attr:`Leaderboard.pairs` builds all the
    objects only when asked."""

    counts: PairCounts
    fit_los: Any

    def __len__(self) -> int:
        return len(self.counts)

    def standing(self, row: int) -> PairStanding:
        c = self.counts
        values = [int(v) for v in c.counts[row]]
        named = dict(zip(COUNTERS, values, strict=True))
        fit_los = float(self.fit_los[row])
        return PairStanding(
            a=c.names[int(c.i[row])], b=c.names[int(c.j[row])],
            los=likelihood_of_superiority(named["wins"], named["losses"]),
            fit_los=None if math.isnan(fit_los) else fit_los, **named)

    def standings(self) -> tuple[PairStanding, ...]:
        return tuple(self.standing(row) for row in range(len(self)))

    def find(self, wanted: Sequence[tuple[str, str]]) -> list[PairStanding | None]:
        rows = self.counts.rows_of(wanted).tolist() if wanted else []
        return [None if row < 0 else self.standing(row) for row in rows]


def update_standings(
    redis: Redis, keys: Keys, ladder: str, *, clock: Clock = default_clock
) -> Leaderboard:
    """Refit the ladder from its counters and store the snapshot unless a newer one exists.

    Returns the leaderboard it computed (which is the stored one, or older than it). The
    pair counters come from the previous snapshot plus the results since
    (:mod:`.paircounts`); the per-version counters, the live Elo and the warm start are read
    together with the results count, in one MULTI.
    """
    extra: list[tuple[str, Sequence[Any]]] = [
        ("hgetall", (keys.stats(ladder),)), ("hgetall", (keys.elo(ladder),)),
        ("hmget", (keys.standings(ladder), ["ratings", META_FIELD, BLOB_FIELD]))]
    pipe = redis.pipeline(transaction=True)
    pipe.hget(keys.counters(ladder), "results")
    for name, args in extra:
        getattr(pipe, name)(*args)
    version_raw, stats_raw, elo_raw, (previous, meta, blob) = pipe.execute()
    version = number(version_raw)
    base = stored_base(meta, blob)
    counts = advance(redis, keys, ladder, base, version) if base is not None else None
    if counts is None:
        counts, (stats_raw, elo_raw, (previous, _, _)) = read_whole(redis, keys, ladder, extra)
        version = counts.version
    # The previous fit is the warm start: after a few more results Newton needs a step or two.
    start = {v: rating for v, (rating, _) in json.loads(previous).items()} if previous else None
    board = _compute(ladder, version, text_map(stats_raw), counts, text_map(elo_raw),
                     clock(), start)
    store_standings(redis, keys, board)
    return board


def refit_if_free(
    redis: Redis, keys: Keys, ladder: str, *, clock: Clock = default_clock,
    on_refit: Callable[[float], None] | None = None,
) -> int:
    """Refit the standings unless another process is refitting this ladder now; returns
    how many refits this call ran.

    At a few hundred versions a refit costs more than recording a result, so one refit per
    result would make every worker wait for a refit: instead the workers take turns through a
    lease, and results recorded during a refit are covered by the next one. The holder
    releases the lease *before* checking whether it is behind, so a result whose worker
    found the lease taken is always seen by some refit (or, past ``_REFIT_PASSES`` refits in
    a row, by the next worker or reader). ``on_refit`` gets each refit's seconds.
    """
    lease = keys.refitting(ladder)
    release = script(redis, "release_refit_lease", _RELEASE)
    refits = 0
    for _ in range(_REFIT_PASSES):
        token = secrets.token_hex(8)
        if not redis.set(lease, token, nx=True, px=int(REFIT_LEASE_SECONDS * 1000)):
            break
        started = time.perf_counter()
        try:
            update_standings(redis, keys, ladder, clock=clock)
        finally:
            release(keys=[lease], args=[token])
            refits += 1
            if on_refit is not None:
                on_refit(time.perf_counter() - started)
        if not is_behind(redis, keys, ladder):
            break
    return refits


def is_behind(redis: Redis, keys: Keys, ladder: str) -> bool:
    """Whether the stored snapshot is older than the ladder's results."""
    pipe = redis.pipeline(transaction=False)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hget(keys.standings(ladder), "version")
    results, snapshot = pipe.execute()
    return number(snapshot, -1) < number(results)


def store_standings(redis: Redis, keys: Keys, board: Leaderboard) -> bool:
    """Store ``board`` as the ladder's snapshot if it is newer than the stored one, and
    announce it; returns whether it was stored (False: a newer or equal one is there)."""
    table = board.crosstable
    if not isinstance(table, CrosstableArrays):
        raise TypeError(f"store_standings stores a board its arena computed (a crosstable of "
                        f"arrays), not one with a {type(table).__name__}")
    counts = table.counts
    stored = script(redis, "store_standings", _STORE)(
        keys=[keys.standings(board.ladder)],
        args=[board.version, dumps_json(board.rows_json()), keys.events(board.ladder),
              dumps_json({"event": "standings", "ladder": board.ladder,
                          "version": board.version}),
              dumps_json({s.version: [s.rating, s.margin] for s in board.standings
                          if s.rating is not None}),
              counts.meta_json(), counts.to_blob(),
              np.asarray(table.fit_los, dtype="<f8").tobytes()],
    )
    return bool(stored)


def _stored_board(data: bytes | None, board: bytes | None, meta: bytes | None,
                  blob: bytes | None, fit_los: bytes | None) -> Leaderboard | None:
    """The stored snapshot. ``data`` is one an older arena stored (crosstable inside its
    JSON); storing ours deletes it, so when it is there it is the newer one."""
    if data:
        return Leaderboard.from_json(json.loads(data))
    counts = stored_base(meta, blob)
    if not board or counts is None or fit_los is None:
        return None
    crosstable = CrosstableArrays(counts, np.frombuffer(fit_los, dtype="<f8"))
    return Leaderboard.from_json(json.loads(board), crosstable)


def leaderboard(
    redis: Redis, keys: Keys, ladder: str, *, refresh: bool = True,
    clock: Clock = default_clock,
) -> Leaderboard:
    """The ladder's standings: the stored snapshot, refitted first if it is behind (and
    ``refresh``), with playing versions marked active and those without games added."""
    get_ladder(redis, keys, ladder)  # NotFound for an unknown ladder
    pipe = redis.pipeline(transaction=False)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hmget(keys.standings(ladder), ["data", "board", META_FIELD, BLOB_FIELD, "pairs_fit_los"])
    version_raw, stored = pipe.execute()
    board = _stored_board(*stored)
    if board is None or (refresh and board.version < number(version_raw)):
        board = update_standings(redis, keys, ladder, clock=clock)
    playing = set(playing_versions(redis, keys, ladder))
    rows = [replace(s, active=s.version in playing, rank=rank)
            for rank, s in enumerate(board.standings, 1)]
    seen = {s.version for s in rows}
    rows += [Standing(v, True, None, None, None, INITIAL_ELO, 0, 0, 0, 0, 0, 0, rank=rank)
             for rank, v in enumerate(sorted(playing - seen), len(rows) + 1)]
    return replace(board, standings=tuple(rows))


def recent_matches(redis: Redis, keys: Keys, ladder: str, count: int = 20) -> list[LogEntry]:
    """The ladder's last ``count`` recorded matches, newest first."""
    return recent_log(redis, keys, ladder, count)


def ladder_status(redis: Redis, keys: Keys, ladder: str) -> LadderStatus:
    settings = get_ladder(redis, keys, ladder)
    playing = playing_versions(redis, keys, ladder)
    pipe = redis.pipeline(transaction=False)
    pipe.hgetall(keys.counters(ladder))
    pipe.zcard(keys.pending(ladder))
    pipe.zcard(keys.entries(ladder))
    counters_raw, pending, entry_count = pipe.execute()
    counts = read_pair_counts(redis, keys, ladder)
    among = counts.among(playing)
    pairings = len(playing) * (len(playing) - 1) // 2
    target = settings.games_per_pairing
    played = counts.column("games")[among] + counts.column("aborted")[among]
    matches = counts.column("matches")[among]
    # A pairing not in the counts has not met: it holds the completed rounds at 0.
    completed = int(matches.min()) if pairings and len(matches) == pairings else 0
    counters = text_map(counters_raw)
    return LadderStatus(
        ladder=ladder,
        version=number(counters.get("results")),
        entries=int(entry_count),
        playing=len(playing),
        rounds=settings.rounds,
        rounds_completed=completed,
        matches_scheduled=number(counters.get("created")),
        matches_recorded=number(counters.get("results")),
        matches_pending=int(pending),
        matches_cancelled=number(counters.get("cancelled")),
        games_played=number(counters.get("games")),
        games_target=pairings * target,
        games_toward_target=int(np.minimum(played, target).sum()),
        matches_aborted=number(counters.get("aborted")),
        games_aborted=number(counters.get("aborted_games")),
    )


def _compute(
    ladder: str, version: int, stats: dict[str, str], counts: PairCounts,
    elo: dict[str, str], now: float, start: Mapping[str, float] | None = None,
) -> Leaderboard:
    per_version: dict[str, dict[str, int]] = {}
    for key, value in stats.items():
        vid, _, counter = key.rpartition("|")
        per_version.setdefault(vid, {})[counter] = int(value)
    wins, losses, ties = (counts.column(name) for name in ("wins", "losses", "ties"))
    rated = (wins + losses + ties) > 0
    fit = (fit_arrays(counts.names, counts.i, counts.j, wins, losses, ties, start=start)
           if rated.any() else None)
    rows = []
    for vid, tally in per_version.items():
        fitted = fit[vid] if fit is not None and vid in fit and fit[vid].games > 0 else None
        forfeits = {k.partition(":")[2]: n for k, n in tally.items()
                    if k.startswith("forfeit:") and n}
        rows.append(Standing(
            version=vid, active=True,
            rating=fitted.rating if fitted else None, low=fitted.low if fitted else None,
            high=fitted.high if fitted else None,
            elo=float(elo[vid]) if vid in elo else INITIAL_ELO,
            forfeits=dict(sorted(forfeits.items())),
            **{name: tally.get(name, 0) for name in COUNTERS},
        ))
    rows.sort(key=lambda s: (s.rating is None, -(s.rating or 0.0), -s.elo, s.version))
    fit_los = np.full(len(counts), math.nan)
    if fit is not None:
        # The fit's columns are the counts' names in the same (sorted) order.
        fit_los[rated] = fit.los_columns(counts.i[rated], counts.j[rated])
    return Leaderboard(ladder, version, now, tuple(rows), CrosstableArrays(counts, fit_los))
