"""What :meth:`ArenaClient.logs <tacocat.sdk.ArenaClient.logs>` returns: your bots' logs of
a match (``GetMatchLogs``), decoded from protobuf here and nowhere else."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

from tacocat.protocol.logs import split_games
from tacocat.protocol.proto.v1 import arena_pb2 as apb

_SIDE: Final[dict[int, Literal["a", "b"]]] = {apb.SIDE_A: "a", apb.SIDE_B: "b"}


@dataclass(frozen=True, slots=True)
class BotLog:
    """What one of your bots wrote to stderr during one match (at most 64 KiB, the cut said
    in it), with ``=== game N ===`` markers and the referee's ``[referee]`` lines."""

    side: Literal["a", "b"]
    version: str
    text: str
    stored: bool
    """False: the worker kept no log of this match (played before logs were kept)."""

    def games(self) -> dict[int | None, str]:
        """The log by game, numbered from 1 (``None``: before the first game)."""
        return {(None if game is None else game + 1): part
                for game, part in split_games(self.text).items()}

    @classmethod
    def from_pb(cls, msg: apb.BotLog) -> BotLog:
        return cls(_SIDE.get(msg.side, "a"), msg.version,
                   msg.text.decode("utf-8", "replace"), msg.stored)


@dataclass(frozen=True, slots=True)
class MatchLogs:
    """Your sides' logs of a match; ``link`` is the signed ``logs`` parameter of the match
    page when one was asked for (``""`` otherwise), valid until ``link_expires_at``."""

    match: str
    logs: tuple[BotLog, ...]
    link: str = ""
    link_expires_at: float = 0.0

    @classmethod
    def from_pb(cls, msg: apb.MatchLogs) -> MatchLogs:
        return cls(msg.match, tuple(BotLog.from_pb(log) for log in msg.logs), msg.link,
                   msg.link_expires_at)
