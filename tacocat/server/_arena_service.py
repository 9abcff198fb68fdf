# ruff: noqa: N802 - the servicer's methods are named after the RPCs
"""``tacocat.v1.Arena``: the arena API over gRPC, served next to the referee.

A thin async edge over the synchronous :class:`tacocat.arena.Arena`, whose areas hold every
rule: each call authenticates the token in its metadata (``authorization: Bearer TOKEN``),
converts the request to domain values, runs the area's call in a thread pool, and converts the
answer back. Arena refusals become gRPC status codes (``grpc.StatusCode[exc.status]``) with
the arena's message, which says what to do. Calls that change something need a token; reads
may be anonymous, but a token that is sent must be valid.

``WatchLeaderboard`` streams from a shared per-ladder feed (:mod:`._arena_feed`) fed by the
ladder's Redis pub/sub events.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import logging
import math
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Final, TypeVar

import grpc
import grpc.aio

import tacocat
from tacocat.arena import (
    AlreadyExists,
    Arena,
    ArenaError,
    DuplicateSubmission,
    FailedPrecondition,
    InvalidArgument,
    LadderStatus,
    Leaderboard,
    RateLimited,
    RedisUnavailable,
    Unauthenticated,
    User,
)
from tacocat.arena.ids import check_name
from tacocat.engine import EngineError
from tacocat.protocol import ProtocolError, ruleset_from_pb
from tacocat.protocol.arena import ARENA_SERVICE, MAX_ARENA_RESPONSE, REPLAY_CHUNK_BYTES
from tacocat.protocol.proto.v1 import arena_pb2 as apb
from tacocat.protocol.proto.v1 import arena_pb2_grpc as apb_grpc

from ._arena_convert import (
    MATCH_STATUS_FROM_PB,
    bot_to_pb,
    entry_to_pb,
    ladder_to_pb,
    leaderboard_to_pb,
    match_to_pb,
    status_to_pb,
    token_info_to_pb,
    user_to_pb,
    version_to_pb,
)
from ._arena_delta import DeltaEncoder
from ._arena_feed import Feeds
from ._arena_logs import match_logs
from ._auth import token_from_metadata
from ._limits import peer_subject
from ._refusals import refusals as _refusals
from ._strict_rpc import strict_handler
from ._trial_service import TrialRpcs

log = logging.getLogger("tacocat.server.arena")

Context = grpc.aio.ServicerContext[Any, Any]
_R = TypeVar("_R")

REQUEST_MARGIN: Final = 64 * 1024
"""Room in the largest accepted request for the fields around an upload at the limit."""
OVERSIZE_FACTOR: Final = 4
"""Uploads up to this many times the limit still reach the arena's readable refusal."""
MAX_LIST_MATCHES: Final = 1000
MAX_DETAILS: Final = 1000
"""Longest status message sent (messages quote what the caller sent, which may be huge)."""
RETRY_AFTER: Final = "retry-after"
"""Trailing metadata of a RESOURCE_EXHAUSTED refusal: whole seconds until a retry works."""
_NEEDS_TOKEN: Final = (
    "this call needs a token: send `authorization: Bearer TOKEN` (the CLI's --token or "
    "TACOCAT_TOKEN); an admin makes tokens with `tacocat token create --user NAME`"
)


class ArenaService(TrialRpcs, apb_grpc.ArenaServicer):
    """The ``tacocat.v1.Arena`` servicer over one :class:`Arena` (one per server process,
    on a bytes Redis client). Register it with :meth:`register`; :meth:`close` ends the
    watch streams.

    ``web_url`` is what ``GetServerInfo`` reports as the web leaderboard (empty: none);
    ``referee`` whether the Referee is served alongside. ``threads`` bounds the arena calls
    running at once. ``open_registration``: anyone may ``RegisterUser`` (rate-limited per
    IP); off, only admins make users.
    """

    name: str = ARENA_SERVICE

    def __init__(self, arena: Arena, *, web_url: str = "", referee: bool = True,
                 threads: int = 16, watch_debounce: float = 0.1,
                 watch_refresh: float = 30.0, open_registration: bool = False) -> None:
        self.arena = arena
        self.open_registration = open_registration
        self.web_url = web_url
        self.referee = referee
        # gRPC refuses a larger message before any handler runs, with its own terse text;
        # up to OVERSIZE_FACTOR times the limit, the arena refuses it with the message the CLI
        # gives (a raw gRPC client sees the same words).
        self.max_request_bytes = arena.limits.max_upload_bytes * OVERSIZE_FACTOR + REQUEST_MARGIN
        self.max_response_bytes = MAX_ARENA_RESPONSE
        self._executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="arena")
        self.feeds = Feeds(arena, self._fetch_update, debounce=watch_debounce,
                           refresh=watch_refresh)
        self.closing = False

    def register(self, server: grpc.aio.Server) -> None:
        # Not apb_grpc.add_ArenaServicer_to_server: undecodable requests are INVALID_ARGUMENT.
        server.add_generic_rpc_handlers((strict_handler(self, apb, ARENA_SERVICE),))

    async def close(self) -> None:
        """End every watch stream and refuse new calls (UNAVAILABLE: the client retries or
        reconnects); calls already running finish."""
        self.closing = True
        await self.feeds.close()
        self._executor.shutdown(wait=False)

    # -- plumbing -------------------------------------------------------------------------

    async def run(self, function: Callable[..., _R], *args: Any, **kwargs: Any) -> _R:
        """``function(*args, **kwargs)`` in the arena's thread pool.

        gRPC cancels the handler when the client's deadline passes or it hangs up, and the
        cancellation reaches the pool: work still waiting for a thread never runs. A Redis
        step already running finishes (each is atomic); its answer is dropped.
        """
        if self.closing:
            raise _ShuttingDown
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor,
                                          functools.partial(function, *args, **kwargs))

    async def user(self, context: Context, *, required: bool = True) -> User | None:
        """The caller, from the token in the call's metadata. Without a token: None, or
        :class:`Unauthenticated` when ``required``."""
        token = token_from_metadata(context.invocation_metadata())
        if token is None:
            if required:
                raise Unauthenticated(_NEEDS_TOKEN)
            return None
        return await self.run(self.arena.users.authenticate, token)

    async def actor(self, context: Context) -> User:
        user = await self.user(context, required=True)
        assert user is not None
        return user

    async def abort(self, context: Context, exc: BaseException) -> None:
        """End the call with the status ``exc`` stands for (raises)."""
        if isinstance(exc, _ShuttingDown):
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                "the arena server is shutting down; retry shortly")
        if isinstance(exc, ArenaError):
            code = grpc.StatusCode[exc.status]
            if code is grpc.StatusCode.INTERNAL or isinstance(exc, RedisUnavailable):
                # Redis away or refusing writes (a full disk) is the operator's to fix.
                log.error("arena error: %s", exc)
            trailers: tuple[tuple[str, str], ...] = ()
            if isinstance(exc, RateLimited) and math.isfinite(exc.retry_after):
                trailers = ((RETRY_AFTER, str(max(1, math.ceil(exc.retry_after)))),)
            await context.abort(code, _details(exc), trailing_metadata=trailers)
        if isinstance(exc, EngineError | ProtocolError):  # a ruleset the engine refuses
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, _details(exc))
        if isinstance(exc, asyncio.CancelledError | grpc.aio.AbortError):
            raise exc
        log.exception("arena API call failed", exc_info=exc)
        await context.abort(grpc.StatusCode.INTERNAL,
                            f"the arena server failed ({type(exc).__name__}); see its log")

    async def _fetch_update(self, ladder: str, event: str) -> apb.LeaderboardUpdate:
        board, status = await self.run(self._read_ladder, ladder)
        return apb.LeaderboardUpdate(event=event, leaderboard=leaderboard_to_pb(board),
                                     status=status_to_pb(status))

    def _read_ladder(self, ladder: str) -> tuple[Leaderboard, LadderStatus]:
        return self.arena.ladders.leaderboard(ladder), self.arena.ladders.status(ladder)

    # -- server and users -----------------------------------------------------------------

    @_refusals
    async def GetServerInfo(self, request: apb.GetServerInfoRequest,
                            context: Context) -> apb.ServerInfo:
        await self.user(context, required=False)
        return apb.ServerInfo(version=tacocat.__version__, web_url=self.web_url,
                              max_submission_bytes=self.arena.limits.max_upload_bytes,
                              referee=self.referee)

    @_refusals
    async def WhoAmI(self, request: apb.WhoAmIRequest, context: Context) -> apb.User:
        return user_to_pb(await self.actor(context))

    @_refusals
    async def CreateUser(self, request: apb.CreateUserRequest, context: Context) -> apb.User:
        actor = await self.actor(context)
        user = await self.run(self.arena.users.create, actor, request.name, admin=request.admin)
        return user_to_pb(user)

    @_refusals
    async def RegisterUser(self, request: apb.RegisterUserRequest,
                           context: Context) -> apb.CreateTokenResponse:
        if not self.open_registration:
            raise FailedPrecondition(
                "this arena does not take registrations: ask an admin for an account "
                "(tacocat user create NAME, then tacocat token create --user NAME), or run "
                "the server with --open-registration")
        await self.user(context, required=False)  # a token that is sent must be valid
        user, token = await self.run(self.arena.users.register, request.name,
                                     client=peer_subject(context.peer()),
                                     label=request.label)
        log.info("registered user %s from %s", user.name, context.peer())
        return self._token_reply(token, user.name, request.label)

    @_refusals
    async def CreateToken(self, request: apb.CreateTokenRequest,
                          context: Context) -> apb.CreateTokenResponse:
        actor = await self.actor(context)
        target = request.user or actor.name
        token = await self.run(self.arena.users.create_token, actor, target, label=request.label)
        return self._token_reply(token, target, request.label)

    def _token_reply(self, token: str, user: str, label: str) -> apb.CreateTokenResponse:
        digest = hashlib.sha256(token.encode()).hexdigest()
        info = apb.TokenInfo(id=digest[:16], user=user, label=label,
                             created_at=self.arena.clock())
        return apb.CreateTokenResponse(token=token, info=info)

    @_refusals
    async def ListTokens(self, request: apb.ListTokensRequest,
                         context: Context) -> apb.ListTokensResponse:
        actor = await self.actor(context)
        tokens = await self.run(self.arena.users.tokens, actor, request.user or None)
        return apb.ListTokensResponse(tokens=[token_info_to_pb(t) for t in tokens])

    @_refusals
    async def RevokeToken(self, request: apb.RevokeTokenRequest,
                          context: Context) -> apb.RevokeTokenResponse:
        actor = await self.actor(context)
        await self.run(self.arena.users.revoke_token, actor, request.id, request.user or None)
        return apb.RevokeTokenResponse()

    # -- bots -----------------------------------------------------------------------------

    @_refusals
    async def SubmitBot(self, request: apb.SubmitBotRequest,
                        context: Context) -> apb.SubmitBotResponse:
        actor = await self.actor(context)
        if request.ladder:  # refuse an unknown ladder before storing anything
            await self.run(self.arena.ladders.get, request.ladder)
        try:
            version = await self.run(self.arena.bots.submit, actor, request.bot,
                                     request.filename, request.data)
        except DuplicateSubmission as exc:
            if not request.ladder:
                raise
            name = exc.version.partition("/")[2].rpartition("@")[0]
            raise AlreadyExists(
                f"{request.filename} is already {exc.version}; add it to this ladder with "
                f"`tacocat ladder join {request.ladder} {name}` (to submit a new version, "
                "change the code)") from None
        reply = apb.SubmitBotResponse(version=version_to_pb(version))
        if request.ladder:
            try:
                entry = await self.run(self.arena.ladders.join, actor, version.bot,
                                       request.ladder)
                reply.joined = True
            except AlreadyExists:
                entries = await self.run(self.arena.ladders.entries, request.ladder)
                entry = next(e for e in entries if e.bot == version.bot)
            reply.entry.CopyFrom(entry_to_pb(entry))
        log.info("%s submitted %s (%d bytes)%s", actor.name, version.id, version.size,
                 f", ladder {request.ladder}" if request.ladder else "")
        return reply

    @_refusals
    async def ListBots(self, request: apb.ListBotsRequest,
                       context: Context) -> apb.ListBotsResponse:
        await self.user(context, required=False)
        owner = check_name("user", request.owner) if request.owner else None
        bots = await self.run(self.arena.bots.all, owner)
        return apb.ListBotsResponse(bots=[bot_to_pb(b) for b in bots])

    @_refusals
    async def ListVersions(self, request: apb.ListVersionsRequest,
                           context: Context) -> apb.ListVersionsResponse:
        user = await self.user(context, required=False)
        bot = request.bot
        if "/" not in bot and user is not None:
            bot = f"{user.name}/{bot}"  # a bare name is the caller's bot
        versions = await self.run(self.arena.bots.versions, bot)
        return apb.ListVersionsResponse(versions=[version_to_pb(v) for v in versions])

    @_refusals
    async def GetBuildLog(self, request: apb.GetBuildLogRequest,
                          context: Context) -> apb.BuildLog:
        # A token is needed (UNAUTHENTICATED without); the arena refuses non-owners.
        actor = await self.actor(context)
        return apb.BuildLog(log=await self.run(self.arena.bots.build_log, actor, request.version))

    # -- ladders --------------------------------------------------------------------------

    @_refusals
    async def CreateLadder(self, request: apb.CreateLadderRequest,
                           context: Context) -> apb.Ladder:
        actor = await self.actor(context)
        settings: dict[str, Any] = {}
        if request.HasField("ruleset"):
            try:
                settings["ruleset"] = ruleset_from_pb(request.ruleset)
            except ProtocolError as exc:  # the engine's reason, without the game protocol's words
                cause = exc.__cause__
                why = (f"unknown enum value {cause}: arrows are ARROW_SEAT_0, ARROW_SEAT_1 or "
                       "ARROW_BOTH, the tie rule TIE_RULE_NO_MOVE or TIE_RULE_ARROW"
                       if isinstance(cause, KeyError) else str(cause or exc))
                raise InvalidArgument(f"bad ruleset: {why}") from None
        if request.games_per_pairing:
            settings["games_per_pairing"] = request.games_per_pairing
        if request.games_per_match:
            settings["games_per_match"] = request.games_per_match
        if request.decision_seconds:
            settings["decision_seconds"] = request.decision_seconds
        if request.batch:
            settings["batch"] = request.batch
        ladder = await self.run(self.arena.ladders.create, actor, request.name, **settings)
        log.info("%s created ladder %s", actor.name, ladder.name)
        return ladder_to_pb(ladder)

    @_refusals
    async def ListLadders(self, request: apb.ListLaddersRequest,
                          context: Context) -> apb.ListLaddersResponse:
        await self.user(context, required=False)
        ladders = await self.run(self.arena.ladders.all)
        return apb.ListLaddersResponse(ladders=[ladder_to_pb(lad) for lad in ladders])

    @_refusals
    async def JoinLadder(self, request: apb.JoinLadderRequest, context: Context) -> apb.Entry:
        actor = await self.actor(context)
        entry = await self.run(self.arena.ladders.join, actor, request.bot, request.ladder)
        return entry_to_pb(entry)

    @_refusals
    async def GetLeaderboard(self, request: apb.GetLeaderboardRequest,
                             context: Context) -> apb.Leaderboard:
        await self.user(context, required=False)
        return leaderboard_to_pb(await self.run(self.arena.ladders.leaderboard, request.ladder))

    @_refusals
    async def GetLadderStatus(self, request: apb.GetLadderStatusRequest,
                              context: Context) -> apb.LadderStatus:
        await self.user(context, required=False)
        return status_to_pb(await self.run(self.arena.ladders.status, request.ladder))

    async def WatchLeaderboard(self, request: apb.WatchLeaderboardRequest,
                               context: Context) -> AsyncIterator[apb.LeaderboardUpdate]:
        try:
            await self.user(context, required=False)
            await self.run(self.arena.ladders.get, request.ladder)  # NOT_FOUND up front
            if self.feeds.closed:
                raise _ShuttingDown
            async with self.feeds.watch(request.ladder) as feed:
                sent = 0
                deltas = DeltaEncoder()
                while True:
                    found = await feed.next_update(sent)
                    if found is None:
                        raise _ShuttingDown
                    sent, update = found
                    yield deltas.encode(update)
        except _ShuttingDown:
            await context.abort(grpc.StatusCode.UNAVAILABLE,
                                "the arena server is shutting down; reconnect")
        except Exception as exc:
            await self.abort(context, exc)

    # -- matches --------------------------------------------------------------------------

    @_refusals
    async def ListMatches(self, request: apb.ListMatchesRequest,
                          context: Context) -> apb.ListMatchesResponse:
        await self.user(context, required=False)
        status = MATCH_STATUS_FROM_PB.get(request.status)
        count = min(request.count or 100, MAX_LIST_MATCHES)
        page = await self.run(self.arena.matches.page, request.ladder, status=status,
                              start=request.start, count=count,
                              newest_first=request.newest_first)
        return apb.ListMatchesResponse(matches=[match_to_pb(m) for m in page.matches],
                                       total=page.total, max_count=MAX_LIST_MATCHES)

    @_refusals
    async def GetMatch(self, request: apb.GetMatchRequest, context: Context) -> apb.Match:
        await self.user(context, required=False)
        return match_to_pb(await self.run(self.arena.matches.get, request.id))

    async def GetMatchReplays(self, request: apb.GetMatchReplaysRequest,
                              context: Context) -> AsyncIterator[apb.ReplayChunk]:
        try:
            await self.user(context, required=False)
            blob = await self.run(self.arena.matches.replays_blob, request.id)
        except Exception as exc:
            await self.abort(context, exc)
            return
        for start in range(0, len(blob), REPLAY_CHUNK_BYTES):
            yield apb.ReplayChunk(data=blob[start:start + REPLAY_CHUNK_BYTES],
                                  total_bytes=len(blob))

    @_refusals
    async def GetMatchLogs(self, request: apb.GetMatchLogsRequest,
                           context: Context) -> apb.MatchLogs:
        # A token is needed (UNAUTHENTICATED without); the arena refuses non-owners.
        return await self.run(match_logs, self.arena, await self.actor(context), request)


def _details(exc: BaseException) -> str:
    """The status message for ``exc``: its text, cut to :data:`MAX_DETAILS` characters."""
    text = str(exc)
    return text if len(text) <= MAX_DETAILS else text[:MAX_DETAILS - 3] + "..."


class _ShuttingDown(Exception):  # noqa: N818 - a signal between two lines, not an error
    pass
