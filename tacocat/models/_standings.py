"""Standings: a ladder's leaderboard, its lines, and the crosstable of head-to-head records.

The arena computes them (batch maximum-likelihood ratings with 95% intervals, the live Elo,
per-pair counters) and keeps the crosstable as arrays (:class:`Crosstable` is the face every
form of it shows); the SDK receives them from the arena API.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, Final, Protocol


@dataclass(frozen=True)
class Standing:
    """One version's line on a leaderboard.

    ``rating``/``low``/``high``: the batch fit and its 95% interval (None before the version
    played a rated game). ``elo``: the live Elo. ``games`` counts rated games (wins + ties
    + losses); aborted games are apart. ``forfeits``: games this version forfeited, by fault.
    ``active``: the version plays now; a retired one keeps its line with ``active=False``.
    ``rank``: its place on the leaderboard it came with (1 = first; 0 on a line not placed
    yet, as inside a stored snapshot).
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
    rank: int = 0

    @property
    def bot(self) -> str:
        return self.version.rpartition("@")[0]

    @property
    def owner(self) -> str:
        return self.version.partition("/")[0]

    @property
    def margin(self) -> float | None:
        """Half the width of the 95% interval."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2.0


@dataclass(frozen=True)
class PairStanding:
    """Head-to-head record of A against B, from A's side. ``los``: likelihood that A is
    stronger from their games alone; ``fit_los``: the same from the whole fit (None without
    rated games)."""

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

    def flipped(self) -> PairStanding:
        """The same record from B's side."""
        fit_los = None if self.fit_los is None else 1.0 - self.fit_los
        return replace(self, a=self.b, b=self.a, wins=self.losses, losses=self.wins,
                       los=1.0 - self.los, fit_los=fit_los)


PAIR_FIELDS: Final = tuple(f.name for f in fields(PairStanding))


class Crosstable(Protocol):
    """Every pair's head-to-head record, each pair once (A < B). The arena keeps it as
    arrays and builds records only when asked; :class:`PairList` holds them as objects."""

    def __len__(self) -> int: ...

    def standings(self) -> tuple[PairStanding, ...]:
        """Every pair that met, A < B, in (A, B) order."""
        ...

    def find(self, wanted: Sequence[tuple[str, str]]) -> list[PairStanding | None]:
        """The record of each pair in ``wanted`` (given in either order) as kept, A < B;
        None for a pair that never met."""
        ...


@dataclass(frozen=True)
class PairList:
    """A crosstable as a tuple of records (A < B, in (A, B) order)."""

    pairs: tuple[PairStanding, ...]

    def __len__(self) -> int:
        return len(self.pairs)

    def standings(self) -> tuple[PairStanding, ...]:
        return self.pairs

    @cached_property
    def _index(self) -> dict[tuple[str, str], PairStanding]:
        return {(p.a, p.b): p for p in self.pairs}

    def find(self, wanted: Sequence[tuple[str, str]]) -> list[PairStanding | None]:
        index = self._index
        return [index.get((a, b)) or index.get((b, a)) for a, b in wanted]


@dataclass(frozen=True, eq=False)
class Leaderboard:
    """A ladder's standings as of results count ``version``, best first."""

    ladder: str
    version: int
    computed_at: float
    standings: tuple[Standing, ...]
    crosstable: Crosstable

    def standing(self, version_or_bot: str) -> Standing | None:
        """The line of a version (``owner/name@N``), or of a bot's first listed version."""
        return next((s for s in self.standings if version_or_bot in (s.version, s.bot)), None)

    @cached_property
    def pairs(self) -> tuple[PairStanding, ...]:
        """Every pair that met, A < B, in (A, B) order."""
        return self.crosstable.standings()

    def pair(self, a: str, b: str) -> PairStanding | None:
        """The record of ``a`` against ``b``, from ``a``'s side (None if they never met)."""
        return self.pairs_of([(a, b)])[0]

    def pairs_of(self, wanted: Sequence[tuple[str, str]]) -> list[PairStanding | None]:
        """:meth:`pair` of many pairs at once: a crosstable block reads only its cells."""
        found = self.crosstable.find(wanted) if wanted else []
        return [None if record is None else record if record.a == a else record.flipped()
                for (a, _), record in zip(wanted, found, strict=True)]

    def to_json(self) -> dict[str, Any]:
        """JSON-ready data; the crosstable by column (a list per field), which encodes and
        parses several times faster than 19,900 small objects at 200 versions."""
        return {**self.rows_json(),
                "pairs": {name: [getattr(p, name) for p in self.pairs]
                          for name in PAIR_FIELDS}}

    def rows_json(self) -> dict[str, Any]:
        """:meth:`to_json` without the crosstable (the arena stores that apart, as arrays).
        Ranks are left out: a line's place is its position."""
        return {"ladder": self.ladder, "version": self.version,
                "computed_at": self.computed_at,
                "standings": [{**{k: v for k, v in vars(s).items() if k != "rank"},
                               "forfeits": dict(s.forfeits)}
                              for s in self.standings]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any],
                  crosstable: Crosstable | None = None) -> Leaderboard:
        """From :meth:`to_json`'s data, or :meth:`rows_json`'s with the ``crosstable``."""
        if crosstable is None:
            pairs = data["pairs"]
            if isinstance(pairs, Mapping):  # by column (a list of objects before that)
                rows = [PairStanding(*row) for row in zip(
                    *(pairs[name] for name in PAIR_FIELDS), strict=True)]
            else:
                rows = [PairStanding(**p) for p in pairs]
            crosstable = PairList(tuple(sorted(rows, key=lambda p: (p.a, p.b))))
        return cls(
            data["ladder"], int(data["version"]), float(data["computed_at"]),
            tuple(Standing(**s) for s in data["standings"]), crosstable,
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Leaderboard):
            return NotImplemented
        # Ranks are left out as in the JSON: a line's place is its position.
        return (self.rows_json() == other.rows_json()
                and _comparable(self.pairs) == _comparable(other.pairs))

    __hash__ = None  # type: ignore[assignment]  # a crosstable of arrays inside: unhashable


def _comparable(pairs: Sequence[PairStanding]) -> list[tuple[Any, ...]]:
    return [tuple(getattr(p, name) for name in PAIR_FIELDS) for p in pairs]
