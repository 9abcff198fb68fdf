"""The arena's one entry point: :class:`Arena`, what the gRPC API, the CLI and workers call.

Its areas hold the calls and their authorization rules, each rule in one place:

- ``arena.users`` (:class:`~.user_area.UserArea`): users and tokens;
- ``arena.bots`` (:class:`~.bot_area.BotArea`): bots, versions, builds, smoke tests;
- ``arena.ladders`` (:class:`~.ladder_area.LadderArea`): ladders, entries, standings;
- ``arena.matches`` (:class:`~.match_area.MatchArea`): scheduling, match records, replays,
  bot logs, recording results;
- ``arena.live`` (:class:`~.live_area.LiveArea`): matches being played now.

Every ``actor``/``user`` argument is a :class:`User` from ``arena.users.authenticate``;
worker-side calls (activate/reject a version, schedule, record) take no user: whoever holds
the Redis connection is trusted.

Refusals are distinct :class:`~tacocat.arena.errors.ArenaError` subclasses
(``Unauthenticated``, ``PermissionDenied``, ``NotFound``, ``AlreadyExists``,
``InvalidArgument``, ``FailedPrecondition``), each with a ``status`` naming its gRPC code.
"""

from __future__ import annotations

from typing import Any

import redis as redis_py

from ._redis import Clock, Redis, check_client, default_clock
from .bot_area import BotArea
from .keys import DEFAULT_PREFIX, Keys
from .ladder_area import LadderArea
from .live_area import LiveArea
from .match_area import MatchArea
from .ratelimit import NO_LIMITS, RateLimits
from .scheduler import DEFAULT_SCHEDULING, Scheduling
from .submissions import DEFAULT_LIMITS, SubmissionLimits
from .user_area import UserArea


class Arena:
    """The arena on one Redis. Cheap to create; thread-safe as far as the client is.

    ``redis`` must not decode responses (``decode_responses=False``, as RQ needs too).
    ``prefix`` namespaces every key (default ``tacocat:``); ``limits`` bound uploads;
    ``rate_limits`` bound how fast users may submit (default none: a library caller is
    trusted; ``tacocat serve`` passes :data:`~tacocat.arena.ratelimit.DEFAULT_RATE_LIMITS`);
    ``scheduling`` sets the match order and queue depth (:class:`~.scheduler.Scheduling`);
    ``clock`` (seconds since the epoch) exists for tests. A Redis that stays unreachable
    through redis-py's retries raises :class:`RedisUnavailable` from any area's method.
    """

    def __init__(
        self, redis: Redis, *, prefix: str = DEFAULT_PREFIX,
        limits: SubmissionLimits = DEFAULT_LIMITS, rate_limits: RateLimits = NO_LIMITS,
        clock: Clock = default_clock, scheduling: Scheduling = DEFAULT_SCHEDULING,
    ) -> None:
        check_client(redis)
        self.scheduling = scheduling
        self.redis = redis
        self.keys = keys = Keys(prefix)
        self.limits = limits
        self.rate_limits = rate_limits
        self.clock = clock
        self.users = UserArea(redis, keys, clock, rate_limits=rate_limits)
        self.bots = BotArea(redis, keys, clock, limits=limits, rate_limits=rate_limits)
        self.ladders = LadderArea(redis, keys, clock)
        self.matches = MatchArea(redis, keys, clock, scheduling=scheduling)
        self.live = LiveArea(redis, keys, clock)

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Arena:
        """An arena on a new client for ``url`` (``redis://``, ``rediss://``, ``unix://``)."""
        return cls(redis_py.Redis.from_url(url), **kwargs)

    def __repr__(self) -> str:
        return f"Arena({self.redis!r}, prefix={self.keys.prefix!r})"
