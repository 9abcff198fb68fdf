"""What :class:`~tacocat.sdk.ArenaClient` returns: frozen dataclasses, decoded from the arena
API's protobuf messages (``proto/tacocat/v1/arena.proto``) at the edge.

They mirror the server's domain types (``tacocat.arena``), which the SDK does not import:
a bot author installs the SDK without the server side. Ids are readable strings: user
``alice``, bot ``alice/tacobot``, version ``alice/tacobot@3``, ladder ``main``, match
``main.3.5f0c2a9e1b7d4c36``; times are seconds since the Unix epoch.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Literal

from tacocat.engine import Fault, Reason, Ruleset
from tacocat.protocol import FAULT_FROM_PB, REASON_FROM_PB, ruleset_from_pb
from tacocat.protocol.proto.v1 import arena_pb2 as apb

Side = Literal["a", "b"]


@dataclass(frozen=True)
class ServerInfo:
    """What a server offers. ``web_url`` is empty when it has no web leaderboard."""

    version: str
    web_url: str
    max_submission_bytes: int
    referee: bool

    @classmethod
    def from_pb(cls, msg: apb.ServerInfo) -> ServerInfo:
        return cls(msg.version, msg.web_url, msg.max_submission_bytes, msg.referee)


@dataclass(frozen=True)
class UserInfo:
    name: str
    admin: bool
    created_at: float

    @classmethod
    def from_pb(cls, msg: apb.User) -> UserInfo:
        return cls(msg.name, msg.admin, msg.created_at)


@dataclass(frozen=True)
class TokenInfo:
    """A token without its plaintext; ``id`` names it for revocation."""

    id: str
    user: str
    label: str
    created_at: float

    @classmethod
    def from_pb(cls, msg: apb.TokenInfo) -> TokenInfo:
        return cls(msg.id, msg.user, msg.label, msg.created_at)


@dataclass(frozen=True)
class NewToken:
    """A token just created: ``token`` is the plaintext, shown this once."""

    token: str = field(repr=False)
    info: TokenInfo


@dataclass(frozen=True)
class BotInfo:
    """A bot (``owner/name``); ``current_version`` plays in its ladders (None while no
    version is active)."""

    id: str
    owner: str
    name: str
    created_at: float
    versions: int
    current: int
    current_version: str | None

    @classmethod
    def from_pb(cls, msg: apb.Bot) -> BotInfo:
        return cls(msg.id, msg.owner, msg.name, msg.created_at, msg.versions, msg.current,
                   msg.current_version or None)


class VersionStatus(str, Enum):
    PENDING = "pending"
    """Stored; waits for its smoke game in the sandbox."""
    ACTIVE = "active"
    """Passed the smoke game; the bot's newest active version plays."""
    REJECTED = "rejected"
    """Failed the smoke game; ``BotVersion.reason`` says how."""


_VERSION_STATUS = {
    apb.VERSION_STATUS_PENDING: VersionStatus.PENDING,
    apb.VERSION_STATUS_ACTIVE: VersionStatus.ACTIVE,
    apb.VERSION_STATUS_REJECTED: VersionStatus.REJECTED,
}


@dataclass(frozen=True)
class BotVersion:
    """One immutable upload of a bot: ``kind`` is ``"py"`` or ``"zip"``, ``sha256`` the hex
    digest of the uploaded bytes."""

    id: str
    bot: str
    number: int
    filename: str
    kind: str
    size: int
    sha256: str
    status: VersionStatus
    reason: str
    created_at: float
    decided_at: float | None

    @property
    def owner(self) -> str:
        return self.bot.partition("/")[0]

    @classmethod
    def from_pb(cls, msg: apb.BotVersion) -> BotVersion:
        return cls(msg.id, msg.bot, msg.number, msg.filename, msg.kind, msg.size, msg.sha256,
                   _VERSION_STATUS.get(msg.status, VersionStatus.PENDING), msg.reason,
                   msg.created_at, msg.decided_at if msg.HasField("decided_at") else None)


@dataclass(frozen=True)
class Entry:
    """A bot in a ladder; ``version`` plays now (None while the bot has no active one)."""

    ladder: str
    bot: str
    joined_at: float
    version: str | None

    @classmethod
    def from_pb(cls, msg: apb.Entry) -> Entry:
        return cls(msg.ladder, msg.bot, msg.joined_at, msg.version or None)


@dataclass(frozen=True)
class Submitted:
    """What :meth:`ArenaClient.submit` did: the new (pending) version and, when a ladder was
    given, the bot's entry there (``joined``: it joined with this call)."""

    version: BotVersion
    entry: Entry | None
    joined: bool

    @classmethod
    def from_pb(cls, msg: apb.SubmitBotResponse) -> Submitted:
        entry = Entry.from_pb(msg.entry) if msg.HasField("entry") else None
        return cls(BotVersion.from_pb(msg.version), entry, msg.joined)


@dataclass(frozen=True)
class Ladder:
    """A competition under one ruleset: each pairing plays ``games_per_pairing`` games in
    matches of ``games_per_match``, with ``decision_seconds`` per decision."""

    name: str
    ruleset: Ruleset
    games_per_pairing: int
    games_per_match: int
    decision_seconds: float
    created_at: float
    created_by: str
    rounds: int
    batch: int = 0
    """Games of a match played at once (0: the workers' default)."""

    @classmethod
    def from_pb(cls, msg: apb.Ladder) -> Ladder:
        return cls(msg.name, ruleset_from_pb(msg.ruleset), msg.games_per_pairing,
                   msg.games_per_match, msg.decision_seconds, msg.created_at, msg.created_by,
                   msg.rounds, msg.batch)


@dataclass(frozen=True)
class Standing:
    """One version's line on a leaderboard. ``rating`` ± (``high`` - ``low``) / 2 is the
    batch fit with its 95% interval (None before a rated game); ``elo`` the live Elo;
    ``forfeits`` the games this version forfeited, by fault."""

    rank: int
    version: str
    bot: str
    owner: str
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
    forfeits: Mapping[str, int]

    @property
    def margin(self) -> float | None:
        """Half the width of the 95% interval."""
        if self.low is None or self.high is None:
            return None
        return (self.high - self.low) / 2.0

    @classmethod
    def from_pb(cls, msg: apb.Standing) -> Standing:
        return cls(
            msg.rank, msg.version, msg.bot, msg.owner, msg.active,
            msg.rating if msg.HasField("rating") else None,
            msg.low if msg.HasField("low") else None,
            msg.high if msg.HasField("high") else None,
            msg.elo, msg.matches, msg.games, msg.wins, msg.ties, msg.losses, msg.aborted,
            dict(sorted(msg.forfeits.items())),
        )


@dataclass(frozen=True)
class PairStanding:
    """A's record against B (from A's side); ``los``: likelihood A is stronger."""

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

    @classmethod
    def from_pb(cls, msg: apb.PairStanding) -> PairStanding:
        return cls(msg.a, msg.b, msg.matches, msg.games, msg.wins, msg.ties, msg.losses,
                   msg.aborted, msg.los, msg.fit_los if msg.HasField("fit_los") else None)


@dataclass(frozen=True)
class Leaderboard:
    """A ladder's standings, best first, as of ``version`` recorded matches."""

    ladder: str
    version: int
    computed_at: float
    standings: tuple[Standing, ...]
    pairs: tuple[PairStanding, ...]

    def standing(self, version_or_bot: str) -> Standing | None:
        """The line of a version (``owner/name@N``) or of a bot's newest listed version."""
        for s in self.standings:
            if version_or_bot in (s.version, s.bot):
                return s
        return None

    @classmethod
    def from_pb(cls, msg: apb.Leaderboard) -> Leaderboard:
        return cls(msg.ladder, msg.version, msg.computed_at,
                   tuple(Standing.from_pb(s) for s in msg.standings),
                   tuple(PairStanding.from_pb(p) for p in msg.pairs))

    def merged(self, delta: apb.LeaderboardUpdate) -> Leaderboard:
        """This table with a ``WatchLeaderboard`` delta applied (see arena.proto)."""
        standings = {s.version: s for s in self.standings}
        for version in delta.removed_versions:
            standings.pop(version, None)
        standings.update((s.version, Standing.from_pb(s)) for s in delta.leaderboard.standings)
        pairs = {(p.a, p.b): p for p in self.pairs}
        for key in delta.removed_pairs:
            a, _, b = key.partition("|")
            pairs.pop((a, b), None)
        pairs.update(((p.a, p.b), PairStanding.from_pb(p)) for p in delta.leaderboard.pairs)
        return Leaderboard(delta.leaderboard.ladder, delta.leaderboard.version,
                           delta.leaderboard.computed_at,
                           tuple(sorted(standings.values(), key=lambda s: s.rank)),
                           tuple(pairs[key] for key in sorted(pairs)))


@dataclass(frozen=True)
class LadderStatus:
    """How far a ladder got; ``complete`` when the round robin of the versions that play
    now is done."""

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
    complete: bool
    matches_aborted: int = 0
    """Matches given up after failing the same way 3 times: not rated, not played again."""
    games_aborted: int = 0

    @property
    def waiting_for_opponents(self) -> bool:
        """Fewer than two versions play: nothing is scheduled or rated until another bot
        joins (or a pending version passes its smoke game)."""
        return self.playing < 2

    @classmethod
    def from_pb(cls, msg: apb.LadderStatus) -> LadderStatus:
        return cls(msg.ladder, msg.version, msg.entries, msg.playing, msg.rounds,
                   msg.rounds_completed, msg.matches_scheduled, msg.matches_recorded,
                   msg.matches_pending, msg.matches_cancelled, msg.games_played,
                   msg.games_target, msg.games_toward_target, msg.complete,
                   msg.matches_aborted, msg.games_aborted)


@dataclass(frozen=True)
class LeaderboardUpdate:
    """One item of :meth:`ArenaClient.watch`: what changed, and the state after it."""

    event: str
    leaderboard: Leaderboard
    status: LadderStatus

    @classmethod
    def from_pb(cls, msg: apb.LeaderboardUpdate,
                previous: Leaderboard | None = None) -> LeaderboardUpdate:
        """The update; a delta (``msg.delta``) is merged into ``previous``, the table the
        stream's earlier updates made."""
        if not msg.delta:
            board = Leaderboard.from_pb(msg.leaderboard)
        elif previous is None:
            raise ValueError("a leaderboard delta arrived before any full table")
        else:
            board = previous.merged(msg)
        return cls(msg.event, board, LadderStatus.from_pb(msg.status))


class MatchStatus(str, Enum):
    SCHEDULED = "scheduled"
    RECORDED = "recorded"
    CANCELLED = "cancelled"
    ABORTED = "aborted"
    """It failed the same way too often (its ``reason`` says how); not rated."""


_MATCH_STATUS = {
    apb.MATCH_STATUS_SCHEDULED: MatchStatus.SCHEDULED,
    apb.MATCH_STATUS_RECORDED: MatchStatus.RECORDED,
    apb.MATCH_STATUS_CANCELLED: MatchStatus.CANCELLED,
    apb.MATCH_STATUS_ABORTED: MatchStatus.ABORTED,
}
_SIDE: dict[int, Side] = {apb.SIDE_A: "a", apb.SIDE_B: "b"}


@dataclass(frozen=True)
class MatchGameResult:
    """One game of a match from the sides' view: A sat in ``a_seat``; ``winner`` and
    ``offender`` are sides (None: a draw or an aborted game / not a forfeit)."""

    a_seat: int
    reason: Reason
    winner: Side | None
    fault: Fault | None
    offender: Side | None
    rounds: tuple[int, int]

    @classmethod
    def from_pb(cls, msg: apb.MatchGame) -> MatchGameResult:
        return cls(msg.a_seat, REASON_FROM_PB.get(msg.reason, Reason.ABORTED),
                   _SIDE.get(msg.winner), FAULT_FROM_PB.get(msg.fault), _SIDE.get(msg.offender),
                   (msg.rounds_a, msg.rounds_b))


@dataclass(frozen=True)
class MatchResult:
    """A recorded match's games and totals, from A's side."""

    games: tuple[MatchGameResult, ...]
    seconds: float
    worker: str
    wins: int
    ties: int
    losses: int
    aborted: int
    forfeits_a: Mapping[str, int]
    forfeits_b: Mapping[str, int]

    @classmethod
    def from_pb(cls, msg: apb.MatchResult) -> MatchResult:
        return cls(tuple(MatchGameResult.from_pb(g) for g in msg.games), msg.seconds,
                   msg.worker, msg.wins, msg.ties, msg.losses, msg.aborted,
                   dict(sorted(msg.forfeits_a.items())), dict(sorted(msg.forfeits_b.items())))


@dataclass(frozen=True)
class Match:
    """A batch of games between versions ``a`` and ``b`` in one round of a ladder. ``seed``
    and ``result`` are known once it is recorded."""

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
    recorded_at: float | None
    seq: int | None
    result: MatchResult | None
    reason: str = ""
    """Why it was aborted (``ABORTED`` only)."""

    @classmethod
    def from_pb(cls, msg: apb.Match) -> Match:
        return cls(
            msg.id, msg.ladder, msg.round, msg.a, msg.b, msg.games, msg.seed or None,
            _MATCH_STATUS.get(msg.status, MatchStatus.SCHEDULED), msg.created_at,
            msg.enqueued_at, msg.recorded_at if msg.HasField("recorded_at") else None,
            msg.seq if msg.HasField("seq") else None,
            MatchResult.from_pb(msg.result) if msg.HasField("result") else None,
            msg.reason,
        )


@dataclass(frozen=True)
class MatchList:
    """One page of a ladder's matches (``ArenaClient.match_list``) and how many there are in
    all: when ``total`` exceeds ``start + len(matches)`` the page is not the whole list, and
    ``max_count`` is the most one request returns."""

    matches: list[Match]
    start: int
    total: int
    max_count: int

    @property
    def partial(self) -> bool:
        """Whether matches outside this page exist (before or after it)."""
        return self.start > 0 or self.start + len(self.matches) < self.total
