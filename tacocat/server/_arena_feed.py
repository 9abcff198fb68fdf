"""Live leaderboards for ``Arena.WatchLeaderboard``: one change feed per watched ladder.

A :class:`LadderFeed` subscribes to the ladder's Redis pub/sub channel
(``arena.ladders.events_channel``) in a thread of its own, and on every event (coalescing
bursts for ``debounce`` seconds) re-reads the leaderboard and the ladder status once,
however many clients watch. It keeps only the newest update: each watcher sends the newest
one it has not sent, so a slow reader skips intermediate states instead of queueing them. A
periodic re-read (``refresh``) covers events lost while the pub/sub connection was down.

:class:`Feeds` starts a ladder's feed with its first watcher and stops it with its last.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Final

from tacocat.arena import Arena
from tacocat.protocol.proto.v1 import arena_pb2 as apb

log = logging.getLogger("tacocat.server.arena")

Fetch = Callable[[str, str], Awaitable[apb.LeaderboardUpdate]]
"""``fetch(ladder, event)``: the ladder's update now, labelled with ``event``."""

# When several events arrive in one burst, the update is labelled with the most telling one.
_PRIORITY: Final = ("result", "standings", "versions", "requeued", "scheduled", "refresh")
_RETRY_SECONDS: Final = (0.2, 0.5, 1.0, 2.0, 5.0)


class LadderFeed:
    """The newest :class:`apb.LeaderboardUpdate` of one ladder, kept current."""

    def __init__(self, arena: Arena, ladder: str, fetch: Fetch, *, debounce: float,
                 refresh: float) -> None:
        self.arena = arena
        self.ladder = ladder
        self.fetch = fetch
        self.debounce = debounce
        self.refresh = refresh
        self.watchers = 0
        self.closed = False
        self.latest: apb.LeaderboardUpdate | None = None
        self.seq = 0
        self._fingerprint = b""
        self._changed = asyncio.Condition()
        self._events: asyncio.Queue[str] = asyncio.Queue()
        self._loop = asyncio.get_running_loop()
        self._stop = threading.Event()
        self._subscribed = asyncio.Event()
        self._listener = threading.Thread(target=self._listen, daemon=True,
                                          name=f"arena-events-{ladder}")
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._listener.start()
        self._task = asyncio.create_task(self._run(), name=f"arena-feed-{self.ladder}")

    async def stop(self) -> None:
        """Stop listening and wake every watcher (they see :attr:`closed`)."""
        self.closed = True
        self._stop.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        async with self._changed:
            self._changed.notify_all()
        await asyncio.to_thread(self._listener.join, 2.0)

    async def next_update(self, after: int) -> tuple[int, apb.LeaderboardUpdate] | None:
        """The newest update once it is newer than number ``after`` (0: any), as ``(number,
        update)``; None once the feed is closed."""
        async with self._changed:
            await self._changed.wait_for(lambda: self.closed or self.seq > after)
            if self.closed or self.latest is None:
                return None
            return self.seq, self.latest

    # -- the publisher (event loop) -------------------------------------------------------

    async def _run(self) -> None:
        # Subscribe before the first read, so no change falls between the two.
        await self._subscribed.wait()
        event = "snapshot"
        failures = 0
        while not self.closed:
            try:
                update = await self.fetch(self.ladder, event)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                delay = _RETRY_SECONDS[min(failures, len(_RETRY_SECONDS) - 1)]
                failures += 1
                log.warning("leaderboard of %r: %s; retrying in %g s", self.ladder, exc, delay)
                await asyncio.sleep(delay)
                continue
            failures = 0
            await self._publish(update)
            event = await self._next_event()

    async def _publish(self, update: apb.LeaderboardUpdate) -> None:
        fingerprint = (update.leaderboard.SerializeToString(deterministic=True)
                       + update.status.SerializeToString(deterministic=True))
        if fingerprint == self._fingerprint:
            return  # nothing a watcher would see changed
        self._fingerprint = fingerprint
        async with self._changed:
            self.latest = update
            self.seq += 1
            self._changed.notify_all()

    async def _next_event(self) -> str:
        """Wait for an event (or the refresh interval), then gather the rest of its burst;
        the most telling event name of the burst."""
        try:
            first = await asyncio.wait_for(self._events.get(), timeout=self.refresh)
        except TimeoutError:
            return "refresh"
        seen = {first}
        await asyncio.sleep(self.debounce)
        while not self._events.empty():
            seen.add(self._events.get_nowait())
        return min(seen, key=lambda e: _PRIORITY.index(e) if e in _PRIORITY else len(_PRIORITY))

    # -- the listener (its own thread) ----------------------------------------------------

    def _listen(self) -> None:
        channel = self.arena.ladders.events_channel(self.ladder)
        while not self._stop.is_set():
            pubsub = self.arena.redis.pubsub(  # type: ignore[no-untyped-call, unused-ignore]
                ignore_subscribe_messages=True)
            try:
                pubsub.subscribe(channel)
                self._loop.call_soon_threadsafe(self._subscribed.set)
                while not self._stop.is_set():
                    message = pubsub.get_message(timeout=0.5)
                    if message is not None and message.get("type") == "message":
                        self._post(_event_name(message.get("data")))
            except Exception as exc:
                if self._stop.is_set():
                    return
                log.warning("events of ladder %r: %s; resubscribing", self.ladder, exc)
                self._post("refresh")  # events may have been missed meanwhile
                self._stop.wait(1.0)
            finally:
                with contextlib.suppress(Exception):
                    pubsub.close()

    def _post(self, event: str) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: we are shutting down
            self._loop.call_soon_threadsafe(self._events.put_nowait, event)


def _event_name(data: object) -> str:
    try:
        payload = json.loads(data.decode() if isinstance(data, bytes) else str(data))
        name = payload.get("event") if isinstance(payload, dict) else None
    except (ValueError, UnicodeDecodeError):
        name = None
    return name if isinstance(name, str) and name else "refresh"


class Feeds:
    """The feeds of the ladders being watched now."""

    def __init__(self, arena: Arena, fetch: Fetch, *, debounce: float = 0.1,
                 refresh: float = 30.0) -> None:
        self.arena = arena
        self.fetch = fetch
        self.debounce = debounce
        self.refresh = refresh
        self.closed = False
        self._feeds: dict[str, LadderFeed] = {}
        self._stopping: set[asyncio.Task[None]] = set()

    @contextlib.asynccontextmanager
    async def watch(self, ladder: str) -> AsyncIterator[LadderFeed]:
        """The ladder's feed, started if this is its first watcher."""
        feed = self._feeds.get(ladder)
        if feed is None:
            feed = LadderFeed(self.arena, ladder, self.fetch, debounce=self.debounce,
                              refresh=self.refresh)
            self._feeds[ladder] = feed
            feed.start()
        feed.watchers += 1
        try:
            yield feed
        finally:
            feed.watchers -= 1
            if feed.watchers == 0 and self._feeds.get(ladder) is feed:
                del self._feeds[ladder]
                # In a task: this runs while the watcher's own task may be cancelled.
                task = asyncio.create_task(feed.stop())
                self._stopping.add(task)
                task.add_done_callback(self._stopping.discard)

    @property
    def watched(self) -> dict[str, int]:
        """Watchers per ladder."""
        return {name: feed.watchers for name, feed in self._feeds.items()}

    async def close(self) -> None:
        """Stop every feed; their watchers end."""
        self.closed = True
        feeds = list(self._feeds.values())
        self._feeds.clear()
        await asyncio.gather(*(feed.stop() for feed in feeds), *self._stopping,
                             return_exceptions=True)
