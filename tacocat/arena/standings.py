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
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Final

import numpy as np

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
class Standing:
    """One version's line on the leaderboard.

    ``rating``/``low``/``high``: the batch fit and its 95% interval (None before the version
    played a rated game). ``elo``: the live Elo. ``games`` counts rated games (wins + ties
    + losses); aborted games are apart. ``forfeits``: games this version forfeited, by fault.
    ``active``: the version plays now; a retired one keeps its line with ``active=False``.
    """

    version: str
    active: bool
    rating: float | None
    low: float | None
    high: float | None
    elo: float
    matches: int
    games: int
    wins: int
    ties: int
    losses: int
    aborted: int
    forfeits: Mapping[str, int] = field(default_factory=dict)

    @property
    def bot(self) -> str:
        return self.version.rpartition("@")[0]

    @property
    def margin(self) -> float | None:
        """Half the width of the 95% interval."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2.0


@dataclass(frozen=True)
class PairStanding:
    """Head-to-head record of A against B (A < B). ``los``: likelihood that A is stronger
    from their games alone; ``fit_los``: the same from the whole fit."""

    a: str
    b: str
    matches: int
    games: int
    wins: int
    ties: int
    losses: int
    aborted: int
    los: float
    fit_los: float | None


@dataclass(frozen=True)
class Crosstable:
    """Every pair's head-to-head record as arrays: the counters the fit used and, per row,
    the fit's likelihood of superiority (NaN without rated games). Pages look up a block of
    pairs; :attr:`Leaderboard.pairs` builds all the objects only when asked."""

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

    @classmethod
    def of(cls, pairs: Sequence[PairStanding]) -> Crosstable:
        """From pair objects (a snapshot stored before the arrays, or a test's)."""
        ordered = sorted(pairs, key=lambda p: (p.a, p.b))
        names = tuple(sorted({v for p in ordered for v in (p.a, p.b)}))
        index = {name: k for k, name in enumerate(names)}
        counts = PairCounts(
            0, "-", names, np.array([index[p.a] for p in ordered], dtype=np.int64),
            np.array([index[p.b] for p in ordered], dtype=np.int64),
            np.array([[getattr(p, name) for name in COUNTERS] for p in ordered],
                     dtype=np.int64).reshape(-1, len(COUNTERS)))
        fit_los = np.array([math.nan if p.fit_los is None else p.fit_los for p in ordered],
                           dtype=float)
        return cls(counts, fit_los)


@dataclass(frozen=True, eq=False)
class Leaderboard:
    """A ladder's standings as of results count ``version``, best first."""

    ladder: str
    version: int
    computed_at: float
    standings: tuple[Standing, ...]
    crosstable: Crosstable

    def standing(self, version: str) -> Standing | None:
        return next((s for s in self.standings if s.version == version), None)

    @cached_property
    def pairs(self) -> tuple[PairStanding, ...]:
        """Every pair that met, A < B, in (A, B) order."""
        return self.crosstable.standings()

    def pair(self, a: str, b: str) -> PairStanding | None:
        """The record of ``a`` against ``b``, from ``a``'s side (None if they never met)."""
        return self.pairs_of([(a, b)])[0]

    def pairs_of(self, wanted: Sequence[tuple[str, str]]) -> list[PairStanding | None]:
        """:meth:`pair` of many pairs at once: a crosstable block reads only its cells."""
        rows = self.crosstable.counts.rows_of(wanted).tolist() if wanted else []
        out: list[PairStanding | None] = []
        for (a, b), row in zip(wanted, rows, strict=True):
            if row < 0:
                out.append(None)
                continue
            found = self.crosstable.standing(row)
            if a == found.a:
                out.append(found)
                continue
            fit_los = None if found.fit_los is None else 1.0 - found.fit_los
            out.append(replace(found, a=a, b=b, wins=found.losses, losses=found.wins,
                               los=1.0 - found.los, fit_los=fit_los))
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data; the crosstable by column (a list per field), which encodes and
        parses several times faster than 19,900 small objects at 200 versions."""
        return {**self.rows_json(),
                "pairs": {name: [getattr(p, name) for p in self.pairs]
                          for name in _PAIR_FIELDS}}

    def rows_json(self) -> dict[str, Any]:
        """:meth:`to_json` without the crosstable (stored apart, as arrays)."""
        return {"ladder": self.ladder, "version": self.version,
                "computed_at": self.computed_at,
                "standings": [{**vars(s), "forfeits": dict(s.forfeits)}
                              for s in self.standings]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any],
                  crosstable: Crosstable | None = None) -> Leaderboard:
        """From :meth:`to_json`'s data, or :meth:`rows_json`'s with the ``crosstable``."""
        if crosstable is None:
            pairs = data["pairs"]
            if isinstance(pairs, Mapping):  # by column (a list of objects before that)
                rows = [PairStanding(*row) for row in zip(
                    *(pairs[name] for name in _PAIR_FIELDS), strict=True)]
            else:
                rows = [PairStanding(**p) for p in pairs]
            crosstable = Crosstable.of(rows)
        return cls(
            data["ladder"], int(data["version"]), float(data["computed_at"]),
            tuple(Standing(**s) for s in data["standings"]), crosstable,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Leaderboard):
            return NotImplemented
        return (self.rows_json() == other.rows_json()
                and _comparable(self.pairs) == _comparable(other.pairs))

    __hash__ = None  # type: ignore[assignment]  # mutable-looking arrays inside: unhashable


def _comparable(pairs: Sequence[PairStanding]) -> list[tuple[Any, ...]]:
    return [tuple(getattr(p, name) for name in _PAIR_FIELDS) for p in pairs]


_PAIR_FIELDS: Final = tuple(f.name for f in fields(PairStanding))


@dataclass(frozen=True)
class LadderStatus:
    """How far a ladder got. ``games_toward_target`` counts each playing pairing's games up
    to its target, so ``games_toward_target == games_target`` means the round robin is done
    for the versions that play now."""

    ladder: str
    version: int
    entries: int
    playing: int
    rounds: int
    rounds_completed: int
    matches_scheduled: int
    matches_recorded: int
    matches_pending: int
    matches_cancelled: int
    games_played: int
    games_target: int
    games_toward_target: int
    matches_aborted: int = 0
    """Matches given up after failing too often (``MatchStatus.ABORTED``): not rated, not
    played again; the ladder's schedule moved on without them."""
    games_aborted: int = 0
    """Their games: counted toward the target (nothing will play them), never rated."""

    @property
    def waiting_for_opponents(self) -> bool:
        """Fewer than two versions play: nothing can be scheduled, nothing is rated."""
        return self.playing < 2

    @property
    def complete(self) -> bool:
        # A ladder of one bot has reached its (empty) target but has not played anything.
        return (not self.waiting_for_opponents and self.matches_pending == 0
                and self.games_toward_target + self.games_aborted >= self.games_target)


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
    counts = board.crosstable.counts
    stored = script(redis, "store_standings", _STORE)(
        keys=[keys.standings(board.ladder)],
        args=[board.version, dumps_json(board.rows_json()), keys.events(board.ladder),
              dumps_json({"event": "standings", "ladder": board.ladder,
                          "version": board.version}),
              dumps_json({s.version: [s.rating, s.margin] for s in board.standings
                          if s.rating is not None}),
              counts.meta_json(), counts.to_blob(),
              np.asarray(board.crosstable.fit_los, dtype="<f8").tobytes()],
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
    crosstable = Crosstable(counts, np.frombuffer(fit_los, dtype="<f8"))
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
    rows = [replace(s, active=s.version in playing) for s in board.standings]
    seen = {s.version for s in rows}
    rows += [Standing(v, True, None, None, None, INITIAL_ELO, 0, 0, 0, 0, 0, 0)
             for v in sorted(playing - seen)]
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
    return Leaderboard(ladder, version, now, tuple(rows), Crosstable(counts, fit_los))
