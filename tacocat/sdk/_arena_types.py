"""The arena API's protobuf messages (``proto/tacocat/v1/arena.proto``) decoded into the
project's value types (:mod:`tacocat.models`, the ones the arena stores), here and nowhere
else in the SDK; and what only :class:`~tacocat.sdk.ArenaClient` returns (``ServerInfo``,
``NewToken``, ``Submitted``, ``LeaderboardUpdate``, ``MatchList``).

Ids are readable strings: user ``alice``, bot ``alice/tacobot``, version ``alice/tacobot@3``,
ladder ``main``, match ``main.3.5f0c2a9e1b7d4c36``; times are seconds since the Unix epoch.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Final

from tacocat.engine import Reason
from tacocat.models import (
    BotInfo,
    BotVersion,
    Entry,
    Ladder,
    LadderStatus,
    Leaderboard,
    Match,
    MatchGameResult,
    MatchResult,
    MatchStatus,
    PairList,
    PairStanding,
    Side,
    Standing,
    TokenInfo,
    User,
    VersionStatus,
)
from tacocat.protocol import FAULT_FROM_PB, REASON_FROM_PB, ruleset_from_pb
from tacocat.protocol.proto.v1 import arena_pb2 as apb

UserInfo = User
"""The SDK's name for an account (:class:`tacocat.models.User`), kept for bot authors' code."""

_VERSION_STATUS: Final = {
    apb.VERSION_STATUS_PENDING: VersionStatus.PENDING,
    apb.VERSION_STATUS_ACTIVE: VersionStatus.ACTIVE,
    apb.VERSION_STATUS_REJECTED: VersionStatus.REJECTED,
}
_MATCH_STATUS: Final = {
    apb.MATCH_STATUS_SCHEDULED: MatchStatus.SCHEDULED,
    apb.MATCH_STATUS_RECORDED: MatchStatus.RECORDED,
    apb.MATCH_STATUS_CANCELLED: MatchStatus.CANCELLED,
    apb.MATCH_STATUS_ABORTED: MatchStatus.ABORTED,
}
_SIDE: Final[dict[int, Side]] = {apb.SIDE_A: "a", apb.SIDE_B: "b"}


def user_from_pb(msg: apb.User) -> User:
    return User(msg.name, msg.admin, msg.created_at)


def token_info_from_pb(msg: apb.TokenInfo) -> TokenInfo:
    return TokenInfo(msg.id, msg.user, msg.label, msg.created_at)


def bot_from_pb(msg: apb.Bot) -> BotInfo:
    return BotInfo(msg.id, msg.owner, msg.name, msg.created_at, msg.versions, msg.current)


def version_from_pb(msg: apb.BotVersion) -> BotVersion:
    return BotVersion(msg.id, msg.bot, msg.number, msg.filename, msg.kind, msg.size,
                      msg.sha256, _VERSION_STATUS.get(msg.status, VersionStatus.PENDING),
                      msg.reason, msg.created_at,
                      msg.decided_at if msg.HasField("decided_at") else None)


def entry_from_pb(msg: apb.Entry) -> Entry:
    return Entry(msg.ladder, msg.bot, msg.joined_at, msg.version or None)


def ladder_from_pb(msg: apb.Ladder) -> Ladder:
    """The ladder (its ``rounds`` follow from its settings, as on the server)."""
    return Ladder(msg.name, ruleset_from_pb(msg.ruleset), msg.games_per_pairing,
                  msg.games_per_match, msg.decision_seconds, msg.created_at, msg.created_by,
                  msg.batch)


def standing_from_pb(msg: apb.Standing) -> Standing:
    """The line (its ``bot`` and ``owner`` follow from its version, as on the server)."""
    return Standing(
        msg.version, msg.active,
        msg.rating if msg.HasField("rating") else None,
        msg.low if msg.HasField("low") else None,
        msg.high if msg.HasField("high") else None,
        msg.elo, msg.matches, msg.games, msg.wins, msg.ties, msg.losses, msg.aborted,
        dict(sorted(msg.forfeits.items())), msg.rank,
    )


def pair_from_pb(msg: apb.PairStanding) -> PairStanding:
    return PairStanding(msg.a, msg.b, msg.matches, msg.games, msg.wins, msg.ties, msg.losses,
                        msg.aborted, msg.los, msg.fit_los if msg.HasField("fit_los") else None)


def leaderboard_from_pb(msg: apb.Leaderboard) -> Leaderboard:
    return Leaderboard(msg.ladder, msg.version, msg.computed_at,
                       tuple(standing_from_pb(s) for s in msg.standings),
                       PairList(tuple(pair_from_pb(p) for p in msg.pairs)))


def merged(board: Leaderboard, delta: apb.LeaderboardUpdate) -> Leaderboard:
    """``board`` with a ``WatchLeaderboard`` delta applied (see arena.proto)."""
    standings = {s.version: s for s in board.standings}
    for version in delta.removed_versions:
        standings.pop(version, None)
    standings.update((s.version, standing_from_pb(s)) for s in delta.leaderboard.standings)
    pairs = {(p.a, p.b): p for p in board.pairs}
    for key in delta.removed_pairs:
        a, _, b = key.partition("|")
        pairs.pop((a, b), None)
    pairs.update(((p.a, p.b), pair_from_pb(p)) for p in delta.leaderboard.pairs)
    return replace(board, ladder=delta.leaderboard.ladder, version=delta.leaderboard.version,
                   computed_at=delta.leaderboard.computed_at,
                   standings=tuple(sorted(standings.values(), key=lambda s: s.rank)),
                   crosstable=PairList(tuple(pairs[key] for key in sorted(pairs))))


def status_from_pb(msg: apb.LadderStatus) -> LadderStatus:
    """The status (``complete`` follows from the counts, as on the server)."""
    return LadderStatus(msg.ladder, msg.version, msg.entries, msg.playing, msg.rounds,
                        msg.rounds_completed, msg.matches_scheduled, msg.matches_recorded,
                        msg.matches_pending, msg.matches_cancelled, msg.games_played,
                        msg.games_target, msg.games_toward_target, msg.matches_aborted,
                        msg.games_aborted)


def game_from_pb(msg: apb.MatchGame) -> MatchGameResult:
    return MatchGameResult(msg.a_seat, REASON_FROM_PB.get(msg.reason, Reason.ABORTED),
                           _SIDE.get(msg.winner), FAULT_FROM_PB.get(msg.fault),
                           _SIDE.get(msg.offender), (msg.rounds_a, msg.rounds_b))


def result_from_pb(msg: apb.MatchResult) -> MatchResult:
    """The result (its totals and forfeits follow from its games, as on the server)."""
    return MatchResult(tuple(game_from_pb(g) for g in msg.games), msg.seconds,
                       worker=msg.worker)


def match_from_pb(msg: apb.Match) -> Match:
    return Match(
        msg.id, msg.ladder, msg.round, msg.a, msg.b, msg.games, msg.seed or None,
        _MATCH_STATUS.get(msg.status, MatchStatus.SCHEDULED), msg.created_at,
        msg.enqueued_at, msg.recorded_at if msg.HasField("recorded_at") else None,
        msg.seq if msg.HasField("seq") else None,
        result_from_pb(msg.result) if msg.HasField("result") else None,
        msg.reason,
    )


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
class NewToken:
    """A token just created: ``token`` is the plaintext, shown this once."""

    token: str = field(repr=False)
    info: TokenInfo


@dataclass(frozen=True)
class Submitted:
    """What :meth:`ArenaClient.submit` did: the new (pending) version and, when a ladder was
    given, the bot's entry there (``joined``: it joined with this call)."""

    version: BotVersion
    entry: Entry | None
    joined: bool

    @classmethod
    def from_pb(cls, msg: apb.SubmitBotResponse) -> Submitted:
        entry = entry_from_pb(msg.entry) if msg.HasField("entry") else None
        return cls(version_from_pb(msg.version), entry, msg.joined)


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
            board = leaderboard_from_pb(msg.leaderboard)
        elif previous is None:
            raise ValueError("a leaderboard delta arrived before any full table")
        else:
            board = merged(previous, msg)
        return cls(msg.event, board, status_from_pb(msg.status))


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
