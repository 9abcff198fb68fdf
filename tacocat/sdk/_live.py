"""Live play: any :class:`Bot` against the gRPC referee (``Referee.Play``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Final

import grpc
import grpc.aio
from google.protobuf.message import DecodeError

from tacocat.engine import Bot
from tacocat.protocol import (
    DEFAULT_ADDRESS,
    MAX_CLIENT_MESSAGE,
    MAX_SERVER_MESSAGE,
    PLAY_METHOD,
    PROTOCOL_VERSION,
)
from tacocat.protocol.proto.v1 import game_pb2 as pb

from ._errors import ConnectionLostError, MatchEndedError, ProtocolError, RefereeError, SdkError
from ._game_result import GameResult
from ._session import BotSession
from ._tls import TlsOption, connect_hint, resolve_tls
from .loader import name_of

LIVE: Final = "live"
"""``opponent=LIVE`` (or ``None``) waits for another live client instead of a house bot."""

CHANNEL_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.max_send_message_length", MAX_CLIENT_MESSAGE),
    ("grpc.max_receive_message_length", MAX_SERVER_MESSAGE),
    # Pings keep NAT and proxies from dropping a connection while the bot thinks; no more
    # often than the referee allows (it answers too-frequent pings with GOAWAY).
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.keepalive_permit_without_calls", 0),
)


def connect(bot: Bot | Callable[[], Bot], address: str = DEFAULT_ADDRESS,
            token: str | None = None, *,
            games: int = 1, opponent: str | None = "house:greedy", seed: str | None = None,
            name: str | None = None, tls: TlsOption = None,
            credentials: grpc.ChannelCredentials | None = None,
            timeout: float | None = None) -> list[GameResult]:
    """Play a live match at the referee on ``address``; blocks until it ends.

    Each game is played by its own copy of ``bot`` (or by what ``bot()`` returns, when it is
    a bot class or another factory), as in :func:`play_local`.

    ``opponent`` is ``house:NAME``, or ``None``/``"live"`` to be paired with another live
    client that asked for as many games (that needs a ``token``: anonymous clients play
    house bots only). ``seed`` fixes a house match's deals (practice; the referee picks one
    otherwise). ``name`` is the bot's name in the records (default ``bot.name``).

    For a TLS referee pass ``tls=True`` (trust the system's roots) or a
    :class:`~tacocat.sdk.Tls` (a private CA, a client certificate for mutual TLS);
    ``credentials`` takes ready-made gRPC channel credentials instead. ``timeout`` is a
    deadline for the whole match in seconds: past it the referee stops the match (the game
    under way is forfeited as a disconnect) and this raises :class:`ConnectionLostError`.

    Returns one :class:`GameResult` per game. A bot that raises, answers illegally or too
    late forfeits that game only (its result says why); three timeouts in a row end the match
    (the rule of local play and the arena too) with :class:`MatchEndedError`, whose
    ``results`` holds every game played. Raises :class:`RefereeError` when the referee
    refuses the match and :class:`ConnectionLostError` when the stream fails, both with the
    games finished before in ``results``. From inside an event loop, ``await connect_async(...)``.
    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:
        raise SdkError("connect() blocks; inside an event loop use await connect_async(...)")
    return asyncio.run(connect_async(bot, address, token, games=games, opponent=opponent,
                                     seed=seed, name=name, tls=tls, credentials=credentials,
                                     timeout=timeout))


async def connect_async(bot: Bot | Callable[[], Bot], address: str = DEFAULT_ADDRESS,
                        token: str | None = None, *,
                        games: int = 1, opponent: str | None = "house:greedy",
                        seed: str | None = None, name: str | None = None,
                        tls: TlsOption = None,
                        credentials: grpc.ChannelCredentials | None = None,
                        options: Sequence[tuple[str, int | str]] = (),
                        timeout: float | None = None) -> list[GameResult]:
    """:func:`connect` for asyncio code. Many of these can share one event loop, but a
    bot's decision blocks the loop while it runs."""
    hello = pb.ClientMessage()
    play = hello.play
    play.bot_name = name or name_of(bot)
    play.games = games
    play.opponent = "" if opponent is None or opponent == LIVE else opponent
    play.seed = seed or ""
    play.protocol = PROTOCOL_VERSION
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    all_options: list[tuple[str, int | str]] = [*CHANNEL_OPTIONS, *options]
    settings = resolve_tls(tls)
    if settings is not None:
        all_options += settings.channel_options()
        if credentials is None:
            credentials = settings.credentials()
    channel = (grpc.aio.secure_channel(address, credentials, options=all_options)
               if credentials is not None else
               grpc.aio.insecure_channel(address, options=all_options))
    session = BotSession(bot)  # a copy of ``bot`` for each game
    try:
        await _play(session, channel, hello, metadata, timeout, address,
                    credentials is not None)
    except RefereeError as exc:
        if exc.code == "TIMEOUT":  # the policy's give-up: the match ended, not the client
            raise MatchEndedError(exc.code, exc.message, session.results, games) from None
        exc.results = session.results
        raise
    except ConnectionLostError as exc:
        exc.results = session.results
        raise
    return session.results


async def _play(session: BotSession, channel: grpc.aio.Channel, hello: pb.ClientMessage,
                metadata: Sequence[tuple[str, str]], timeout: float | None, address: str,
                secure: bool) -> None:
    """The match's stream, from the hello to the match's end; raises when it fails."""
    async with channel:
        # Raw bytes both ways: a message that does not parse is this side's protocol error
        # to report, not an opaque failure inside gRPC.
        call: grpc.aio.StreamStreamCall[bytes, bytes] = channel.stream_stream(PLAY_METHOD)(
            metadata=metadata, timeout=timeout)
        failed: grpc.aio.AioRpcError | None = None
        writable = True
        started = asyncio.get_running_loop().time()
        try:
            outgoing: bytes | None = hello.SerializeToString()
            while True:
                if outgoing is not None and writable:
                    try:
                        await call.write(outgoing)
                    except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as exc:
                        # The stream is closed (or never opened). Whatever the referee said
                        # before that (a fatal error, say) is still to be read, and says
                        # more than this failure does.
                        writable = False
                        if isinstance(exc, grpc.aio.AioRpcError):
                            failed = exc
                if session.finished:
                    break
                try:
                    data = await call.read()
                except grpc.aio.AioRpcError as exc:
                    failed = failed or exc
                    break
                if not isinstance(data, bytes):  # grpc.aio.EOF
                    break
                try:
                    msg = pb.ServerMessage.FromString(data)
                except DecodeError:
                    raise ProtocolError(f"undecodable message from the referee "
                                        f"({len(data)} bytes)") from None
                reply = session.handle(msg)
                outgoing = reply.SerializeToString() if reply is not None else None
            if session.finished and writable:
                await call.done_writing()
        finally:
            if not session.finished:
                call.cancel()
        if not session.finished:
            # The call's final status says most (DEADLINE_EXCEEDED, ...); a failed write
            # only knew that writing failed ("Internal error from Core").
            code, details = await call.code(), await call.details() or ""
            if failed is not None and code in (grpc.StatusCode.OK, grpc.StatusCode.CANCELLED):
                code, details = failed.code(), failed.details() or ""
            if timeout is not None and code is grpc.StatusCode.INTERNAL and \
                    asyncio.get_running_loop().time() - started >= timeout:
                # grpc.aio reports a deadline that passes during a write as INTERNAL.
                code = grpc.StatusCode.DEADLINE_EXCEEDED
                details = f"the match did not end within its timeout of {timeout:g} s"
            if failed is not None or code is not grpc.StatusCode.OK:
                hint = (f"; {connect_hint(secure)}"
                        if "failed to connect" in details.lower() else "")
                raise ConnectionLostError(f"live match at {address} failed: {details}{hint}",
                                          code.name)
            raise ConnectionLostError(f"the referee at {address} ended the stream before the "
                                      f"match ended: {details}", code.name)
