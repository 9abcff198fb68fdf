"""Live ladder updates: one Redis pub/sub listener per web process, fanned out to browsers.

The arena publishes every change of a ladder on its events channel (a recorded result, a new
standings snapshot, scheduled matches, a version joining; see ``tacocat.arena.standings``).
:class:`LiveHub` holds one pattern subscription to all ladders' channels on a
``redis.asyncio`` connection. When an event arrives for a ladder that someone watches, the
hub marks it dirty; one render task per ladder then reads the ladder once (in a worker
thread, through the sync facade), renders the page fragments once and hands the result to
every watcher. Renders are coalesced: a burst of events costs one read per
``min_interval``, and a watcher that reads slowly only ever gets the newest update, so no
queue grows.

Events carry the ladder's version (results count); updates carry it too, and the browser
ignores one older than what it shows. After a lost Redis connection the listener reconnects
with backoff and refreshes every watched ladder, since events published meanwhile are lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

log = logging.getLogger("tacocat.web")

Render = Callable[[str, Hashable], Awaitable[dict[str, Any]]]
"""(ladder name, view) -> the update to send (JSON-ready; has ``version``). The view is
what the watcher asked to see (a page of a big ladder); each distinct one renders once."""


class Watcher:
    """One browser's subscription: the newest update it has not sent yet."""

    def __init__(self, ladder: str, view: Hashable = None) -> None:
        self.ladder = ladder
        self.view = view
        self.latest: dict[str, Any] | None = None
        self.closed = False
        self._ready = asyncio.Event()

    def offer(self, update: dict[str, Any]) -> None:
        self.latest = update
        self._ready.set()

    def close(self) -> None:
        self.closed = True
        self._ready.set()

    async def next(self, timeout: float) -> dict[str, Any] | None:
        """The newest update, or None after ``timeout`` seconds without one (or when
        closed)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        self._ready.clear()
        update, self.latest = self.latest, None
        return update


@dataclass
class _Ladder:
    watchers: set[Watcher] = field(default_factory=set)
    dirty: bool = False
    task: asyncio.Task[None] | None = None


class LiveHub:
    """Watchers per ladder, fed from Redis pub/sub. Start with :meth:`start` inside the
    running loop, stop with :meth:`close`."""

    def __init__(self, redis_url: str, pattern: str, channel_of: Callable[[str], str],
                 render: Render, *, min_interval: float = 0.25,
                 reconnect_delay: float = 0.5) -> None:
        self.redis_url = redis_url
        self.pattern = pattern
        self.channel_of = channel_of
        self.render = render
        self.min_interval = min_interval
        self.reconnect_delay = reconnect_delay
        self.connected = asyncio.Event()
        self._ladders: dict[str, _Ladder] = {}
        self._channels: dict[str, str] = {}
        self._listener: asyncio.Task[None] | None = None
        self._closed = False

    @property
    def closed(self) -> bool:
        """The app is shutting down: event streams should end."""
        return self._closed

    # -- watchers --------------------------------------------------------------------------

    def watch(self, ladder: str, view: Hashable = None) -> Watcher:
        watcher = Watcher(ladder, view)
        state = self._ladders.setdefault(ladder, _Ladder())
        state.watchers.add(watcher)
        self._channels[self.channel_of(ladder)] = ladder
        return watcher

    def unwatch(self, watcher: Watcher) -> None:
        state = self._ladders.get(watcher.ladder)
        if state is None:
            return
        state.watchers.discard(watcher)
        if not state.watchers and state.task is None:
            self._forget(watcher.ladder)

    def watchers(self, ladder: str) -> int:
        state = self._ladders.get(ladder)
        return len(state.watchers) if state else 0

    def _forget(self, ladder: str) -> None:
        self._ladders.pop(ladder, None)
        self._channels.pop(self.channel_of(ladder), None)

    def changed(self, ladder: str) -> None:
        """Something changed on ``ladder``: render it for its watchers (coalesced)."""
        state = self._ladders.get(ladder)
        if state is None or not state.watchers or self._closed:
            return
        state.dirty = True
        if state.task is None:
            state.task = asyncio.create_task(self._refresh(ladder, state),
                                             name=f"tacocat-web-refresh-{ladder}")

    async def _refresh(self, ladder: str, state: _Ladder) -> None:
        try:
            while state.dirty and state.watchers and not self._closed:
                state.dirty = False
                for view in {w.view for w in state.watchers}:
                    try:
                        update = await self.render(ladder, view)
                    except Exception:  # a render failure must not kill live updates for good
                        log.exception("live update of ladder %r failed", ladder)
                        continue
                    for watcher in list(state.watchers):
                        if watcher.view == view:
                            watcher.offer(update)
                await asyncio.sleep(self.min_interval)
        finally:
            state.task = None
            if not state.watchers:
                self._forget(ladder)

    # -- the Redis listener ----------------------------------------------------------------

    def start(self) -> None:
        if self._listener is None:
            self._listener = asyncio.create_task(self._listen(), name="tacocat-web-pubsub")

    async def close(self) -> None:
        self._closed = True
        for state in self._ladders.values():
            for watcher in state.watchers:
                watcher.close()
            if state.task is not None:
                state.task.cancel()
        tasks = [s.task for s in self._ladders.values() if s.task is not None]
        if self._listener is not None:
            self._listener.cancel()
            tasks.append(self._listener)
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._listener = None

    async def _listen(self) -> None:
        delay = self.reconnect_delay
        first = True
        while not self._closed:
            client = aioredis.Redis.from_url(self.redis_url)
            pubsub = client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.psubscribe(self.pattern)
                self.connected.set()
                if not first:
                    log.info("live updates: reconnected to Redis")
                    for ladder in list(self._ladders):
                        self.changed(ladder)  # events published meanwhile are lost
                first, delay = False, self.reconnect_delay
                while not self._closed:
                    message = await pubsub.get_message(timeout=30.0)
                    if message is None:
                        await pubsub.ping()
                        continue
                    self._dispatch(message)
            except asyncio.CancelledError:
                raise
            except (RedisError, OSError) as exc:
                self.connected.clear()
                first = False
                log.warning("live updates: lost Redis (%s); retrying in %.1f s", exc, delay)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call, unused-ignore]
                with contextlib.suppress(Exception):
                    await client.aclose()

    def _dispatch(self, message: dict[str, Any]) -> None:
        if message.get("type") not in ("pmessage", "message"):
            return
        channel = message.get("channel")
        if isinstance(channel, bytes):
            channel = channel.decode("utf-8", "replace")
        ladder = self._channels.get(str(channel))
        if ladder is None:
            return
        data = message.get("data")
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            event = json.loads(data) if isinstance(data, bytes | str) else {}
            log.debug("ladder %r event %r", ladder, event.get("event"))
        self.changed(ladder)
