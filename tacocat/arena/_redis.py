"""Small helpers shared by the stores: decoding replies and registering Lua scripts.

The arena takes a client with ``decode_responses=False`` (RQ needs one, and replays and bot
sources are bytes), so every text reply is decoded here, in one place.
"""

from __future__ import annotations

import time
import weakref
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

import redis
from redis.commands.core import Script

from .errors import InvalidArgument, RedisUnavailable

Redis: TypeAlias = redis.Redis
Clock: TypeAlias = Callable[[], float]
"""Seconds since the epoch; :func:`time.time` unless a test passes its own."""

default_clock: Clock = time.time

# Scripts are registered once per client (redis-py re-loads one after a server restart
# empties the script cache). Weak keys, so a closed client takes its scripts with it.
_scripts: weakref.WeakKeyDictionary[Any, dict[str, Script]] = weakref.WeakKeyDictionary()


def script(client: Redis, name: str, source: str) -> Script:
    """The Lua script ``source`` registered on ``client`` (once), under a module-unique name."""
    registered = _scripts.setdefault(client, {})
    found = registered.get(name)
    if found is None:
        found = registered[name] = client.register_script(source)
    return found


def check_client(client: Redis) -> None:
    """Refuse a client that decodes replies: bot sources and replays are binary."""
    if not isinstance(client, redis.Redis):
        raise InvalidArgument(
            f"expected a redis.Redis client, got {type(client).__name__}; pass "
            "redis.Redis.from_url(url)"
        )
    if client.get_connection_kwargs().get("decode_responses"):
        raise InvalidArgument(
            "the Redis client decodes responses (decode_responses=True), but bot sources and "
            "replays are binary; pass a client made without decode_responses, as RQ needs too"
        )


def text(value: object) -> str:
    """A reply as text ("" for a missing value)."""
    if value is None:
        return ""
    return value.decode() if isinstance(value, bytes) else str(value)


def scored(reply: object) -> list[tuple[str, float]]:
    """A ZRANGE ... WITHSCORES reply as ``(member, score)`` pairs."""
    assert isinstance(reply, list)
    return [(text(member), float(score)) for member, score in reply]


def text_map(mapping: Mapping[Any, Any]) -> dict[str, str]:
    """An HGETALL reply with keys and values as text."""
    return {text(key): text(value) for key, value in mapping.items()}


def number(value: bytes | str | None, default: int = 0) -> int:
    """An integer reply, or ``default`` for a missing one."""
    return default if value is None or value in (b"", "") else int(value)


# Error replies of a server that is up but cannot take writes now (a full or failing disk,
# maxmemory, a replica, still loading): the same condition for the arena as a lost server.
_REFUSALS = ("MISCONF", "OOM", "READONLY", "LOADING", "MASTERDOWN", "NOREPLICAS")


def as_unavailable(exc: BaseException) -> RedisUnavailable | None:
    """The :class:`RedisUnavailable` that ``exc`` stands for, with what to do, or None if
    ``exc`` is not about Redis being unreachable or refusing writes."""
    if isinstance(exc, RedisUnavailable):
        return exc
    if isinstance(exc, redis.ConnectionError | redis.TimeoutError):
        return RedisUnavailable(
            f"Redis did not answer ({type(exc).__name__}: {exc}); check that it runs "
            "and REDIS_URL points at it, then retry (every arena step is atomic)")
    if isinstance(exc, redis.ResponseError):
        # redis-py prefixes an error inside a pipeline: "Command # 1 (...) of pipeline
        # caused error: MISCONF ...".
        reply = str(exc).rpartition("caused error: ")[2]
        code = reply.split(" ", 1)[0]
        if code in _REFUSALS:
            hint = ("its disk is full or failing: free space on the Redis host; the arena "
                    "goes on by itself once Redis can write, and nothing recorded is lost"
                    if code == "MISCONF" else "retry when it accepts writes again")
            return RedisUnavailable(f"Redis refuses writes ({reply}); {hint}")
    # A refusal met while handling another error (RQ's clean-up after a failed heartbeat).
    context = exc.__context__
    return as_unavailable(context) if context is not None and context is not exc else None
