"""``Referee.Play``: who plays whom, and the matches themselves.

Each stream is one client playing one match, against a house bot or against another live
client from the queue. Every match runs in a task of its own around the one match loop
(:func:`tacocat.referee.referee_match`, one game at a time, its fault policy with three
timeouts in a row ending the match), so one client's timeout, illegal action, garbage or
disconnect forfeits that client's game and nothing else. The handler only authenticates,
reads the PlayRequest, and waits until the match is done with its stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
import math
import secrets
from collections import Counter
from collections.abc import Sequence
from typing import Final

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from tacocat.arena.ratelimit import describe_wait
from tacocat.engine import HOUSE_BOTS, MatchGame, duplicate_pairs
from tacocat.protocol import MAX_CLIENT_MESSAGE, PLAY_METHOD, PROTOCOL_VERSION, REFEREE_SERVICE
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.referee import (
    Connection,
    FaultPolicy,
    InProcessSeat,
    LiveSeat,
    clean_text,
    error_message,
    match_end,
    referee_match,
)

from ._auth import Authenticator, token_from_metadata
from ._config import RefereeConfig
from ._limits import GameLimiter, MemoryLimiter, peer_subject
from ._records import FinishedGame, RecordSink
from .metrics import ServerMetrics, server_metrics

log = logging.getLogger("tacocat.server")

HOUSE_PREFIX: Final = "house:"
LINGER: Final = 1.0
"""Seconds a finished stream waits for the client to hang up before the referee does."""
GIVEN_UP_LINGER: Final = 5.0
"""The same for a client dropped for its timeouts: it may wake up late, then it should
still be able to read why it was dropped."""
ANONYMOUS: Final = "anonymous"
_STATUS: Final[dict[int, grpc.StatusCode]] = {
    pb.ERROR_CODE_INVALID_REQUEST: grpc.StatusCode.INVALID_ARGUMENT,
    pb.ERROR_CODE_UNAUTHENTICATED: grpc.StatusCode.UNAUTHENTICATED,
    pb.ERROR_CODE_UNAVAILABLE: grpc.StatusCode.UNAVAILABLE,
    pb.ERROR_CODE_RESOURCE_EXHAUSTED: grpc.StatusCode.RESOURCE_EXHAUSTED,
}
RETRY_AFTER: Final = "retry-after"
"""Trailing metadata of a rate-limit refusal: whole seconds to wait (as HTTP's header)."""


class _RefusedError(Exception):
    """Ends a stream before any match: sent to the client as a fatal Error."""

    def __init__(self, code: int, message: str, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after


class RefereeService:
    """The ``tacocat.v1.Referee`` service (register :meth:`handler` on a grpc.aio server).

    ``limiter`` holds the live-game token buckets (``config.live_game_limit``); default one
    in this process's memory. ``metrics`` receives each live decision's time (its
    :meth:`~ServerMetrics.observe_decision` is every live seat's ``on_decision``); default
    the process-wide :func:`server_metrics`, as a prometheus-client metric defaults to the
    default registry."""

    def __init__(self, config: RefereeConfig, authenticator: Authenticator | None,
                 sinks: Sequence[RecordSink], limiter: GameLimiter | None = None, *,
                 metrics: ServerMetrics | None = None) -> None:
        self.config = config
        self.authenticator = authenticator
        self.sinks = list(sinks)
        self.limiter: GameLimiter = limiter or MemoryLimiter()
        self.metrics = metrics if metrics is not None else server_metrics()
        self._playing: Counter[str] = Counter()
        """Streams per rate-limit subject that passed admission and have not ended."""
        self.closing = False
        self.games = 0
        """Games finished since the start."""
        self._waiting: dict[int, tuple[Connection, asyncio.TimerHandle]] = {}
        self._expired: set[Connection] = set()
        self._matches: set[asyncio.Task[None]] = set()
        self._ids = itertools.count(1)

    def handler(self) -> grpc.GenericRpcHandler:
        # Raw bytes in and out: a message that does not parse is the client's protocol fault,
        # which the referee must see, not an opaque failure deep inside gRPC.
        method = PLAY_METHOD.rsplit("/", 1)[1]
        return grpc.method_handlers_generic_handler(
            REFEREE_SERVICE, {method: grpc.stream_stream_rpc_method_handler(self.play)})

    @property
    def active_matches(self) -> int:
        return len(self._matches)

    # ---------------------------------------------------------------- the stream

    async def play(self, _requests: object,
                   context: grpc.aio.ServicerContext[bytes, bytes]) -> None:
        try:
            conn, request, subject = await self._open(context)
        except _RefusedError as refused:
            await self._refuse(context, refused.code, refused.message, refused.retry_after)
            return
        if conn is None:
            return
        try:
            await self._play(context, conn, request)
        finally:
            self._release(subject)

    async def _play(self, context: grpc.aio.ServicerContext[bytes, bytes], conn: Connection,
                    request: pb.PlayRequest) -> None:
        reader = asyncio.create_task(conn.read_forever())
        try:
            self._place(conn, request)
            await asyncio.shield(conn.done)
            # Let the client's last writes land (a late answer, its half-close) before the
            # stream ends: ending it under an in-flight client write makes gRPC fail the call
            # on the client's side and drop what the client has not read yet (MatchEnd, or
            # the fatal error that says why).
            if conn not in self._expired:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(reader),
                                           GIVEN_UP_LINGER if conn.given_up else LINGER)
        finally:
            # Cancelled here means the client is gone: its match must learn that now.
            conn.close("the client disconnected")
            self._leave_queue(conn)
            reader.cancel()
        if conn in self._expired:
            self._expired.discard(conn)
            await self._refuse(context, pb.ERROR_CODE_UNAVAILABLE,
                               "the referee is shutting down" if self.closing else
                               f"no live opponent asked for {request.games or 1} games within "
                               f"{self.config.queue_timeout:g} s")

    async def _open(self, context: grpc.aio.ServicerContext[bytes, bytes]
                    ) -> tuple[Connection | None, pb.PlayRequest, str]:
        """Read the PlayRequest, authenticate, check it and admit the client; ``None`` if it
        left first. The request is read before anything is refused: ending a stream under
        the client's in-flight first write would lose the Error that says why."""
        try:
            async with asyncio.timeout(self.config.hello_timeout):
                data = await context.read()
        except TimeoutError:
            raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST, "no PlayRequest within "
                           f"{self.config.hello_timeout:g} s") from None
        if self.closing:
            raise _RefusedError(pb.ERROR_CODE_UNAVAILABLE, "the referee is shutting down")
        if not isinstance(data, bytes):
            return None, pb.PlayRequest(), ""
        identity = await self._identify(context)
        if len(data) > MAX_CLIENT_MESSAGE:
            raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST,
                                f"a first message of {len(data)} bytes; at most "
                                f"{MAX_CLIENT_MESSAGE} bytes per message")
        try:
            first = pb.ClientMessage.FromString(data)
        except DecodeError:
            first = pb.ClientMessage()
        if first.WhichOneof("kind") != "play":
            raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST,
                           "the first message must be a PlayRequest")
        request = first.play
        if request.protocol != PROTOCOL_VERSION:
            raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST,
                                f"this referee speaks game protocol {PROTOCOL_VERSION} and the "
                                f"client {request.protocol or 1}: upgrade the client "
                                "(pip install -U tacocat-arena)")
        games = request.games or 1
        if games > self.config.max_games:
            raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST,
                           f"{games} games asked; at most {self.config.max_games} per match")
        if request.opponent:
            name = request.opponent.removeprefix(HOUSE_PREFIX)
            if not request.opponent.startswith(HOUSE_PREFIX) or name not in HOUSE_BOTS:
                raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST,
                               f"unknown opponent {clean_text(request.opponent, 60)!r}; play "
                               + ", ".join(HOUSE_PREFIX + n for n in sorted(HOUSE_BOTS))
                               + ", or leave it empty for a live opponent")
        elif identity is None:
            raise _RefusedError(pb.ERROR_CODE_UNAUTHENTICATED,
                           "anonymous clients may only play house bots; send a token "
                           "(authorization: Bearer TOKEN) to play live opponents")
        elif request.seed:
            raise _RefusedError(pb.ERROR_CODE_INVALID_REQUEST,
                           "a seed is for house matches only; the referee deals live matches")
        bot = clean_text(request.bot_name, 60).replace("/", "_")
        player = f"{identity or ANONYMOUS}/{bot}" if bot else identity or ANONYMOUS
        subject = identity if identity is not None else peer_subject(context.peer())
        await self._admit(subject, identity, games)
        return Connection(context, player), request, subject

    async def _admit(self, subject: str, identity: str | None, games: int) -> None:
        """Count the client in against its per-player limits, or refuse it."""
        who = f"player {identity!r}" if identity is not None else \
            f"anonymous clients from {subject.removeprefix('ip:')}"
        most = self.config.max_matches_per_player
        if self._playing[subject] >= most:
            raise _RefusedError(
                pb.ERROR_CODE_RESOURCE_EXHAUSTED,
                f"{who} already has {self._playing[subject]} matches running or waiting, the "
                f"most one player may have at once; let one finish (or ask for more games "
                f"per match) and retry", retry_after=1.0)
        self._playing[subject] += 1  # before the await: concurrent streams count at once
        limit = self.config.live_game_limit
        if limit is None:
            return
        try:
            wait = await self.limiter.take(subject, games, limit)
        except BaseException:
            self._release(subject)
            raise
        if wait > 0:
            self._release(subject)
            raise _RefusedError(
                pb.ERROR_CODE_RESOURCE_EXHAUSTED,
                f"too many live games for {who}: the limit is {limit.describe('games')} "
                f"(this match asks for {games}); {describe_wait(wait)}", retry_after=wait)

    def _release(self, subject: str) -> None:
        if not subject:
            return
        self._playing[subject] -= 1
        if self._playing[subject] <= 0:
            del self._playing[subject]

    async def _identify(self, context: grpc.aio.ServicerContext[bytes, bytes]) -> str | None:
        token = token_from_metadata(context.invocation_metadata())
        if token is None:
            return None
        if self.authenticator is None:
            raise _RefusedError(pb.ERROR_CODE_UNAUTHENTICATED,
                           "this referee knows no tokens: play house bots anonymously")
        try:
            identity = await self.authenticator.authenticate(token)
        except Exception:
            log.exception("the authenticator failed")
            raise _RefusedError(pb.ERROR_CODE_UNAVAILABLE,
                           "cannot check tokens right now; try again") from None
        if identity is None:
            raise _RefusedError(pb.ERROR_CODE_UNAUTHENTICATED, "unknown token")
        return identity

    async def _refuse(self, context: grpc.aio.ServicerContext[bytes, bytes], code: int,
                      message: str, retry_after: float | None = None) -> None:
        try:
            async with asyncio.timeout(1.0):
                await context.write(error_message(code, message, fatal=True))
        except Exception:  # the client is already gone: nothing to tell
            return
        trailers: tuple[tuple[str, str], ...] = ()
        if retry_after is not None and math.isfinite(retry_after):
            trailers = ((RETRY_AFTER, str(max(1, math.ceil(retry_after)))),)
        await context.abort(_STATUS.get(code, grpc.StatusCode.FAILED_PRECONDITION), message,
                            trailing_metadata=trailers)

    # ---------------------------------------------------------------- matchmaking

    def _place(self, conn: Connection, request: pb.PlayRequest) -> None:
        games = request.games or 1
        if request.opponent:
            seed = request.seed or secrets.token_hex(8)
            house = InProcessSeat(HOUSE_BOTS[request.opponent.removeprefix(HOUSE_PREFIX)])
            self._start(conn, house, (conn.player, request.opponent), games, seed)
            return
        waiting = self._waiting.pop(games, None)
        if waiting is not None:
            other, timer = waiting
            timer.cancel()
            other.on_lost = None
            if other.lost is None:
                self._start(other, conn, (other.player, conn.player), games,
                            secrets.token_hex(8))
                return
            other.finish()
        timer = asyncio.get_running_loop().call_later(self.config.queue_timeout,
                                                      self._expire, games, conn)
        self._waiting[games] = (conn, timer)
        conn.on_lost = lambda: self._leave_queue(conn, finish=True)

    def _expire(self, games: int, conn: Connection) -> None:
        if self._waiting.get(games, (None,))[0] is conn:
            del self._waiting[games]
            self._expired.add(conn)
            conn.finish()

    def _leave_queue(self, conn: Connection, finish: bool = False) -> None:
        for games, (waiting, timer) in list(self._waiting.items()):
            if waiting is conn:
                timer.cancel()
                del self._waiting[games]
                if finish:  # it hung up while waiting: its handler may return now
                    conn.finish()

    def _start(self, a: Connection, b: Connection | InProcessSeat, names: tuple[str, str],
               games: int, seed: str) -> None:
        match_id = f"m{next(self._ids)}-{secrets.token_hex(4)}"
        task = asyncio.create_task(self._run_match(match_id, a, b, names, games, seed),
                                   name=f"match {match_id}")
        self._matches.add(task)
        task.add_done_callback(self._matches.discard)

    # ---------------------------------------------------------------- matches

    async def _run_match(self, match_id: str, a: Connection, b: Connection | InProcessSeat,
                         names: tuple[str, str], games: int, seed: str) -> None:
        """``games`` games in duplicate pairs, one at a time (as ``play_local`` plays)."""
        limit, timed = self.config.time_limit, self.metrics.observe_decision
        b_live = isinstance(b, Connection)
        conns = [a, b] if isinstance(b, Connection) else [a]
        seats = (LiveSeat(a, limit, on_decision=timed),
                 LiveSeat(b, limit, on_decision=timed) if isinstance(b, Connection) else b)
        policy = FaultPolicy(max_strikes=self.config.max_timeouts, end_match_on_give_up=True,
                             bank_limits_per_game=self.config.bank_limits_per_game)

        async def emit(game: MatchGame) -> None:
            live = (True, b_live) if game.a_seat == 0 else (b_live, True)
            await self._emit(FinishedGame(match_id, game.index, games, live, game.record))

        played, detail, cancelled = 0, "", False
        try:
            match = await referee_match(seats, duplicate_pairs(games, seed), names=names,
                                        rules=self.config.rules, policy=policy, on_game=emit)
            played, detail = len(match.games), match.ended
        except asyncio.CancelledError:
            cancelled, detail = True, "the referee is shutting down"
        except Exception:
            log.exception("match %s failed", match_id)
            detail = "the referee failed this match"
        finally:
            for conn, seat in zip(conns, seats, strict=False):
                if conn.given_up:
                    assert isinstance(seat, LiveSeat)
                    for data in seat.last_words():  # its last games' results first
                        await conn.tell(data)
                    await conn.tell(error_message(pb.ERROR_CODE_TIMEOUT, conn.lost or "",
                                                  fatal=True))
                elif conn.lost is None:
                    if cancelled:
                        await conn.send(error_message(pb.ERROR_CODE_UNAVAILABLE, detail,
                                                      fatal=True))
                    else:
                        await conn.send(match_end(played, detail))
                conn.finish()
        if cancelled:
            raise asyncio.CancelledError

    async def _emit(self, game: FinishedGame) -> None:
        self.games += 1
        for sink in self.sinks:
            try:
                result = sink(game)
                if inspect.isawaitable(result):
                    await result
            except Exception:
                log.exception("record sink %r failed for %s game %d", sink, game.match_id,
                              game.game)

    async def shutdown(self, grace: float) -> None:
        """Stop taking matches; abort the running ones after ``grace`` (their records say
        ``aborted``) and tell their clients."""
        self.closing = True
        for conn, timer in self._waiting.values():
            timer.cancel()
            self._expired.add(conn)
            conn.finish()
        self._waiting.clear()
        if self._matches:
            _, pending = await asyncio.wait(set(self._matches), timeout=grace)
            for task in pending:
                task.cancel()
            if pending:
                await asyncio.wait(pending, timeout=2.0)
