"""Standings: the leaderboard snapshot, the crosstable, ladder progress and change events.

After every recorded match :func:`update_standings` refits the whole ladder with the batch
maximum-likelihood model (:func:`tacocat.arena.ratings.fit_records`, ratings with 95%
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
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Final

from ._redis import Clock, Redis, default_clock, number, script, text_map
from .keys import Keys
from .ladders import get_ladder, playing_versions
from .matches import pair_counts, pair_field
from .ratings import PairRecord, fit_records, likelihood_of_superiority
from .recording import INITIAL_ELO, LogEntry, recent_log
from .results import dumps_json

_STORE: Final = """
-- KEYS: ladder standings hash. ARGV: version, snapshot JSON, events channel, event JSON,
--       compact ratings JSON.
local stored = redis.call('HGET', KEYS[1], 'version')
if stored and tonumber(stored) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'version', ARGV[1], 'data', ARGV[2], 'ratings', ARGV[5])
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

_COUNTERS: Final = ("matches", "games", "wins", "ties", "losses", "aborted")


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
class Leaderboard:
    """A ladder's standings as of results count ``version``, best first."""

    ladder: str
    version: int
    computed_at: float
    standings: tuple[Standing, ...]
    pairs: tuple[PairStanding, ...]

    def standing(self, version: str) -> Standing | None:
        return next((s for s in self.standings if s.version == version), None)

    def pair(self, a: str, b: str) -> PairStanding | None:
        """The record of ``a`` against ``b``, from ``a``'s side (None if they never met)."""
        first, second = sorted((a, b))
        found = self._pair_index.get((first, second))
        if found is None or a == first:
            return found
        fit_los = None if found.fit_los is None else 1.0 - found.fit_los
        return replace(found, a=a, b=b, wins=found.losses, losses=found.wins,
                       los=1.0 - found.los, fit_los=fit_los)

    @cached_property
    def _pair_index(self) -> dict[tuple[str, str], PairStanding]:
        # A crosstable page looks up hundreds of pairs among 19,900 at 200 versions.
        return {(p.a, p.b): p for p in self.pairs}

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data; the crosstable is stored by column (a list per field), which
        encodes and parses several times faster than 19,900 small objects at 200 versions."""
        return {"ladder": self.ladder, "version": self.version,
                "computed_at": self.computed_at,
                "standings": [{**vars(s), "forfeits": dict(s.forfeits)}
                              for s in self.standings],
                "pairs": {name: [getattr(p, name) for p in self.pairs]
                          for name in _PAIR_FIELDS}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Leaderboard:
        pairs = data["pairs"]
        if isinstance(pairs, Mapping):  # by column (a list of objects before that)
            rows = tuple(PairStanding(*row) for row in zip(
                *(pairs[name] for name in _PAIR_FIELDS), strict=True))
        else:
            rows = tuple(PairStanding(**p) for p in pairs)
        return cls(
            data["ladder"], int(data["version"]), float(data["computed_at"]),
            tuple(Standing(**s) for s in data["standings"]), rows,
        )


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

    @property
    def waiting_for_opponents(self) -> bool:
        """Fewer than two versions play: nothing can be scheduled, nothing is rated."""
        return self.playing < 2

    @property
    def complete(self) -> bool:
        # A ladder of one bot has reached its (empty) target but has not played anything.
        return (not self.waiting_for_opponents and self.matches_pending == 0
                and self.games_toward_target >= self.games_target)


def update_standings(
    redis: Redis, keys: Keys, ladder: str, *, clock: Clock = default_clock
) -> Leaderboard:
    """Refit the ladder from its counters and store the snapshot unless a newer one exists.

    Returns the leaderboard it computed (which is the stored one, or older than it).
    """
    pipe = redis.pipeline(transaction=True)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hgetall(keys.stats(ladder))
    pipe.hgetall(keys.pairs(ladder))
    pipe.hgetall(keys.elo(ladder))
    pipe.hget(keys.standings(ladder), "ratings")
    version_raw, stats_raw, pairs_raw, elo_raw, previous = pipe.execute()
    version = number(version_raw)
    # The previous fit is the warm start: after a few more results Newton needs a step or two.
    start = {v: rating for v, (rating, _) in json.loads(previous).items()} if previous else None
    board = _compute(ladder, version, text_map(stats_raw), text_map(pairs_raw),
                     text_map(elo_raw), clock(), start)
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
    stored = script(redis, "store_standings", _STORE)(
        keys=[keys.standings(board.ladder)],
        args=[board.version, dumps_json(board.to_json()), keys.events(board.ladder),
              dumps_json({"event": "standings", "ladder": board.ladder,
                          "version": board.version}),
              dumps_json({s.version: [s.rating, s.margin] for s in board.standings
                          if s.rating is not None})],
    )
    return bool(stored)


def leaderboard(
    redis: Redis, keys: Keys, ladder: str, *, refresh: bool = True,
    clock: Clock = default_clock,
) -> Leaderboard:
    """The ladder's standings: the stored snapshot, refitted first if it is behind (and
    ``refresh``), with playing versions marked active and those without games added."""
    get_ladder(redis, keys, ladder)  # NotFound for an unknown ladder
    pipe = redis.pipeline(transaction=False)
    pipe.hget(keys.counters(ladder), "results")
    pipe.hget(keys.standings(ladder), "data")
    version_raw, data = pipe.execute()
    board = Leaderboard.from_json(json.loads(data)) if data else None
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
    pairs = [pair_field(a, b) for i, a in enumerate(playing) for b in playing[i + 1:]]
    pipe = redis.pipeline(transaction=False)
    pipe.hgetall(keys.counters(ladder))
    pipe.zcard(keys.pending(ladder))
    pipe.zcard(keys.entries(ladder))
    counters_raw, pending, entry_count = pipe.execute()
    progress = pair_counts(redis, keys, ladder, pairs, ("games", "aborted", "matches"))
    counters = text_map(counters_raw)
    target = settings.games_per_pairing
    toward = sum(min(g + ab, target) for g, ab, _ in progress)
    return LadderStatus(
        ladder=ladder,
        version=number(counters.get("results")),
        entries=int(entry_count),
        playing=len(playing),
        rounds=settings.rounds,
        rounds_completed=min((m for _, _, m in progress), default=0),
        matches_scheduled=number(counters.get("created")),
        matches_recorded=number(counters.get("results")),
        matches_pending=int(pending),
        matches_cancelled=number(counters.get("cancelled")),
        games_played=number(counters.get("games")),
        games_target=len(pairs) * target,
        games_toward_target=toward,
    )


def _compute(
    ladder: str, version: int, stats: dict[str, str], pairs: dict[str, str],
    elo: dict[str, str], now: float, start: Mapping[str, float] | None = None,
) -> Leaderboard:
    per_version: dict[str, dict[str, int]] = {}
    for key, value in stats.items():
        vid, _, counter = key.rpartition("|")
        per_version.setdefault(vid, {})[counter] = int(value)
    per_pair: dict[tuple[str, str], dict[str, int]] = {}
    for key, value in pairs.items():
        a, b, counter = key.split("|")
        per_pair.setdefault((a, b), {})[counter] = int(value)
    records = {
        pair: PairRecord(c.get("wins", 0), c.get("losses", 0), c.get("ties", 0))
        for pair, c in per_pair.items() if c.get("matches", 0)
    }
    fit = fit_records(records, start=start) if any(r.games for r in records.values()) else None
    rows = []
    for vid, counts in per_version.items():
        rated = fit is not None and vid in fit and fit[vid].games > 0
        fitted = fit[vid] if fit is not None and rated else None
        forfeits = {k.partition(":")[2]: n for k, n in counts.items()
                    if k.startswith("forfeit:") and n}
        rows.append(Standing(
            version=vid, active=True,
            rating=fitted.rating if fitted else None, low=fitted.low if fitted else None,
            high=fitted.high if fitted else None,
            elo=float(elo[vid]) if vid in elo else INITIAL_ELO,
            forfeits=dict(sorted(forfeits.items())),
            **{name: counts.get(name, 0) for name in _COUNTERS},
        ))
    rows.sort(key=lambda s: (s.rating is None, -(s.rating or 0.0), -s.elo, s.version))
    met = [(pair, c) for pair, c in sorted(per_pair.items()) if c.get("matches", 0)]
    rated_pairs = [pair for pair, c in met if fit is not None and c.get("games", 0)
                   and pair[0] in fit and pair[1] in fit]
    fit_los_of = dict(zip(rated_pairs, fit.los_many(rated_pairs) if fit else [], strict=True))
    crosstable = []
    for (a, b), c in met:
        fit_los = fit_los_of.get((a, b))
        crosstable.append(PairStanding(
            a=a, b=b, los=likelihood_of_superiority(c.get("wins", 0), c.get("losses", 0)),
            fit_los=fit_los, **{name: c.get(name, 0) for name in _COUNTERS},
        ))
    return Leaderboard(ladder, version, now, tuple(rows), tuple(crosstable))
