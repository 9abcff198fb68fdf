"""Following a server stream across a server restart (``ArenaClient.watch``,
``ArenaClient.watch_trial``): open it again with backoff, and say so.

A follower runs for hours (`tacocat leaderboard --watch`, `tacocat test`), and a server is
restarted meanwhile (an upgrade, a crash): its stream then fails with ``UNAVAILABLE`` (or
gRPC's "Stream removed" / "Socket closed" under ``UNKNOWN``/``INTERNAL``), or the server
ends it on a clean shutdown. Once a stream has delivered something, such a failure means the
server went away, not that the follower asked for the wrong thing: it is opened again after
:data:`RECONNECT_DELAYS`, for as long as it takes. A stream that fails before its first
message still raises: a wrong address or a server that never answered is the user's to fix.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Final, Protocol, TypeVar

from ._errors import SdkError

RECONNECT_DELAYS: Final = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0)
"""Seconds before each new attempt after a lost server; the last repeats."""
_LOST_WORDS: Final = ("stream removed", "socket closed", "rst_stream", "connection reset",
                      "goaway", "failed to connect", "ended the watch")
_T = TypeVar("_T")


class Reconnecting(Protocol):
    """Told when a follower lost its server and when it got it back (a CLI says so on
    stderr, a program may log it)."""

    def lost(self, error: SdkError, delay: float, attempt: int) -> None:
        """The stream failed with ``error``; attempt ``attempt`` follows in ``delay`` s."""

    def resumed(self) -> None:
        """The stream delivers again after a reconnection."""


def lost_server(error: SdkError) -> bool:
    """Whether ``error`` says the server went away (rather than refusing the request)."""
    status = getattr(error, "status", "")
    if status in ("UNAVAILABLE", "ABORTED"):
        return True
    text = str(error).lower()
    return status in ("UNKNOWN", "INTERNAL", "CANCELLED") and any(
        word in text for word in _LOST_WORDS)


def reconnecting(open_stream: Callable[[], Iterator[_T]], reconnect: Reconnecting | None,
                 *, sleep: Callable[[float], None] = time.sleep) -> Iterator[_T]:
    """The items of ``open_stream()``, opened again after a lost server once it has delivered
    an item (module docs); without ``reconnect``, the stream's own items and errors."""
    if reconnect is None:
        yield from open_stream()
        return
    delivered = False
    attempt = 0
    while True:
        try:
            for item in open_stream():
                if attempt:
                    reconnect.resumed()
                    attempt = 0
                delivered = True
                yield item
            return
        except SdkError as exc:
            if not delivered or not lost_server(exc):
                raise
            delay = RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)]
            attempt += 1
            reconnect.lost(exc, delay, attempt)
            sleep(delay)
