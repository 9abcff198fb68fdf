"""Arena domain types -> the arena API's protobuf messages (``proto/tacocat/v1/arena.proto``).

The one place that knows both vocabularies on the server side; the SDK decodes the other way
(the SDK's arena types).
"""

from __future__ import annotations

from typing import Final

from tacocat.arena import (
    BotInfo,
    BotVersion,
    Entry,
    Ladder,
    LadderStatus,
    Leaderboard,
    Match,
    MatchResult,
    MatchStatus,
    TokenInfo,
    User,
    VersionStatus,
)
from tacocat.protocol import FAULT_TO_PB, REASON_TO_PB, ruleset_to_pb
from tacocat.protocol.proto.v1 import arena_pb2 as apb

VERSION_STATUS: Final = {
    VersionStatus.PENDING: apb.VERSION_STATUS_PENDING,
    VersionStatus.ACTIVE: apb.VERSION_STATUS_ACTIVE,
    VersionStatus.REJECTED: apb.VERSION_STATUS_REJECTED,
}
MATCH_STATUS: Final = {
    MatchStatus.SCHEDULED: apb.MATCH_STATUS_SCHEDULED,
    MatchStatus.RECORDED: apb.MATCH_STATUS_RECORDED,
    MatchStatus.CANCELLED: apb.MATCH_STATUS_CANCELLED,
    MatchStatus.ABORTED: apb.MATCH_STATUS_ABORTED,
}
MATCH_STATUS_FROM_PB: Final = {v: k for k, v in MATCH_STATUS.items()}
_SIDE: Final = {None: apb.SIDE_UNSPECIFIED, "a": apb.SIDE_A, "b": apb.SIDE_B}


def user_to_pb(user: User) -> apb.User:
    return apb.User(name=user.name, admin=user.admin, created_at=user.created_at)


def token_info_to_pb(info: TokenInfo) -> apb.TokenInfo:
    return apb.TokenInfo(id=info.id, user=info.user, label=info.label,
                         created_at=info.created_at)


def bot_to_pb(bot: BotInfo) -> apb.Bot:
    return apb.Bot(id=bot.id, owner=bot.owner, name=bot.name, created_at=bot.created_at,
                   versions=bot.versions, current=bot.current,
                   current_version=bot.current_version or "")


def version_to_pb(version: BotVersion) -> apb.BotVersion:
    msg = apb.BotVersion(
        id=version.id, bot=version.bot, number=version.number, filename=version.filename,
        kind=version.kind, size=version.size, sha256=version.sha256,
        status=VERSION_STATUS[version.status], reason=version.reason,
        created_at=version.created_at)
    if version.decided_at is not None:
        msg.decided_at = version.decided_at
    return msg


def entry_to_pb(entry: Entry) -> apb.Entry:
    return apb.Entry(ladder=entry.ladder, bot=entry.bot, joined_at=entry.joined_at,
                     version=entry.version or "")


def ladder_to_pb(ladder: Ladder) -> apb.Ladder:
    msg = apb.Ladder(name=ladder.name, games_per_pairing=ladder.games_per_pairing,
                     games_per_match=ladder.games_per_match,
                     decision_seconds=ladder.decision_seconds, created_at=ladder.created_at,
                     created_by=ladder.created_by, rounds=ladder.rounds, batch=ladder.batch)
    ruleset_to_pb(ladder.ruleset, msg.ruleset)
    return msg


def leaderboard_to_pb(board: Leaderboard) -> apb.Leaderboard:
    msg = apb.Leaderboard(ladder=board.ladder, version=board.version,
                          computed_at=board.computed_at)
    for rank, s in enumerate(board.standings, 1):
        line = msg.standings.add(
            rank=rank, version=s.version, bot=s.bot, owner=s.owner,
            active=s.active, elo=s.elo, matches=s.matches, games=s.games, wins=s.wins,
            ties=s.ties, losses=s.losses, aborted=s.aborted)
        if s.rating is not None:
            line.rating = s.rating
        if s.low is not None:
            line.low = s.low
        if s.high is not None:
            line.high = s.high
        for fault, count in s.forfeits.items():
            line.forfeits[fault] = count
    for p in board.pairs:
        pair = msg.pairs.add(a=p.a, b=p.b, matches=p.matches, games=p.games, wins=p.wins,
                             ties=p.ties, losses=p.losses, aborted=p.aborted, los=p.los)
        if p.fit_los is not None:
            pair.fit_los = p.fit_los
    return msg


def status_to_pb(status: LadderStatus) -> apb.LadderStatus:
    return apb.LadderStatus(
        ladder=status.ladder, version=status.version, entries=status.entries,
        playing=status.playing, rounds=status.rounds, rounds_completed=status.rounds_completed,
        matches_scheduled=status.matches_scheduled, matches_recorded=status.matches_recorded,
        matches_pending=status.matches_pending, matches_cancelled=status.matches_cancelled,
        games_played=status.games_played, games_target=status.games_target,
        games_toward_target=status.games_toward_target, complete=status.complete,
        matches_aborted=status.matches_aborted, games_aborted=status.games_aborted)


def result_to_pb(result: MatchResult, out: apb.MatchResult) -> None:
    for game in result.games:
        out.games.add(
            a_seat=game.a_seat, reason=REASON_TO_PB[game.reason], winner=_SIDE[game.winner],
            fault=FAULT_TO_PB[game.fault] if game.fault is not None else 0,
            offender=_SIDE[game.offender], rounds_a=game.rounds[0], rounds_b=game.rounds[1])
    out.seconds = result.seconds
    out.worker = result.worker
    out.wins, out.ties, out.losses, out.aborted = (result.wins, result.ties, result.losses,
                                                   result.aborted)
    for fault, count in result.forfeits("a").items():
        out.forfeits_a[fault] = count
    for fault, count in result.forfeits("b").items():
        out.forfeits_b[fault] = count


def match_to_pb(match: Match) -> apb.Match:
    """The match; its seed only once it is recorded (a scheduled match's deals stay
    secret)."""
    recorded = match.status is MatchStatus.RECORDED
    msg = apb.Match(id=match.id, ladder=match.ladder, round=match.round, a=match.a, b=match.b,
                    games=match.games, seed=(match.seed or "") if recorded else "",
                    status=MATCH_STATUS[match.status], created_at=match.created_at,
                    enqueued_at=match.enqueued_at, reason=match.reason)
    if match.recorded_at is not None:
        msg.recorded_at = match.recorded_at
    if match.seq is not None:
        msg.seq = match.seq
    if match.result is not None:
        result_to_pb(match.result, msg.result)
    return msg
