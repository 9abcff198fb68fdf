"""The SDK's exceptions::

    SdkError
     ├── BotLoadError      a bot file or spec cannot be turned into a Bot
     ├── ProtocolError     a peer broke the game protocol (bad frame, unexpected message);
     │                     also a tacocat.protocol.ProtocolError
     ├── RefereeError      the referee refused the match; carries the protocol's error code
     │    └── MatchEndedError   the referee ended the match early (repeated timeouts)
     ├── ConnectionLostError    the live connection to the referee failed or ended early
     └── ArenaApiError     the arena server refused a call (see tacocat.sdk.arena)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tacocat import protocol

if TYPE_CHECKING:
    from ._session import GameResult


class SdkError(Exception):
    """Root of every error raised by :mod:`tacocat.sdk`."""


class BotLoadError(SdkError, ValueError):
    """A bot spec (``house:NAME`` or ``path/to/bot.py[:Class]``) cannot be loaded."""


class ProtocolError(SdkError, protocol.ProtocolError):
    """A peer sent something the game protocol does not allow."""


class RefereeError(SdkError):
    """The referee refused: ``code`` is the protocol's error code name (``UNAUTHENTICATED``,
    ``INVALID_REQUEST``, ``UNAVAILABLE``, ...) and ``message`` says why. ``results`` holds
    the games finished before it (from :func:`~tacocat.sdk.connect`)."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        self.results: list[GameResult] = []
        super().__init__(f"referee refused ({code}): {message}")


class MatchEndedError(RefereeError):
    """The referee ended a live match before its last game because this bot gave up (three
    timeouts in a row, the rule local play and the arena follow too). ``results`` holds every
    game played, the forfeited ones with their reason; ``games`` is how many were asked."""

    def __init__(self, code: str, message: str, results: list[GameResult], games: int) -> None:
        super().__init__(code, message)
        self.results = results
        self.games = games
        SdkError.__init__(self, f"the referee ended the match after {len(results)} of {games} "
                                f"games: {message}; the games played are in .results")


class ConnectionLostError(SdkError):
    """The live stream failed or ended before the match did. ``status`` is the gRPC status
    code name when gRPC reported one."""

    def __init__(self, message: str, status: str | None = None) -> None:
        self.status = status
        self.results: list[GameResult] = []
        """The games finished before the stream failed (from :func:`~tacocat.sdk.connect`)."""
        super().__init__(message if status is None else f"{message} (gRPC {status})")
