"""The SDK's exceptions::

    SdkError
     ├── BotLoadError      a bot file or spec cannot be turned into a Bot
     ├── ProtocolError     a peer broke the game protocol (bad frame, unexpected message)
     ├── RefereeError      the referee refused the match; carries the protocol's error code
     ├── ConnectionLostError    the live connection to the referee failed or ended early
     └── HostError         a bot host process could not be started
"""

from __future__ import annotations

import traceback


class SdkError(Exception):
    """Root of every error raised by :mod:`tacocat.sdk`."""


class BotLoadError(SdkError, ValueError):
    """A bot spec (``house:NAME`` or ``path/to/bot.py[:Class]``) cannot be loaded."""


class ProtocolError(SdkError):
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


class HostError(SdkError):
    """A bot host process could not be started or did not announce itself in time."""


def describe(exc: BaseException) -> str:
    """A bot's exception in one line, with where it was raised: for forfeit details."""
    frames = traceback.extract_tb(exc.__traceback__) if exc.__traceback__ else []
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {exc}{where}"
