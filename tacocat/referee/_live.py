"""The live seat: a remote bot on a message stream (the gRPC referee's ``Play`` stream), one
game at a time, as the match loop's :class:`~tacocat.referee.Seat`.

A :class:`Connection` is one client's stream: a reader task files every message it receives
in an inbox, and the game takes them out with a deadline. Reading never stops while the game
waits, so a timeout only abandons a wait, never a read: the stream stays usable for the next
game, and a late answer is recognised by its request id and dropped.

The stream is anything with ``await read()`` (bytes, or anything else at its end) and
``await write(bytes)``: the server hands in its gRPC call, and this module never imports
grpc. It is compiled with the loop (:mod:`tacocat.engine._compiled`): every live decision
passes through it twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from collections import deque
from collections.abc import Callable, Sequence
from typing import Protocol

from tacocat.engine import Fault, Observation, Outcome, Round, Ruleset
from tacocat.protocol.proto.v1 import game_pb2 as pb

from ._feed import Answer, Failure, SeatFeed

INBOX_LIMIT = 64
"""Unread messages a client may have waiting; past that it is flooding and is cut off."""


class MessageStream(Protocol):
    """One client's bidirectional stream of serialized messages."""

    async def read(self) -> object:
        """The next message's bytes; anything else (gRPC's ``EOF``) once the client is done."""

    async def write(self, message: bytes) -> None:
        """Send one message; raises when the stream is gone."""


class Wake(enum.Enum):
    TIMEOUT = "timeout"
    LOST = "lost"


class Connection:
    """One live client's stream."""

    def __init__(self, stream: MessageStream, player: str) -> None:
        self.stream = stream
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
        stream = self.stream
        try:
            while True:
                data = await stream.read()
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
                await self.stream.write(data)

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
            await self.stream.write(data)
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
    """A live client in one match (a :class:`~tacocat.referee.Seat`), with ``time_limit``
    seconds per decision, one game at a time.

    The clock of a request starts before it is written: the limit covers the network both
    ways. A client that times out ``max_strikes`` times in a row is given up by the match
    loop's policy (:meth:`give_up`): its stream is closed with the reason, which ends the
    match. ``on_decision``, when given, gets the seconds from each request to its answer,
    failures included: the referee's ``decision_seconds{transport="live"}``.
    """

    broken: Failure | None = None
    never_started = False

    def __init__(self, conn: Connection, time_limit: float, *,
                 on_decision: Callable[[float], None] | None = None) -> None:
        self.conn = conn
        self.time_limit = time_limit
        self.on_decision = on_decision
        self.spent = 0.0
        """The time bank's charge: the seconds the referee waited for this client's answers
        (from when it asked for them), the network included."""
        self.feed = SeatFeed(time_limit)
        self._queue: list[bytes] = []
        self._asked: list[int] = []
        self._sent: list[int] = []
        self._sent_at = 0.0
        self._deadline = 0.0

    @property
    def lost(self) -> str | None:
        return self.conn.lost

    def start(self, game: int, games: int, seat: int, rules: Ruleset, opponent: str) -> None:
        msg = pb.ServerMessage()
        self.feed.game_start(msg, game, games, seat, rules, opponent)
        self._queue.append(msg.SerializeToString())

    def ask(self, game: int, obs: Observation) -> None:
        msg = pb.ServerMessage()
        self._asked.append(self.feed.request(msg, game, obs))
        self._queue.append(msg.SerializeToString())

    def refuse(self, game: int, failure: Failure) -> None:
        if failure.fault is not Fault.DISCONNECT:
            msg = pb.ServerMessage()
            self.feed.refusal(msg, game, failure)
            self._queue.append(msg.SerializeToString())

    def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        msg = pb.ServerMessage()
        self.feed.result(msg, game, outcome, rounds)
        self._queue.append(msg.SerializeToString())

    async def send(self) -> None:
        if self.conn.given_up:
            return  # what is queued now are its last words (last_words())
        queue, self._queue = self._queue, []
        self._sent, self._asked = self._asked, []
        self._sent_at = asyncio.get_running_loop().time()
        self._deadline = self._sent_at + self.time_limit * max(1, len(self._sent))
        for data in queue:
            if not await self.conn.send(data):
                return

    async def answers(self) -> list[Answer]:
        sent, self._sent = self._sent, []
        got: dict[int, Answer] = {}
        clock = asyncio.get_running_loop().time
        entered = clock()
        for request_id in sent:
            while request_id not in got:
                got[request_id] = await self._next(request_id, got)
        # What this client kept the referee waiting (an answer that came while the other
        # seat was waited for cost nothing more).
        self.spent += clock() - entered
        return [got[request_id] for request_id in sent]

    async def _next(self, waiting: int, got: dict[int, Answer]) -> Answer:
        """The answer to ``waiting`` (answers to other requests go into ``got``)."""
        feed, conn = self.feed, self.conn
        while True:
            data = await conn.receive(self._deadline)
            if data is Wake.TIMEOUT:
                feed.abandon(waiting)
                return self._answered(Failure(Fault.TIMEOUT,
                                              f"no answer within {self.time_limit:g} s"))
            if data is Wake.LOST:
                feed.abandon(waiting)
                return self._answered(Failure(Fault.DISCONNECT, conn.lost or "disconnected"))
            assert isinstance(data, bytes)
            read = feed.read_bytes(data)
            if read is None:
                continue  # a late answer to a request given up on
            if isinstance(read, Failure):  # garbage forfeits the game waiting for it
                feed.abandon(waiting)
                return self._answered(read)
            request_id, answer = read
            if request_id == waiting:
                return self._answered(answer)
            got[request_id] = answer

    def _answered(self, answer: Answer) -> Answer:
        """``answer``, once its time since it was asked went to ``on_decision``."""
        if self.on_decision is not None:
            self.on_decision(max(0.0, asyncio.get_running_loop().time() - self._sent_at))
        return answer

    def restart(self) -> None:
        pass  # a live client cannot be restarted; it is never broken either

    def give_up(self, failure: Failure) -> None:
        self.conn.given_up = True
        self.conn.close(failure.detail)

    def last_words(self) -> list[bytes]:
        """What is still queued for a client the referee gave up on: the results of the
        games it forfeited, which it is told before the error that ends its match."""
        queue, self._queue = self._queue, []
        return queue
