"""The arena's exceptions. One root, so a caller can catch every arena refusal at once::

    ArenaError
     ├── RedisUnavailable         no usable Redis: REDIS_URL is malformed or does not answer
     │    └── EmbeddedServerError  the embedded valkey-server cannot start, stop or use its
     │                             data dir; carries the tail of the server log
     └── RatingError              a game result or rating-fit parameter is invalid; names it

Every message names the offending value and says what to do about it.
"""

from __future__ import annotations

from pathlib import Path


class ArenaError(Exception):
    """Root of every error raised by :mod:`tacocat.arena`."""


class RedisUnavailable(ArenaError):  # noqa: N818 - names the condition, as callers say it
    """No usable Redis: the configured URL is malformed or unreachable, or none could start."""


class EmbeddedServerError(RedisUnavailable):
    """The embedded ``valkey-server`` failed to start, stop or use its data dir.

    ``log_tail`` holds the last lines the server logged during the failed attempt (empty when
    it never ran), because the server's own words are usually the diagnosis.
    """

    def __init__(self, message: str, *, data_dir: Path, log_tail: str = "") -> None:
        self.data_dir = data_dir
        self.log_tail = log_tail
        text = message
        if log_tail:
            text = f"{message}\nlast lines of the server log:\n{log_tail}"
        super().__init__(text)


class RatingError(ArenaError, ValueError):
    """A game result or a rating-fit parameter is invalid; the message names it."""
