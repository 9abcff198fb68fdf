"""``arena.bots``: bots, their versions, builds and smoke tests, with who may do what.

- only a bot's owner may submit versions of it (rate limited per non-admin user);
- a version's build log is its owner's (or an admin's) to read;
- worker-side calls (store a build, activate or reject a version) take no user: whoever
  holds the Redis connection is trusted.
"""

from __future__ import annotations

from tacocat.models import BotInfo, BotVersion, User, VersionStatus

from . import bots, dispatch, ladders, ratelimit, scheduler
from ._area import Area, area, bot_ref
from ._redis import Clock, Redis
from .errors import InvalidArgument, NotFound, PermissionDenied
from .ids import bot_id, split_bot_id
from .keys import Keys
from .ratelimit import RateLimits
from .submissions import SubmissionLimits, validate_submission


@area
class BotArea(Area):
    """``arena.bots``. ``limits`` bound uploads, ``rate_limits`` how fast users submit."""

    def __init__(self, redis: Redis, keys: Keys, clock: Clock, *, limits: SubmissionLimits,
                 rate_limits: RateLimits) -> None:
        super().__init__(redis, keys, clock)
        self.limits = limits
        self.rate_limits = rate_limits

    def submit(self, user: User, bot: str, filename: str, data: bytes) -> BotVersion:
        """Validate an upload and store it as the next version of ``bot``, status pending.

        ``bot`` is a bot name (the user's own bot, created on first submission) or
        ``owner/name``, which must be the user's. The smoke game that activates or rejects
        the version is the worker's (:meth:`due_smoke_tests`, :meth:`activate`).
        """
        owner, name = bot_ref(user, bot)
        if owner != user.name:
            raise PermissionDenied(
                f"bot {bot_id(owner, name)!r} belongs to {owner!r}; only its owner may "
                f"submit versions. Submit under your own name, e.g. {user.name}/{name}"
            )
        # Charged before validation: checking a zip is the expensive part of a submission.
        limit = self.rate_limits.submissions
        if limit is not None and not user.admin:
            self._take_rate(ratelimit.SUBMIT, user.name, limit, what="submissions",
                            whose=repr(user.name))
        submission = validate_submission(filename, data, self.limits)
        version = bots.submit_version(self.redis, self.keys, owner, name, submission,
                                      clock=self.clock)
        dispatch.request_tick(self.redis, self.keys)
        return version

    def get(self, bot: str) -> BotInfo:
        """The bot ``owner/name``."""
        split_bot_id(bot)
        return bots.get_bot(self.redis, self.keys, bot)

    def all(self, owner: str | None = None) -> list[BotInfo]:
        """All bots, or ``owner``'s."""
        return bots.list_bots(self.redis, self.keys, owner)

    def versions(self, bot: str) -> list[BotVersion]:
        """The versions of ``owner/name``, oldest first."""
        split_bot_id(bot)
        return bots.list_versions(self.redis, self.keys, bot)

    def version(self, version: str) -> BotVersion:
        """The version ``owner/name@N``."""
        return bots.get_version(self.redis, self.keys, version)

    def source(self, version: str) -> bytes:
        """The uploaded bytes; unpack them with :func:`tacocat.arena.submissions.unpack`."""
        return bots.version_source(self.redis, self.keys, version)

    def store_build(self, version: str, files: bytes | None, log: bytes) -> None:
        """Keep a version's build (the worker): the built folder as a tar (``None``: the
        build failed) and what it printed, for the owner."""
        bots.store_build(self.redis, self.keys, version, files, log)

    def build(self, version: str) -> bytes | None:
        """The version's built folder (a tar), if a worker built it."""
        return bots.version_build(self.redis, self.keys, version)[0]

    def build_log(self, actor: User, version: str) -> bytes:
        """What the version's build printed: its owner's (or an admin's) to read."""
        found = bots.get_version(self.redis, self.keys, version)
        if actor.name != split_bot_id(found.bot)[0] and not actor.admin:
            raise PermissionDenied(f"the build log of {version} is its owner's")
        log = bots.version_build(self.redis, self.keys, version)[1]
        if log is None:
            raise NotFound(f"{version} has no build log (no build step, or not built yet)")
        return log

    def pending(self) -> list[BotVersion]:
        """The versions waiting for their smoke test."""
        return bots.pending_versions(self.redis, self.keys)

    def due_smoke_tests(self, *, retry_after: float = 300.0) -> list[str]:
        """Pending versions whose smoke test should be started now (each handed out once,
        again after ``retry_after`` seconds without a decision)."""
        return dispatch.due_smoke_tests(self.redis, self.keys, now=self.clock(),
                                        retry_after=retry_after)

    def activate(self, version: str) -> BotVersion:
        """Mark a pending version active (it passed its smoke game). If it is now the bot's
        newest active version it plays in all the bot's ladders and the one it replaces
        retires (its scheduled matches are cancelled; its records stay)."""
        decided, retired = bots.decide_version(self.redis, self.keys, version,
                                               VersionStatus.ACTIVE, clock=self.clock)
        for ladder in ladders.bot_ladders(self.redis, self.keys, decided.bot):
            if retired is not None:
                playing = set(ladders.playing_versions(self.redis, self.keys, ladder))
                scheduler.cancel_retired(self.redis, self.keys, ladder, playing,
                                         now=self.clock())
            self._changed(ladder, "versions")
        return decided

    def reject(self, version: str, reason: str) -> BotVersion:
        """Mark a pending version rejected (its smoke game failed); ``reason`` is shown to
        its owner, so say what happened (``"timeout: no answer within 1.0 s"``)."""
        if not reason.strip():
            raise InvalidArgument("a rejection needs a reason the bot's owner can act on")
        decided, _ = bots.decide_version(self.redis, self.keys, version,
                                         VersionStatus.REJECTED, reason, clock=self.clock)
        return decided
