"""The arena's exceptions. One root, so a caller can catch every arena refusal at once::

    ArenaError
     ├── RedisUnavailable         no usable Redis: REDIS_URL is malformed or does not answer
     │    └── EmbeddedServerError  the embedded valkey-server cannot start, stop or use its
     │                             data dir; carries the tail of the server log
     ├── RatingError              a game result or rating-fit parameter is invalid; names it
     ├── Unauthenticated          no token, a malformed one, or one that is unknown or revoked
     ├── PermissionDenied         the caller is known but may not do this (not the bot's
     │                            owner, not an admin)
     ├── NotFound                 no such user, bot, version, ladder or match
     ├── AlreadyExists            the name is taken, the bot already joined, the same file
     │    │                       was already submitted
     │    └── DuplicateSubmission the same file is already a version (``version``: which)
     ├── InvalidArgument          a malformed name, setting or match result
     │    └── SubmissionRejected  an upload failed validation (size, zip safety, UTF-8,
     │                            syntax); ``problem`` says which rule
     ├── FailedPrecondition       the request is well-formed but the stored state forbids it
     │                            (activating a rejected version)
     ├── RateLimited              too many submissions (or live games) too fast; the message
     │                            says when to retry, ``retry_after`` in seconds
     └── Contention               an atomic step kept losing a race; retrying later works

Every message names the offending value and says what to do about it. Each class carries
``status``, the name of the gRPC status code it stands for (``"NOT_FOUND"`` ...), so the API
layer can map errors without this package importing grpc.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar


class ArenaError(Exception):
    """Root of every error raised by :mod:`tacocat.arena`."""

    status: ClassVar[str] = "INTERNAL"
    """The gRPC status code name this error maps to."""


class RedisUnavailable(ArenaError):  # noqa: N818 - names the condition, as callers say it
    """No usable Redis: the configured URL is malformed or unreachable, or none could start."""

    status = "UNAVAILABLE"


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

    status = "INVALID_ARGUMENT"


class Unauthenticated(ArenaError):  # noqa: N818 - the gRPC name, which callers map it to
    """The request carries no token, a malformed one, or one that is unknown or revoked."""

    status = "UNAUTHENTICATED"


class PermissionDenied(ArenaError):  # noqa: N818 - the gRPC name
    """The caller is authenticated but may not do this (not the owner, not an admin)."""

    status = "PERMISSION_DENIED"


class NotFound(ArenaError, LookupError):  # noqa: N818 - the gRPC name
    """No user, bot, version, ladder or match by that name or id."""

    status = "NOT_FOUND"


class AlreadyExists(ArenaError):  # noqa: N818 - the gRPC name
    """The thing to create exists already (a name taken, a bot already joined)."""

    status = "ALREADY_EXISTS"


class DuplicateSubmission(AlreadyExists):
    """The upload is byte for byte an existing version of the bot: ``version`` (its id)."""

    def __init__(self, message: str, *, version: str) -> None:
        self.version = version
        super().__init__(message)


class InvalidArgument(ArenaError, ValueError):  # noqa: N818 - the gRPC name
    """A malformed name, ladder setting or match result; the message names it."""

    status = "INVALID_ARGUMENT"


class SubmissionRejected(InvalidArgument):
    """An uploaded bot failed validation. ``problem`` is a short machine-readable rule name:
    ``too_large``, ``bad_name``, ``empty``, ``not_zip``, ``unsafe_path``, ``zip_bomb``,
    ``too_many_files``, ``no_bot_py``, ``encrypted``, ``not_utf8``, ``syntax_error``,
    ``bad_manifest`` (a zip's ``bot.toml``).
    """

    def __init__(self, problem: str, message: str) -> None:
        self.problem = problem
        super().__init__(message)


class FailedPrecondition(ArenaError):  # noqa: N818 - the gRPC name
    """The request is well-formed, but the stored state does not allow it now."""

    status = "FAILED_PRECONDITION"


class RateLimited(ArenaError):  # noqa: N818 - names the condition
    """The caller used up its rate limit (submissions, live games). ``retry_after`` is the
    number of seconds until the action would be allowed; the message says it too."""

    status = "RESOURCE_EXHAUSTED"

    def __init__(self, message: str, retry_after: float) -> None:
        self.retry_after = retry_after
        super().__init__(message)


class Contention(ArenaError):  # noqa: N818 - names the condition
    """An optimistic atomic step lost its race too many times in a row; retry later."""

    status = "ABORTED"
