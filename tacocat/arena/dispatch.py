"""Waking whoever turns arena state into queued work, and handing out smoke tests once.

The gRPC server may not import RQ (docs/ARCHITECTURE.md), yet joining a ladder, activating
a version or submitting a bot makes work due. So the arena records *that* work is due and
a dispatcher on the worker side (which has RQ) does it:

- :func:`request_tick` adds a ladder name (or ``*`` for "everything") to a set and wakes
  the dispatcher; ``Arena`` calls it whenever it changed what is due.
- :func:`wait_for_tick` blocks until woken (BLPOP, with a timeout so a dispatcher still
  sweeps periodically) and takes the set.
- :func:`due_smoke_tests` hands out pending versions that need a smoke game: each one
  once, and again only after ``retry_after`` seconds without a decision (a lost job).
"""

from __future__ import annotations

from typing import Final

from ._redis import Redis, script, text
from .keys import Keys

ALL: Final = "*"

_DUE: Final = """
-- KEYS: pending versions zset, dispatched hash (version -> time).
-- ARGV: now, retry_after. Returns the versions handed out, stamping them with now.
local now = tonumber(ARGV[1])
local due = {}
for _, vid in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  local at = tonumber(redis.call('HGET', KEYS[2], vid) or '-1')
  if at < 0 or now - at >= tonumber(ARGV[2]) then
    redis.call('HSET', KEYS[2], vid, ARGV[1])
    table.insert(due, vid)
  end
end
-- Forget the stamps of versions that were decided meanwhile.
for _, vid in ipairs(redis.call('HKEYS', KEYS[2])) do
  if not redis.call('ZSCORE', KEYS[1], vid) then redis.call('HDEL', KEYS[2], vid) end
end
return due
"""


def request_tick(redis: Redis, keys: Keys, ladder: str = ALL) -> None:
    """Ask the dispatcher to schedule ``ladder`` (``*``: every ladder) soon.

    Bounded however often it is called and whether or not a dispatcher runs: the requests
    are a set of ladder names, and the wake-up list is trimmed to one element.
    """
    pipe = redis.pipeline(transaction=True)
    pipe.sadd(keys.ticks, ladder)
    pipe.rpush(keys.wake, "1")
    pipe.ltrim(keys.wake, -1, -1)
    pipe.execute()


def wait_for_tick(redis: Redis, keys: Keys, timeout: float) -> set[str]:
    """Block up to ``timeout`` seconds for tick requests; returns the ladders asked for
    (``{"*"}`` for all, an empty set on timeout) and clears them."""
    redis.blpop([keys.wake], timeout=timeout)
    pipe = redis.pipeline(transaction=True)
    pipe.smembers(keys.ticks)
    pipe.delete(keys.ticks)
    asked, _ = pipe.execute()
    return {text(m) for m in asked}


def due_smoke_tests(redis: Redis, keys: Keys, *, now: float, retry_after: float) -> list[str]:
    """Pending versions to smoke-test now: never handed out, or handed out ``retry_after``
    seconds ago without a decision since. Safe with several dispatchers (one Lua step)."""
    due = script(redis, "due_smoke_tests", _DUE)(
        keys=[keys.pending_versions, keys.smoke_dispatched], args=[repr(now), retry_after]
    )
    return [text(v) for v in due]
