"""The SDK's exceptions::

    SdkError
     ├── BotLoadError      a bot file or spec cannot be turned into a Bot
     ├── ProtocolError     a peer broke the game protocol (bad frame, unexpected message);
     │                     also a tacocat.protocol.ProtocolError
     ├── RefereeError      the referee refused the match; carries the protocol's error code
     │    └── MatchEndedError   the referee ended the match early (repeated timeouts)
     ├── ConnectionLostError    the live connection to the referee failed or ended early
     └── ArenaApiError     the arena server refused a call (tacocat.sdk.arena says when)
          ├── AuthError, PermissionDeniedError, NotFoundError, AlreadyExistsError
          ├── InvalidRequestError, RateLimitedError
          └── ServerUnavailableError
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tacocat import protocol

if TYPE_CHECKING:
    from ._game_result import GameResult


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


class ArenaApiError(SdkError):
    """The arena server refused a call. ``status`` is the gRPC status code name
    (``"NOT_FOUND"``), ``message`` the server's explanation."""

    def __init__(self, status: str, message: str) -> None:
        self.status = status
        self.message = message
        super().__init__(message)


class AuthError(ArenaApiError):
    """No token where one is needed, or the token is unknown, revoked or malformed."""


class PermissionDeniedError(ArenaApiError):
    """The token is fine, but its user may not do this (not an admin, not the owner)."""


class NotFoundError(ArenaApiError, LookupError):
    """No such user, bot, version, ladder or match."""


class AlreadyExistsError(ArenaApiError):
    """The name is taken, the bot is in the ladder already, the file was submitted before."""


class InvalidRequestError(ArenaApiError, ValueError):
    """A malformed name, setting or upload (the message names the rule), or a request the
    stored state does not allow now."""


class ServerUnavailableError(ArenaApiError):
    """The server cannot be reached, timed out, is shutting down, or lost its Redis;
    retrying later may work."""


class RateLimitedError(ArenaApiError):
    """Too many calls of a kind (submissions) too fast: the message says when to retry;
    ``retry_after`` is that wait in seconds (None if the server did not say)."""

    def __init__(self, status: str, message: str, retry_after: float | None = None) -> None:
        super().__init__(status, message)
        self.retry_after = retry_after
