"""A live client's seat at the referee's tables (house bots sit as the SDK's ``LocalSeat``).

A :class:`Connection` is one client's ``Play`` stream: a reader task files every message it
receives in an inbox, and the game takes them out with a deadline. Reading never stops while
the game waits, so a timeout only abandons a wait, never a read: the stream stays usable for
the next game, and a late answer is recognised by its request id and dropped.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
from collections import deque
from collections.abc import Callable, Sequence

import grpc
import grpc.aio

from tacocat.engine import Fault, Observation, Outcome, Round, Ruleset
from tacocat.sdk import Answer, Failure, SeatFeed

log = logging.getLogger("tacocat.server")

INBOX_LIMIT = 64
"""Unread messages a client may have waiting; past that it is flooding and is cut off."""


class Wake(enum.Enum):
    TIMEOUT = "timeout"
    LOST = "lost"


class Connection:
    """One live client's stream."""

    __slots__ = ("_items", "_loop", "_waiter", "context", "done", "given_up", "lost", "on_lost",
                 "player")

    def __init__(self, context: grpc.aio.ServicerContext[bytes, bytes], player: str) -> None:
        self.context = context
        self.player = player
        self.lost: str | None = None
        """Why the stream is gone (``None`` while it works)."""
        self.given_up = False
        """Whether the referee gave up on a client that may still be listening."""
        self._loop = asyncio.get_running_loop()
        self.done: asyncio.Future[None] = self._loop.create_future()
        """Set when the match no longer needs this stream; the handler then returns."""
        self._items: deque[bytes] = deque()
        self._waiter: asyncio.Future[bool] | None = None
        self.on_lost: Callable[[], None] | None = None
        """Called once when the stream is lost (the queue drops a waiting client)."""

    async def read_forever(self) -> None:
        """The reader task: file messages until the client stops sending.

        It reads on after the stream is given up, dropping what comes, so that a client's
        late writes land and it can still read why it was dropped.
        """
        context = self.context
        try:
            while True:
                data = await context.read()
                if not isinstance(data, bytes):  # grpc.aio.EOF
                    self.close("the client closed its stream")
                    return
                if self.lost is not None:
                    continue
                if len(self._items) >= INBOX_LIMIT:
                    self.close(f"more than {INBOX_LIMIT} unanswered messages")
                    continue
                self._items.append(data)
                waiter = self._waiter
                if waiter is not None and not waiter.done():
                    waiter.set_result(True)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke: the client is gone, whatever the cause
            self.close(f"the stream failed: {type(exc).__name__}")

    def close(self, why: str) -> None:
        """Mark the stream lost (first reason wins) and wake a waiting game."""
        if self.lost is None:
            self.lost = why
            if self.on_lost is not None:
                self.on_lost()
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(True)

    async def tell(self, data: bytes) -> None:
        """Last words to a client the referee gave up on (it may still be listening)."""
        with contextlib.suppress(Exception):
            async with asyncio.timeout(1.0):
                await self.context.write(data)

    def finish(self) -> None:
        if not self.done.done():
            self.done.set_result(None)

    async def receive(self, deadline: float) -> bytes | Wake:
        """The next message, or why none came by ``deadline`` (event-loop time)."""
        loop = self._loop
        while not self._items:
            if self.lost is not None:
                return Wake.LOST
            if loop.time() >= deadline:
                return Wake.TIMEOUT
            waiter = loop.create_future()
            self._waiter = waiter
            timer = loop.call_at(deadline, _expire, waiter)
            try:
                await waiter
            finally:
                timer.cancel()
                self._waiter = None
        return self._items.popleft()

    async def send(self, data: bytes) -> bool:
        """Write one message; ``False`` (and the stream marked lost) when that fails.

        No timeout here, on the hottest path: a client that stops reading stops answering,
        and the match drops it after a few timeouts, long before the unread messages could
        fill the flow-control window and block a write (keepalive covers a dead peer).
        """
        if self.lost is not None:
            return False
        try:
            await self.context.write(data)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the RPC ended under us: the client went away
            self.close(f"the stream failed: {type(exc).__name__}")
            return False
        return True


def _expire(waiter: asyncio.Future[bool]) -> None:
    if not waiter.done():
        waiter.set_result(False)


class LiveSeat:
    """A live client in one match, with ``time_limit`` seconds per decision.

    ``max_timeouts`` timeouts in a row mean the client is gone (or has stopped reading): its
    stream is then given up, which ends the match after the current game.

    ``on_decision``, when given, is called with the seconds from each :meth:`ask` (the clock
    starts before the request is written) to the :meth:`answer` it got, failures included
    (a timeout, a lost stream, garbage): the referee's ``decision_seconds{transport="live"}``.
    """

    __slots__ = ("_deadline", "_timeouts", "conn", "feed", "max_timeouts", "on_decision",
                 "time_limit")

    def __init__(self, conn: Connection, time_limit: float, max_timeouts: int = 3, *,
                 on_decision: Callable[[float], None] | None = None) -> None:
        self.conn = conn
        self.time_limit = time_limit
        self.max_timeouts = max_timeouts
        self.on_decision = on_decision
        self.feed = SeatFeed(time_limit)
        self._deadline = 0.0
        self._timeouts = 0

    async def start(self, game: int, games: int, seat: int, rules: Ruleset,
                    opponent: str) -> None:
        await self.conn.send(self.feed.game_start(game, games, seat, rules, opponent))

    async def ask(self, obs: Observation) -> None:
        # The clock starts before the write: the limit covers the network both ways.
        self._deadline = asyncio.get_running_loop().time() + self.time_limit
        await self.conn.send(self.feed.request(obs))

    async def answer(self) -> Answer:
        feed, conn = self.feed, self.conn
        while True:
            got = await conn.receive(self._deadline)
            if got is Wake.TIMEOUT:
                feed.abandon()
                self._timeouts += 1
                if self._timeouts >= self.max_timeouts:
                    conn.given_up = True
                    conn.close(f"no answer to {self._timeouts} requests in a row")
                return self._answered(
                    Failure(Fault.TIMEOUT, f"no answer within {self.time_limit:g} s"))
            if got is Wake.LOST:
                feed.abandon()
                return self._answered(Failure(Fault.DISCONNECT, conn.lost or "disconnected"))
            assert isinstance(got, bytes)
            answer = feed.read(got)
            if answer is not None:
                if isinstance(answer, Failure):
                    feed.abandon()
                self._timeouts = 0
                return self._answered(answer)

    def _answered(self, answer: Answer) -> Answer:
        """``answer``, once its time since :meth:`ask` went to ``on_decision``."""
        if self.on_decision is not None:
            asked = self._deadline - self.time_limit
            self.on_decision(max(0.0, asyncio.get_running_loop().time() - asked))
        return answer

    async def refuse(self, failure: Failure) -> None:
        if failure.fault is not Fault.DISCONNECT:
            await self.conn.send(self.feed.refusal(failure))

    async def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        await self.conn.send(self.feed.result(game, outcome, rounds))

