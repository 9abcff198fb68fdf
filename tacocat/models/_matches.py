"""Matches and what a played match produces: per-game results, totals, forfeits, replays.

A match is between two bot versions, called side ``"a"`` and side ``"b"`` (the match's
``a`` and ``b``). Its games come in duplicate pairs (engine convention, see
:func:`tacocat.engine.duplicate_pairs`): game ``2k`` seats A in seat 0, game ``2k + 1`` in
seat 1, both dealt from the seed ``f"{match.seed}/{k}"``. Results are kept per side rather
than per seat, because the side is what ratings and standings talk about; each game keeps
the seat A sat in, so "forfeits by seat" can be told too.

The worker builds a :class:`MatchResult` with :meth:`MatchResult.from_records` from the
engine's replay records and hands it to ``arena.matches.record``. Aborted games (the
referee gave up on a game for reasons neither bot caused) are kept but not rated: they count
in ``aborted``, not in wins, ties or losses.
"""

from __future__ import annotations

import gzip
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, Literal

from tacocat.engine import Fault, GameRecord, Reason, ScheduledGame, duplicate_pairs

from ._errors import ModelError

Side = Literal["a", "b"]
SIDES: Final[tuple[Side, Side]] = ("a", "b")

MAX_REPLAY_BYTES: Final = 32 * 1024 * 1024
"""Largest compressed replay blob one match may store (a 200-game match needs ~100 KB)."""


def other(side: Side) -> Side:
    return "b" if side == "a" else "a"


@dataclass(frozen=True, slots=True)
class MatchGameResult:
    """One game of a match, from the sides' point of view.

    ``winner`` is a side or None (a draw, or an aborted game). For a forfeit, ``fault`` is
    the offence and ``offender`` the side that committed it. ``rounds`` is the rounds won by
    (a, b).
    """

    a_seat: int
    reason: Reason
    winner: Side | None
    fault: Fault | None = None
    offender: Side | None = None
    rounds: tuple[int, int] = (0, 0)

    def __post_init__(self) -> None:
        if self.a_seat not in (0, 1):
            raise ModelError(f"a_seat must be 0 or 1, got {self.a_seat!r}")
        if not isinstance(self.reason, Reason):
            raise ModelError(f"reason must be a tacocat.engine.Reason, got {self.reason!r}")
        for name in ("winner", "offender"):
            value = getattr(self, name)
            if value is not None and value not in SIDES:
                raise ModelError(f"{name} must be 'a', 'b' or None, got {value!r}")
        if self.reason is Reason.FORFEIT:
            if self.fault is None or self.offender is None:
                raise ModelError("a forfeited game needs its fault and offender side")
            if self.winner != other(self.offender):
                raise ModelError(
                    f"side {self.offender!r} forfeited, so the winner must be "
                    f"{other(self.offender)!r}, not {self.winner!r}"
                )
        elif self.fault is not None or self.offender is not None:
            raise ModelError(
                f"only a forfeited game has a fault and an offender; this one ended by "
                f"{self.reason.value!r}"
            )
        if self.reason is Reason.ABORTED and self.winner is not None:
            raise ModelError("an aborted game has no winner")
        if len(self.rounds) != 2 or any(
            isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in self.rounds
        ):
            raise ModelError(f"rounds must be two counts >= 0, got {self.rounds!r}")

    @property
    def rated(self) -> bool:
        """Whether the game counts for ratings and W/T/L (aborted games do not)."""
        return self.reason is not Reason.ABORTED

    @property
    def score_a(self) -> float:
        """A's score: 1 win, 0.5 draw (or aborted), 0 loss."""
        return 0.5 if self.winner is None else (1.0 if self.winner == "a" else 0.0)

    def seat(self, side: Side) -> int:
        """The seat ``side`` sat in."""
        return self.a_seat if side == "a" else 1 - self.a_seat

    @classmethod
    def of_record(cls, record: GameRecord, a_seat: int) -> MatchGameResult:
        """The result of an engine game record in which side A sat in ``a_seat``."""

        def side_of(seat: int | None) -> Side | None:
            if seat is None:
                return None
            return "a" if seat == a_seat else "b"

        outcome = record.result
        won = [0, 0]
        for played in record.rounds:
            if played.winner is not None:
                won[played.winner] += 1
        rounds = (won[a_seat], won[1 - a_seat])
        return cls(
            a_seat,
            outcome.reason,
            side_of(outcome.winner),
            outcome.fault if outcome.reason is Reason.FORFEIT else None,
            side_of(outcome.offender) if outcome.reason is Reason.FORFEIT else None,
            rounds,
        )

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "a_seat": self.a_seat,
            "reason": self.reason.value,
            "winner": self.winner,
            "rounds": list(self.rounds),
        }
        if self.fault is not None:
            data["fault"] = self.fault.value
            data["offender"] = self.offender
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> MatchGameResult:
        try:
            fault = data.get("fault")
            rounds = data.get("rounds", (0, 0))
            return cls(
                int(data["a_seat"]),
                Reason(data["reason"]),
                data.get("winner"),
                Fault(fault) if fault is not None else None,
                data.get("offender"),
                (int(rounds[0]), int(rounds[1])),
            )
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"malformed game result {dict(data)!r}: {exc}") from exc


@dataclass(frozen=True)
class MatchResult:
    """All games of one match, in game order, with the match's wall-clock time.

    ``replays`` is gzip-compressed JSON Lines (one :meth:`GameRecord.dumps` line per game,
    in game order), or empty if the worker kept none (and always empty where the arena API
    sends a result: replays come by their own call). ``worker`` names who played the match,
    for diagnostics.
    """

    games: tuple[MatchGameResult, ...]
    seconds: float
    replays: bytes = field(default=b"", repr=False)
    worker: str = ""

    def __post_init__(self) -> None:
        if not self.games:
            raise ModelError("a match result needs at least one game")
        if not all(isinstance(game, MatchGameResult) for game in self.games):
            raise ModelError("MatchResult.games must hold MatchGameResult objects")
        if not (isinstance(self.seconds, int | float) and math.isfinite(self.seconds)
                and self.seconds >= 0):
            raise ModelError(f"seconds must be a duration >= 0, got {self.seconds!r}")
        if len(self.replays) > MAX_REPLAY_BYTES:
            raise ModelError(
                f"the compressed replays are {len(self.replays)} bytes, over the "
                f"{MAX_REPLAY_BYTES}-byte limit; play fewer games per match"
            )
        if self.replays and self.replays[:2] != b"\x1f\x8b":
            raise ModelError("replays must be gzip data (use compress_replays)")

    # -- totals, from A's side -----------------------------------------------------------------

    @property
    def wins(self) -> int:
        """Games A won (the ones B lost)."""
        return sum(1 for g in self.games if g.winner == "a")

    @property
    def losses(self) -> int:
        return sum(1 for g in self.games if g.winner == "b")

    @property
    def ties(self) -> int:
        """Rated games without a winner (draws)."""
        return sum(1 for g in self.games if g.winner is None and g.rated)

    @property
    def aborted(self) -> int:
        return sum(1 for g in self.games if not g.rated)

    @property
    def forfeits_a(self) -> dict[str, int]:
        """Games A forfeited, by fault, in fault order."""
        return dict(sorted(self.forfeits("a").items()))

    @property
    def forfeits_b(self) -> dict[str, int]:
        """Games B forfeited, by fault, in fault order."""
        return dict(sorted(self.forfeits("b").items()))

    def rated_scores(self) -> list[float]:
        """A's score in each rated game, in game order: what the live Elo update consumes."""
        return [g.score_a for g in self.games if g.rated]

    def forfeits(self, side: Side) -> dict[str, int]:
        """Games ``side`` forfeited, by fault (``{"timeout": 2}``)."""
        counts: dict[str, int] = {}
        for game in self.games:
            if game.offender == side and game.fault is not None:
                counts[game.fault.value] = counts.get(game.fault.value, 0) + 1
        return counts

    def forfeits_by_seat(self) -> dict[int, dict[str, int]]:
        """Forfeits by the seat the offender sat in, by fault."""
        counts: dict[int, dict[str, int]] = {0: {}, 1: {}}
        for game in self.games:
            if game.offender is not None and game.fault is not None:
                seat = counts[game.seat(game.offender)]
                seat[game.fault.value] = seat.get(game.fault.value, 0) + 1
        return counts

    # -- building and (de)serialising ----------------------------------------------------------

    @classmethod
    def from_records(
        cls,
        records: Sequence[GameRecord],
        version_a: str,
        version_b: str,
        seconds: float,
        *,
        a_seats: Sequence[int] | None = None,
        worker: str = "",
        keep_replays: bool = True,
        lines: Mapping[int, tuple[GameRecord, str]] | None = None,
    ) -> MatchResult:
        """Build a result from the engine's records of a match's games, in game order.

        A's seat in each game comes from ``a_seats`` if given, else from the record's player
        names, which must then be the version ids (name the players ``(match.a, match.b)``,
        as the referee's ``play_match(..., names=(match.a, match.b))`` does). ``lines`` may
        hold records already serialised (``id(record)``: ``(record, record.dumps())``, as the
        worker's live feed made them), so that the replays do not serialise them again.
        """
        if a_seats is not None and len(a_seats) != len(records):
            raise ModelError(
                f"a_seats has {len(a_seats)} entries for {len(records)} records"
            )
        games = []
        for index, record in enumerate(records):
            if a_seats is not None:
                a_seat = a_seats[index]
            elif record.players == (version_a, version_b):
                a_seat = 0
            elif record.players == (version_b, version_a):
                a_seat = 1
            else:
                raise ModelError(
                    f"game {index}: players {record.players} are not the versions "
                    f"{version_a!r} and {version_b!r}; name the players by version id or "
                    "pass a_seats"
                )
            games.append(MatchGameResult.of_record(record, a_seat))
        blob = compress_replays(records, lines) if keep_replays else b""
        return cls(tuple(games), float(seconds), blob, worker)

    def summary_json(self) -> dict[str, Any]:
        """Everything but the replays, as JSON-ready data (what the match hash stores)."""
        return {
            "games": [g.to_json() for g in self.games],
            "seconds": self.seconds,
            "worker": self.worker,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "aborted": self.aborted,
            "forfeits": {side: self.forfeits(side) for side in SIDES},
        }

    @classmethod
    def from_summary_json(cls, data: Mapping[str, Any], replays: bytes = b"") -> MatchResult:
        """The inverse of :meth:`summary_json` (derived totals are recomputed, not read)."""
        try:
            games = tuple(MatchGameResult.from_json(g) for g in data["games"])
            return cls(games, float(data["seconds"]), replays, str(data.get("worker", "")))
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, ModelError):
                raise
            raise ModelError(f"malformed match result: {exc}") from exc


def compress_replays(records: Iterable[GameRecord],
                     lines: Mapping[int, tuple[GameRecord, str]] | None = None) -> bytes:
    """gzip-compressed JSON Lines of ``records`` (mtime 0, so equal games give equal bytes);
    ``lines``: see :meth:`MatchResult.from_records`."""
    known = lines or {}
    text = "".join(_line(record, known) + "\n" for record in records)
    return gzip.compress(text.encode(), compresslevel=6, mtime=0)


def _line(record: GameRecord, known: Mapping[int, tuple[GameRecord, str]]) -> str:
    found = known.get(id(record))
    # By identity, and only while that record is alive in ``known``: an id is unique then.
    return found[1] if found is not None and found[0] is record else record.dumps()


class MatchStatus(str, Enum):
    SCHEDULED = "scheduled"
    """Created and enqueued; no result yet."""
    RECORDED = "recorded"
    """Its result is stored (exactly once)."""
    CANCELLED = "cancelled"
    """One of its versions retired before the match was played; workers skip it (a result
    that arrives anyway is still recorded: it is a real result between two versions)."""
    ABORTED = "aborted"
    """It failed the same way too many times (e.g. its job ran past its timeout, its work
    horse was killed or stalled): given up with a ``reason``, not rated, and the ladder's
    schedule moves on as for a cancelled match (a result that arrives anyway is recorded)."""


@dataclass(frozen=True)
class Match:
    """A batch of games between two versions of one ladder, in one round.

    The match id is ``LADDER.ROUND.DIGEST`` (``main.3.5f0c2a9e1b7d4c36``), derived from the
    ladder, the round and the pair of versions. ``seed`` is the match seed; :meth:`schedule`
    deals its games from it in duplicate pairs (:func:`tacocat.engine.duplicate_pairs`). The
    arena API shows it only once the match is recorded (None before: a scheduled match's
    deals stay secret). ``seq`` is the match's position in the ladder's results log (1, 2,
    ...) once recorded. ``result`` comes without replays; those have their own call.
    """

    id: str
    ladder: str
    round: int
    a: str
    b: str
    games: int
    seed: str | None
    status: MatchStatus
    created_at: float
    enqueued_at: float
    recorded_at: float | None = None
    seq: int | None = None
    result: MatchResult | None = None
    reason: str = ""
    """Why the match was aborted (``ABORTED`` only): for its bots' owners and operators."""

    def schedule(self) -> tuple[ScheduledGame, ...]:
        """The match's games: duplicate pairs dealt from ``seed``
        (:func:`tacocat.engine.duplicate_pairs`, the one schedule)."""
        if self.seed is None:
            raise ModelError(f"match {self.id!r} has no seed here: the arena API shows a "
                             "match's seed only once it is recorded")
        return duplicate_pairs(self.games, self.seed)
