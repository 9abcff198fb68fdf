"""The SDK's exceptions::

    SdkError
     ├── BotLoadError      a bot file or spec cannot be turned into a Bot
     ├── ProtocolError     a peer broke the game protocol (bad frame, unexpected message);
     │                     also a tacocat.protocol.ProtocolError
     ├── RefereeError      the referee refused the match; carries the protocol's error code
     ├── ConnectionLostError    the live connection to the referee failed or ended early
     └── ArenaApiError     the arena server refused a call (see tacocat.sdk.arena)
"""

from __future__ import annotations

from tacocat import protocol


class SdkError(Exception):
    """Root of every error raised by :mod:`tacocat.sdk`."""


class BotLoadError(SdkError, ValueError):
    """A bot spec (``house:NAME`` or ``path/to/bot.py[:Class]``) cannot be loaded."""


class ProtocolError(SdkError, protocol.ProtocolError):
    """A peer sent something the game protocol does not allow."""


class RefereeError(SdkError):
    """The referee refused: ``code`` is the protocol's error code name (``UNAUTHENTICATED``,
    ``INVALID_REQUEST``, ``UNAVAILABLE``, ...) and ``message`` says why."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.message = message
        super().__init__(f"referee refused ({code}): {message}")


class ConnectionLostError(SdkError):
    """The live stream failed or ended before the match did. ``status`` is the gRPC status
    code name when gRPC reported one."""

    def __init__(self, message: str, status: str | None = None) -> None:
        self.status = status
        super().__init__(message if status is None else f"{message} (gRPC {status})")
