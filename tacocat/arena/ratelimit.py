"""Rate limits: token buckets in Redis, one per (kind, subject), taken atomically in Lua.

A bucket holds at most ``burst`` tokens and refills at ``per_second`` tokens a second; an
action costs one token (a live match costs one per game). Taking from a bucket is one Lua
step (read, refill, take or refuse, write, expire), so any number of server processes share
one limit without races. An idle bucket expires once it would be full again: nothing piles
up in Redis for subjects that stopped calling.

The arena limits submissions per user (:attr:`RateLimits.submissions`; admins are exempt:
they could create users to get around it anyway) and registrations per client address; the
referee limits live games per player with :func:`take` (``tacocat.server`` falls back to an
in-memory bucket when it has no arena). A refusal is
:class:`~tacocat.arena.errors.RateLimited`, whose message says when to retry.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Final

from ._redis import Redis, script, text
from .errors import InvalidArgument
from .keys import Keys

SUBMIT: Final = "submit"
"""The bucket kind of bot submissions (subject: the user)."""
REGISTER: Final = "register"
"""The bucket kind of self-service registrations (subject: ``ip:ADDRESS``)."""
LIVE: Final = "live"
"""The bucket kind of live games at the referee (subject: the player, or ``ip:ADDRESS``)."""

_TAKE: Final = """
-- KEYS: the bucket hash. ARGV: burst, tokens per second, cost, now (seconds).
-- Returns {1, tokens left} when taken, {0, seconds until enough tokens} when refused
-- (as strings: Lua numbers would be truncated to integers on the way out).
local burst = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local now = tonumber(ARGV[4])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
if now > at then
  tokens = math.min(burst, tokens + (now - at) * rate)
  at = now
end
if tokens >= cost then
  tokens = tokens - cost
  redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(at))
  redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) / rate * 1000) + 1000)
  return {1, tostring(tokens)}
end
return {0, tostring((cost - tokens) / rate)}
"""


@dataclass(frozen=True)
class RateLimit:
    """A token bucket: ``burst`` actions at once, then ``per_second`` a second."""

    burst: int
    per_second: float

    def __post_init__(self) -> None:
        if isinstance(self.burst, bool) or not isinstance(self.burst, int) or self.burst < 1:
            raise InvalidArgument(f"a rate limit's burst must be >= 1, got {self.burst!r}")
        if not (isinstance(self.per_second, int | float) and math.isfinite(self.per_second)
                and self.per_second > 0):
            raise InvalidArgument(
                f"a rate limit's rate must be a positive number, got {self.per_second!r}")

    @classmethod
    def per_hour(cls, count: float, burst: int) -> RateLimit:
        return cls(burst, count / 3600.0)

    def describe(self, unit: str = "") -> str:
        """``"10 at once, then 20 per hour"``."""
        noun = f" {unit}" if unit else ""
        count, period = self.per_second * 86400, "day"
        for seconds, name in ((1, "second"), (60, "minute"), (3600, "hour")):
            if self.per_second * seconds >= 1:
                count, period = self.per_second * seconds, name
                break
        return f"{self.burst}{noun} at once, then {count:g} per {period}"


@dataclass(frozen=True)
class RateLimits:
    """The arena's own limits. ``None`` switches one off."""

    submissions: RateLimit | None = RateLimit(10, 20 / 3600)
    """Bot submissions per user (admins are exempt)."""
    registrations: RateLimit | None = RateLimit(3, 5 / 3600)
    """Self-service registrations per client IP (when registration is open)."""


NO_LIMITS: Final = RateLimits(submissions=None, registrations=None)
DEFAULT_RATE_LIMITS: Final = RateLimits()


def take(redis: Redis, keys: Keys, kind: str, subject: str, limit: RateLimit, *,
         cost: int = 1, now: float | None = None) -> float:
    """Take ``cost`` tokens from the bucket of ``subject``: 0.0 when taken, else the seconds
    to wait until the bucket holds enough (nothing is taken then)."""
    if cost > limit.burst:
        return math.inf
    reply = script(redis, "rate_take", _TAKE)(
        keys=[keys.rate_limit(kind, subject)],
        args=[limit.burst, repr(float(limit.per_second)), cost,
              repr(time.time() if now is None else now)],
    )
    taken, value = reply
    return 0.0 if int(taken) == 1 else max(float(text(value)), 0.001)


def describe_wait(seconds: float) -> str:
    """``"retry in 2 min 5 s"``: the wait, rounded up, for a person."""
    if math.isinf(seconds):
        return "it can never be taken at once: ask for less"
    whole = max(1, math.ceil(seconds))
    if whole < 60:
        return f"retry in {whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"retry in {minutes} min {secs} s" if secs else f"retry in {minutes} min"
    hours, minutes = divmod(minutes, 60)
    return f"retry in {hours} h {minutes} min" if minutes else f"retry in {hours} h"
