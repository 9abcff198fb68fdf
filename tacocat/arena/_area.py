"""What the arena's areas (:class:`~.user_area.UserArea`, :class:`~.bot_area.BotArea`, ...)
share: the connection they work on, the one wrapping that turns a lost Redis into
:class:`RedisUnavailable`, and the checks more than one area makes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import redis as redis_py

from tacocat.models import User

from . import dispatch, ratelimit
from ._redis import Clock, Redis, as_unavailable
from .errors import PermissionDenied, RateLimited
from .ids import check_name, split_bot_id
from .keys import Keys
from .ratelimit import RateLimit, describe_wait
from .results import dumps_json

_P = ParamSpec("_P")
_R = TypeVar("_R")
_T = TypeVar("_T", bound=type)


def unavailable(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Turn a lost Redis (after redis-py's own retries), or one refusing writes (a full
    disk), into :class:`RedisUnavailable`, so API callers see one arena error type per
    condition."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except redis_py.RedisError as exc:
            unavailable = as_unavailable(exc)
            if unavailable is None:
                raise
            raise unavailable from exc

    return wrapper


def area(cls: _T) -> _T:
    """Class decorator of an area: every public method raises :class:`RedisUnavailable`
    for a lost Redis."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, unavailable(member))
    return cls


class Area:
    """One part of the arena's API, on the :class:`~.arena.Arena`'s connection, keys and
    clock."""

    def __init__(self, redis: Redis, keys: Keys, clock: Clock) -> None:
        self.redis = redis
        self.keys = keys
        self.clock = clock

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.redis!r}, prefix={self.keys.prefix!r})"

    def _take_rate(self, kind: str, subject: str, limit: RateLimit, *, what: str,
                   whose: str = "") -> None:
        """Take one from the token bucket ``(kind, subject)`` or raise :class:`RateLimited`
        saying when to retry (see :mod:`tacocat.arena.ratelimit`)."""
        wait = ratelimit.take(self.redis, self.keys, kind, subject, limit, now=self.clock())
        if wait > 0:
            owner = f" by {whose}" if whose else ""
            raise RateLimited(
                f"too many {what}{owner}: the limit is {limit.describe()}; "
                f"{describe_wait(wait)}", wait)

    def _changed(self, ladder: str, event: str) -> None:
        """Announce a change of what plays, and ask the dispatcher to schedule."""
        self.redis.publish(self.keys.events(ladder),
                           dumps_json({"event": event, "ladder": ladder}))
        dispatch.request_tick(self.redis, self.keys, ladder)


def require_admin(actor: User, what: str) -> None:
    if not actor.admin:
        raise PermissionDenied(f"only admins may {what}; {actor.name!r} is not an admin")


def bot_ref(user: User, bot: str) -> tuple[str, str]:
    """``(owner, name)`` from ``name`` (the user's bot) or ``owner/name``."""
    if isinstance(bot, str) and "/" in bot:
        return split_bot_id(bot)
    return user.name, check_name("bot", bot)
