"""Live-game rate limits at the referee: token buckets in the arena's Redis (shared by every
server process), or in memory for a referee without an arena.

The referee calls ``await limiter.take(subject, games, limit)`` once a PlayRequest is
valid; ``subject`` is the player (the token's user) or ``ip:ADDRESS`` for an anonymous
client (:func:`peer_subject`). It answers 0.0 (taken) or the seconds to wait.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import math
import time
from collections.abc import Callable
from typing import Protocol
from urllib.parse import unquote

from tacocat.arena import Arena
from tacocat.arena import ratelimit as rl
from tacocat.arena.ratelimit import RateLimit

log = logging.getLogger("tacocat.server")


class GameLimiter(Protocol):
    async def take(self, subject: str, cost: int, limit: RateLimit) -> float:
        """Take ``cost`` from ``subject``'s bucket: 0.0, or the seconds to wait."""


class MemoryLimiter:
    """Token buckets in this process. At most ``max_subjects`` are kept: past that, the
    buckets that have refilled completely are forgotten (they hold nothing worth keeping)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 max_subjects: int = 100_000) -> None:
        self.clock = clock
        self.max_subjects = max_subjects
        self._buckets: dict[str, tuple[float, float]] = {}

    async def take(self, subject: str, cost: int, limit: RateLimit) -> float:
        return self.take_now(subject, cost, limit)

    def take_now(self, subject: str, cost: int, limit: RateLimit) -> float:
        if cost > limit.burst:
            return math.inf
        now = self.clock()
        tokens, at = self._buckets.get(subject, (float(limit.burst), now))
        if now > at:
            tokens = min(float(limit.burst), tokens + (now - at) * limit.per_second)
            at = now
        if tokens < cost:
            return max((cost - tokens) / limit.per_second, 0.001)
        if subject not in self._buckets and len(self._buckets) >= self.max_subjects:
            self._forget_full(limit, now)
        self._buckets[subject] = (tokens - cost, at)
        return 0.0

    def _forget_full(self, limit: RateLimit, now: float) -> None:
        full = [s for s, (tokens, at) in self._buckets.items()
                if tokens + (now - at) * limit.per_second >= limit.burst]
        for subject in full:
            del self._buckets[subject]
        if len(self._buckets) >= self.max_subjects:  # still full of busy subjects
            oldest = sorted(self._buckets, key=lambda s: self._buckets[s][1])
            for subject in oldest[: len(oldest) // 2]:
                del self._buckets[subject]


class ArenaLimiter:
    """Buckets in the arena's Redis (kind ``live``), so every referee process sharing the
    Redis shares the limits. If Redis fails, the in-memory ``fallback`` decides (logged):
    house games need no Redis, and a Redis outage should not lift the limits."""

    def __init__(self, arena: Arena, fallback: MemoryLimiter | None = None) -> None:
        self.arena = arena
        self.fallback = fallback or MemoryLimiter()

    async def take(self, subject: str, cost: int, limit: RateLimit) -> float:
        arena = self.arena
        try:
            return await asyncio.to_thread(rl.take, arena.redis, arena.keys, rl.LIVE, subject,
                                           limit, cost=cost, now=arena.clock())
        except Exception as exc:
            log.warning("live-game limits fall back to memory: Redis failed (%s: %s)",
                        type(exc).__name__, exc)
            return self.fallback.take_now(subject, cost, limit)


def peer_subject(peer: str) -> str:
    """The rate-limit subject of an anonymous client: ``ip:ADDRESS`` from gRPC's peer string
    (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``, URL-quoted or not). IPv6 clients are grouped
    by /64, the block one host usually holds."""
    text = unquote(peer or "")
    kind, _, rest = text.partition(":")
    if kind == "ipv4":
        return "ip:" + rest.rsplit(":", 1)[0]
    if kind == "ipv6":
        host = rest[1:].partition("]")[0] if rest.startswith("[") else rest.rsplit(":", 1)[0]
        try:
            address = ipaddress.IPv6Address(host.partition("%")[0])
        except ValueError:
            return "ip:" + host
        if address.is_loopback:
            return "ip:::1"
        if address.ipv4_mapped is not None:
            return f"ip:{address.ipv4_mapped}"
        return f"ip:{ipaddress.IPv6Network(f'{address}/64', strict=False)}"
    return kind or "unknown"
