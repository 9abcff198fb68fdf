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

from .errors import InvalidArgument

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
