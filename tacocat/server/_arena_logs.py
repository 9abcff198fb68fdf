"""``GetMatchLogs``: a match's bot logs, for their owners only (:mod:`tacocat.arena.logs`)."""

from __future__ import annotations

from typing import Final

from tacocat.arena import Arena, MatchLog, User
from tacocat.protocol.proto.v1 import arena_pb2 as apb

_SIDE: Final = {"a": apb.SIDE_A, "b": apb.SIDE_B}


def match_logs(arena: Arena, user: User, request: apb.GetMatchLogsRequest) -> apb.MatchLogs:
    """The caller's sides' logs (the arena refuses anyone else), and a link when asked."""
    found = arena.matches.logs(user, request.id)
    out = apb.MatchLogs(match=request.id, logs=[_log_to_pb(log) for log in found])
    if request.link_seconds:
        out.link, out.link_expires_at = arena.matches.logs_link(user, request.id,
                                                                request.link_seconds)
    return out


def _log_to_pb(log: MatchLog) -> apb.BotLog:
    return apb.BotLog(side=_SIDE[log.side], version=log.version,
                      text=log.text.encode("utf-8"), stored=log.stored)
