"""The arena API from Python: :class:`ArenaClient` (synchronous gRPC).

Everything the ``tacocat`` CLI does with an arena (submit, ladder, leaderboard, token,
user) is a call here, so a bot author can script the same::

    from tacocat.sdk import ArenaClient

    with ArenaClient("localhost:50051", token="tct_...") as arena:
        arena.submit("mybot.py", ladder="main")       # a pending version, joined to main
        for update in arena.watch("main"):            # live standings
            print(update.leaderboard.standings[0])

The token comes from the ``token`` argument, else the ``TACOCAT_TOKEN`` environment
variable, else a token file: ``token_file``, ``TACOCAT_TOKEN_FILE``, or (for a server on this
machine only, and only when no token was given at all) ``.tacocat/data/admin.token``, which
``tacocat serve`` and ``tacocat up`` write on their first start. A token that is given but
empty is an error, never a reason to use another one. Without any, calls are anonymous:
reads work, changes are refused.

Every refusal raises an :class:`ArenaApiError` subclass chosen by the gRPC status code, with
the server's message and what to do about it.
"""

from __future__ import annotations

import gzip
import ipaddress
import os
import re
import zlib
from collections.abc import Callable, Generator
from pathlib import Path
from types import TracebackType
from typing import Any, Final, TypeVar

import grpc

from tacocat.engine import GameRecord, RecordError, Ruleset
from tacocat.models import (
    BotInfo,
    BotVersion,
    Entry,
    Ladder,
    LadderStatus,
    Leaderboard,
    Match,
    MatchStatus,
    TokenInfo,
    User,
)
from tacocat.protocol import DEFAULT_ADDRESS, ruleset_to_pb
from tacocat.protocol.arena import (
    MAX_ARENA_REQUEST,
    MAX_ARENA_RESPONSE,
    MAX_SUBMISSION_BYTES,
)
from tacocat.protocol.manifest import ManifestError
from tacocat.protocol.proto.v1 import arena_pb2 as apb
from tacocat.protocol.proto.v1 import arena_pb2_grpc as apb_grpc

from ._arena_types import (
    LeaderboardUpdate,
    MatchList,
    NewToken,
    ServerInfo,
    Submitted,
    bot_from_pb,
    entry_from_pb,
    ladder_from_pb,
    leaderboard_from_pb,
    match_from_pb,
    status_from_pb,
    token_info_from_pb,
    user_from_pb,
    version_from_pb,
)
from ._bot_zip import zip_bot_folder
from ._errors import (
    AlreadyExistsError,
    ArenaApiError,
    AuthError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    SdkError,
    ServerUnavailableError,
)
from ._follow import Reconnecting, reconnecting
from ._logs_types import MatchLogs
from ._tls import Tls, TlsOption, connect_hint, resolve_tls
from ._trial_calls import TrialCalls

DEFAULT_DATA_DIR: Final = Path(".tacocat") / "data"
"""Where ``tacocat serve`` and ``tacocat up`` keep the embedded Redis and the admin token."""
ADMIN_TOKEN_FILE: Final = "admin.token"
"""The admin token's file name in the data dir (mode 0600), written on the first start."""
SAVED_ADMIN_TOKEN: Final = DEFAULT_DATA_DIR / ADMIN_TOKEN_FILE
"""Where the local server's admin token is read from when no token is given."""
TOKEN_ENV: Final = "TACOCAT_TOKEN"
TOKEN_FILE_ENV: Final = "TACOCAT_TOKEN_FILE"
SERVER_ENV: Final = "TACOCAT_ADDRESS"

CHANNEL_OPTIONS: Final[tuple[tuple[str, int], ...]] = (
    ("grpc.max_send_message_length", MAX_ARENA_REQUEST),
    ("grpc.max_receive_message_length", MAX_ARENA_RESPONSE),
    # A follower waiting for a restarted server retries every few seconds (tacocat.sdk.
    # _follow); gRPC's own reconnection backoff (up to 2 minutes) must not outlast that.
    ("grpc.initial_reconnect_backoff_ms", 500),
    ("grpc.max_reconnect_backoff_ms", 5000),
)

_BOT_NAME_BAD: Final = re.compile(r"[^a-z0-9_-]+")
_T = TypeVar("_T")


# ------------------------------------------------------------------------------- errors


_ERRORS: Final[dict[grpc.StatusCode, type[ArenaApiError]]] = {
    grpc.StatusCode.UNAUTHENTICATED: AuthError,
    grpc.StatusCode.PERMISSION_DENIED: PermissionDeniedError,
    grpc.StatusCode.NOT_FOUND: NotFoundError,
    grpc.StatusCode.ALREADY_EXISTS: AlreadyExistsError,
    grpc.StatusCode.INVALID_ARGUMENT: InvalidRequestError,
    grpc.StatusCode.FAILED_PRECONDITION: InvalidRequestError,
    grpc.StatusCode.OUT_OF_RANGE: InvalidRequestError,
    grpc.StatusCode.RESOURCE_EXHAUSTED: RateLimitedError,
    grpc.StatusCode.UNAVAILABLE: ServerUnavailableError,
    grpc.StatusCode.DEADLINE_EXCEEDED: ServerUnavailableError,
    grpc.StatusCode.ABORTED: ServerUnavailableError,
}


# ------------------------------------------------------------------------------- tokens


def is_local_address(address: str) -> bool:
    """Whether ``address`` (``host:port``) names this machine (loopback or ``localhost``)."""
    text = address.strip().lower()
    if text.startswith(("unix:", "unix-abstract:")):
        return True
    text = text.removeprefix("dns:///").removeprefix("ipv4:").removeprefix("ipv6:")
    if text.startswith("["):
        host = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        host = text.partition(":")[0]
    else:
        host = text
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def find_token(address: str, token: str | None = None,
               token_file: str | Path | None = None) -> tuple[str | None, str | None]:
    """``(token, where it came from)`` by the rules in the module doc; ``(None, None)`` when
    there is none. A token that is given but empty (the argument, ``$TACOCAT_TOKEN`` set to
    nothing, an empty token file) raises :class:`SdkError` rather than falling back to
    another one, as does an explicitly named token file that cannot be read."""
    if token is not None:
        if not token.strip():
            raise SdkError("the token given is empty: pass a token (tct_...), or leave "
                           "the token out to use $TACOCAT_TOKEN or the local admin token")
        return token.strip(), "the token argument"
    env = os.environ.get(TOKEN_ENV)
    if env is not None:
        if not env.strip():
            raise SdkError(f"${TOKEN_ENV} is set but empty: set it to a token (tct_...) or "
                           f"unset it (unset {TOKEN_ENV})")
        return env.strip(), f"${TOKEN_ENV}"
    named = token_file or os.environ.get(TOKEN_FILE_ENV, "").strip() or None
    if named is not None:
        path = Path(named)
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise SdkError(f"cannot read the token file {str(path)!r}: {exc.strerror}") \
                from None
        if not text:
            raise SdkError(f"the token file {str(path)!r} is empty: write a token (tct_...) "
                           "in it")
        return text, str(path)
    # Nothing given: the local server's admin token, never sent to another machine.
    if is_local_address(address):
        try:
            text = SAVED_ADMIN_TOKEN.read_text(encoding="utf-8").strip()
        except OSError:
            return None, None
        if text:
            return text, str(SAVED_ADMIN_TOKEN)
    return None, None


def bot_name_for(path: Path) -> str:
    """The bot name a file is submitted under by default: its stem (its folder's name for a
    ``bot.py``), lowercased, with other characters than ``[a-z0-9_-]`` turned into ``-``."""
    stem = path.stem
    if stem.lower() == "bot" and path.resolve().parent.name:
        stem = path.resolve().parent.name
    name = _BOT_NAME_BAD.sub("-", stem.lower()).strip("-_")[:40]
    return name or "bot"


# ------------------------------------------------------------------------------- client


class ArenaClient(TrialCalls):
    """A connection to an arena server (``tacocat serve``). Use it as a context manager or
    call :meth:`close`.

    ``address`` defaults to ``$TACOCAT_ADDRESS`` or ``localhost:50051``; ``token`` as in the
    module doc. ``timeout`` bounds every call but :meth:`watch` (seconds): it is the call's
    gRPC deadline, so the server stops working on a call the client gave up on.

    For a TLS server pass ``tls=True`` (trust the system's roots) or a
    :class:`~tacocat.sdk.Tls` (a private CA; a client certificate and key for mutual TLS);
    ``credentials`` takes ready-made gRPC channel credentials instead. ``cli``: errors
    suggest the ``tacocat`` command's flags (``--tls``) rather than Python's arguments.
    """

    def __init__(self, address: str | None = None, token: str | None = None, *,
                 token_file: str | Path | None = None, timeout: float = 30.0,
                 tls: TlsOption = None,
                 credentials: grpc.ChannelCredentials | None = None, cli: bool = False) -> None:
        self.cli = cli
        """Hints in errors name the ``tacocat`` command's flags rather than Python's."""
        self.address = address or os.environ.get(SERVER_ENV, "").strip() or DEFAULT_ADDRESS
        self.token, self.token_source = find_token(self.address, token, token_file)
        self.timeout = timeout
        self.tls: Tls | None = resolve_tls(tls)
        options: list[tuple[str, int | str]] = list(CHANNEL_OPTIONS)
        if self.tls is not None:
            options += self.tls.channel_options()
            if credentials is None:
                credentials = self.tls.credentials()
        self.secure = credentials is not None
        if credentials is None:
            self._channel = grpc.insecure_channel(self.address, options=options)
        else:
            self._channel = grpc.secure_channel(self.address, credentials, options=options)
        self._stub = apb_grpc.ArenaStub(self._channel)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> ArenaClient:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ArenaClient({self.address!r}, token from {self.token_source or 'nowhere'})"

    # -- server and users -----------------------------------------------------------------

    def server_info(self) -> ServerInfo:
        return ServerInfo.from_pb(self._call(self._stub.GetServerInfo,
                                             apb.GetServerInfoRequest()))

    def wait_until_ready(self, timeout: float = 10.0) -> ServerInfo:
        """Wait up to ``timeout`` seconds for the server to answer; its :class:`ServerInfo`."""
        try:
            grpc.channel_ready_future(self._channel).result(timeout=timeout)
        except grpc.FutureTimeoutError:
            raise ServerUnavailableError(
                "UNAVAILABLE", f"the arena server at {self.address} did not answer within "
                f"{timeout:g} s; is `tacocat serve` running there?") from None
        return self.server_info()

    def whoami(self) -> User:
        return user_from_pb(self._call(self._stub.WhoAmI, apb.WhoAmIRequest()))

    def create_user(self, name: str, *, admin: bool = False) -> User:
        """Create a user (admins only); give it a token with :meth:`create_token`."""
        return user_from_pb(self._call(self._stub.CreateUser,
                                           apb.CreateUserRequest(name=name, admin=admin)))

    def create_token(self, user: str | None = None, *, label: str = "") -> NewToken:
        """A new token for ``user`` (default: yourself; another user takes an admin). The
        plaintext is in the result's ``token``, shown this once."""
        reply = self._call(self._stub.CreateToken,
                           apb.CreateTokenRequest(user=user or "", label=label))
        return NewToken(reply.token, token_info_from_pb(reply.info))

    def register(self, name: str, *, label: str = "") -> NewToken:
        """Make yourself a user ``name`` and its first token, without an admin: on a server
        started with ``--open-registration`` (else :class:`InvalidRequestError`), limited
        per IP (:class:`RateLimitedError`). The token is shown this once."""
        reply = self._call(self._stub.RegisterUser,
                           apb.RegisterUserRequest(name=name, label=label))
        return NewToken(reply.token, token_info_from_pb(reply.info))

    def list_tokens(self, user: str | None = None) -> list[TokenInfo]:
        reply = self._call(self._stub.ListTokens, apb.ListTokensRequest(user=user or ""))
        return [token_info_from_pb(t) for t in reply.tokens]

    def revoke_token(self, token_id: str, user: str | None = None) -> None:
        self._call(self._stub.RevokeToken, apb.RevokeTokenRequest(id=token_id, user=user or ""))

    # -- bots -----------------------------------------------------------------------------

    def submit(self, path: str | Path, bot: str | None = None, ladder: str | None = None
               ) -> Submitted:
        """Upload ``path`` (a ``.py`` file, a ``.zip`` with ``bot.py`` or ``bot.toml`` at its
        root, or a bot folder, zipped here: :func:`zip_bot_folder`) as the
        next version of your bot ``bot`` (default: named after the file, see
        :func:`bot_name_for`). With ``ladder`` the bot also joins that ladder. The version is
        pending until its smoke game in the sandbox passes."""
        path = Path(path)
        if path.is_dir():
            name = bot_name_for(path / "bot")  # named after the folder
            try:
                data = zip_bot_folder(path)
            except ManifestError as exc:
                raise InvalidRequestError("INVALID_ARGUMENT", str(exc)) from None
            return self.submit_bytes(f"{name}.zip", data, bot or name, ladder)
        if path.suffix.lower() not in (".py", ".zip"):
            raise InvalidRequestError(
                "INVALID_ARGUMENT",
                f"{str(path)!r} is neither a .py file, a .zip nor a bot folder: submit one bot "
                "file, a zip with bot.py (or bot.toml) at its root, or the folder")
        try:
            data = path.read_bytes()
        except OSError as exc:
            raise InvalidRequestError("INVALID_ARGUMENT",
                                      f"cannot read {str(path)!r}: {exc.strerror}") from None
        return self.submit_bytes(path.name, data, bot or bot_name_for(path), ladder)

    def submit_bytes(self, filename: str, data: bytes, bot: str, ladder: str | None = None
                     ) -> Submitted:
        """:meth:`submit` for bytes in memory; ``filename`` (``*.py``/``*.zip``) says which
        kind they are."""
        request = apb.SubmitBotRequest(bot=bot, filename=filename, data=data,
                                       ladder=ladder or "")
        try:
            reply = self._call(self._stub.SubmitBot, request)
        except InvalidRequestError as exc:
            if exc.status == "RESOURCE_EXHAUSTED":  # gRPC's message size limit
                raise InvalidRequestError(
                    "INVALID_ARGUMENT", f"{filename} is {len(data):,} bytes, more than the "
                    "server accepts; keep a submission under "
                    f"{MAX_SUBMISSION_BYTES // 1024} KiB (zip it, drop data files)") from None
            raise
        return Submitted.from_pb(reply)

    def list_bots(self, owner: str | None = None) -> list[BotInfo]:
        reply = self._call(self._stub.ListBots, apb.ListBotsRequest(owner=owner or ""))
        return [bot_from_pb(b) for b in reply.bots]

    def list_versions(self, bot: str) -> list[BotVersion]:
        """The versions of ``owner/name``, oldest first."""
        reply = self._call(self._stub.ListVersions, apb.ListVersionsRequest(bot=bot))
        return [version_from_pb(v) for v in reply.versions]

    def build_log(self, version: str) -> bytes:
        """What the build of your bot's ``version`` (``owner/name@N``) printed."""
        return self._call(self._stub.GetBuildLog, apb.GetBuildLogRequest(version=version)).log

    # -- ladders --------------------------------------------------------------------------

    def create_ladder(self, name: str, *, ruleset: Ruleset | None = None,
                      games_per_pairing: int | None = None, games_per_match: int | None = None,
                      decision_seconds: float | None = None,
                      batch: int | None = None) -> Ladder:
        """Create a ladder (admins only); unset settings take the server's defaults (200
        games per pairing in matches of 20, 1 s per decision, the standard rules, the
        workers' batch size)."""
        request = apb.CreateLadderRequest(
            name=name, games_per_pairing=_non_negative(games_per_pairing, "games_per_pairing"),
            games_per_match=_non_negative(games_per_match, "games_per_match"),
            decision_seconds=decision_seconds or 0.0, batch=_non_negative(batch, "batch"))
        if ruleset is not None:
            ruleset_to_pb(ruleset, request.ruleset)
        return ladder_from_pb(self._call(self._stub.CreateLadder, request))

    def list_ladders(self) -> list[Ladder]:
        reply = self._call(self._stub.ListLadders, apb.ListLaddersRequest())
        return [ladder_from_pb(lad) for lad in reply.ladders]

    def ladder(self, name: str) -> Ladder:
        for found in self.list_ladders():
            if found.name == name:
                return found
        raise NotFoundError("NOT_FOUND", f"no ladder {name!r} at {self.address}; "
                            "`tacocat ladder list` shows the ladders there are")

    def join(self, ladder: str, bot: str) -> Entry:
        """Enter ``bot`` (your bot's name, or ``owner/name``) in ``ladder``."""
        return entry_from_pb(self._call(self._stub.JoinLadder,
                                        apb.JoinLadderRequest(ladder=ladder, bot=bot)))

    def leaderboard(self, ladder: str) -> Leaderboard:
        return leaderboard_from_pb(self._call(self._stub.GetLeaderboard,
                                              apb.GetLeaderboardRequest(ladder=ladder)))

    def ladder_status(self, ladder: str) -> LadderStatus:
        return status_from_pb(self._call(self._stub.GetLadderStatus,
                                               apb.GetLadderStatusRequest(ladder=ladder)))

    def watch(self, ladder: str, *, reconnect: Reconnecting | None = None,
              ) -> Generator[LeaderboardUpdate, None, None]:
        """The leaderboard and progress now, then after every change, until the iterator is
        closed (``break`` out of the loop) or the server ends the stream (which raises
        :class:`ServerUnavailableError`). With ``reconnect``, a lost server is waited for
        instead, with backoff, telling ``reconnect`` (``tacocat.sdk._follow``); the first
        update after that is the whole leaderboard again."""
        yield from reconnecting(lambda: self._watch_once(ladder), reconnect)

    def _watch_once(self, ladder: str) -> Generator[LeaderboardUpdate, None, None]:
        call = self._stub.WatchLeaderboard(apb.WatchLeaderboardRequest(ladder=ladder),
                                           metadata=self._metadata())
        board = None
        try:
            for message in call:
                update = LeaderboardUpdate.from_pb(message, board)
                board = update.leaderboard
                yield update
        except grpc.RpcError as exc:
            raise self._error(exc) from None
        finally:
            call.cancel()
        raise ServerUnavailableError("UNAVAILABLE",
                                     f"the server at {self.address} ended the watch of "
                                     f"{ladder!r}; reconnect")

    # -- matches --------------------------------------------------------------------------

    def matches(self, ladder: str, *, status: MatchStatus | None = None, start: int = 0,
                count: int = 100, newest_first: bool = False) -> list[Match]:
        """The ladder's matches in creation order (``status``: only those; ``newest_first``:
        from the newest back). One page: the server returns at most
        ``match_list(...).max_count`` (1000); :meth:`match_list` says how many there are."""
        return self.match_list(ladder, status=status, start=start, count=count,
                               newest_first=newest_first).matches

    def match_list(self, ladder: str, *, status: MatchStatus | None = None, start: int = 0,
                   count: int = 100, newest_first: bool = False) -> MatchList:
        """:meth:`matches` with the total the filter selects and the server's page cap."""
        wanted = {MatchStatus.SCHEDULED: apb.MATCH_STATUS_SCHEDULED,
                  MatchStatus.RECORDED: apb.MATCH_STATUS_RECORDED,
                  MatchStatus.CANCELLED: apb.MATCH_STATUS_CANCELLED,
                  MatchStatus.ABORTED: apb.MATCH_STATUS_ABORTED}
        request = apb.ListMatchesRequest(
            ladder=ladder, start=start, count=count, newest_first=newest_first,
            status=wanted[status] if status is not None else apb.MATCH_STATUS_UNSPECIFIED)
        reply = self._call(self._stub.ListMatches, request)
        found = [match_from_pb(m) for m in reply.matches]
        # A server older than the total field says 0: the page is all it knows of.
        return MatchList(found, start, max(reply.total, start + len(found)),
                         reply.max_count or len(found))

    def match(self, match_id: str) -> Match:
        return match_from_pb(self._call(self._stub.GetMatch, apb.GetMatchRequest(id=match_id)))

    def replays_blob(self, match_id: str) -> bytes:
        """The match's replays as stored: a gzip-compressed JSON Lines file (``.jsonl.gz``),
        one RULES.md §8 record per game in game order; empty if there are none (yet)."""
        chunks: list[bytes] = []
        call = self._stub.GetMatchReplays(apb.GetMatchReplaysRequest(id=match_id),
                                          metadata=self._metadata(), timeout=self.timeout)
        try:
            chunks.extend(chunk.data for chunk in call)
        except grpc.RpcError as exc:
            raise self._error(exc) from None
        return b"".join(chunks)

    def replays(self, match_id: str) -> list[GameRecord]:
        """The match's games as the engine's replay records, in game order (empty before the
        match is recorded). ``record.replay()`` re-plays one through the rules."""
        return parse_replays(self.replays_blob(match_id), match_id)

    def logs(self, match_id: str, *, link_seconds: float = 0.0) -> MatchLogs:
        """What your bots wrote to stderr during the match (a side whose bot you own each;
        :class:`PermissionDeniedError` if you own neither). ``link_seconds > 0`` also asks for
        a signed link to the match page showing them, lasting that long (at most a week)."""
        return MatchLogs.from_pb(self._call(self._stub.GetMatchLogs, apb.GetMatchLogsRequest(
            id=match_id, link_seconds=link_seconds)))

    # -- internals ------------------------------------------------------------------------

    def _metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.token}"),) if self.token else ()

    def _call(self, method: Callable[..., _T], request: object) -> _T:
        try:
            return method(request, metadata=self._metadata(), timeout=self.timeout)
        except grpc.RpcError as exc:
            raise self._error(exc) from None

    def _error(self, exc: grpc.RpcError) -> ArenaApiError:
        code: grpc.StatusCode = exc.code() if isinstance(exc, grpc.Call) else \
            grpc.StatusCode.UNKNOWN
        details = (exc.details() if isinstance(exc, grpc.Call) else None) or str(exc)
        kind = _ERRORS.get(code, ArenaApiError)
        message = details
        if code is grpc.StatusCode.UNAVAILABLE and ("resolving" in details.lower()
                                                    or "dns resolution" in details.lower()):
            host = self.address.rpartition(":")[0] or self.address
            message = (f"cannot find the host {host!r} of the arena server {self.address}: "
                       "check the name (" + ("--server, " if self.cli else "") +
                       "$TACOCAT_ADDRESS) and this machine's network")
        elif code is grpc.StatusCode.UNAVAILABLE and "failed to connect" in details.lower():
            why = " (connection refused)" if "refused" in details.lower() else \
                f" ({details})"
            message = (f"cannot reach the arena server at {self.address}{why}: is `tacocat "
                       f"serve` running there? If it is, {connect_hint(self.secure, self.cli)}")
        elif code is grpc.StatusCode.DEADLINE_EXCEEDED:
            message = f"the arena server at {self.address} did not answer within " \
                      f"{self.timeout:g} s"
        elif code is grpc.StatusCode.UNIMPLEMENTED:
            message = (f"the server at {self.address} does not serve the arena API (a "
                       f"referee-only `tacocat serve --no-arena`?): {details}")
        elif code is grpc.StatusCode.UNAUTHENTICATED and self.token_source is not None:
            message = f"{details} (the token came from {self.token_source})"
        elif code is grpc.StatusCode.RESOURCE_EXHAUSTED:
            if "larger than max" in details:  # gRPC's own size limit, not a rate limit
                return InvalidRequestError(code.name, f"the request is too large for the "
                                           f"server at {self.address}: {details}")
            return RateLimitedError(code.name, message, _retry_after(exc))
        return kind(code.name, message)


def _retry_after(exc: grpc.RpcError) -> float | None:
    """The ``retry-after`` seconds in a refusal's trailing metadata, if any."""
    trailers: Any = exc.trailing_metadata() if isinstance(exc, grpc.Call) else None
    for item in trailers or ():
        if item[0] == "retry-after":
            try:
                return float(item[1])
            except (TypeError, ValueError):
                return None
    return None


def parse_replays(blob: bytes, what: str = "the replays") -> list[GameRecord]:
    """The game records in a ``.jsonl.gz`` replay blob."""
    if not blob:
        return []
    try:
        text = gzip.decompress(blob).decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise SdkError(f"{what}: the replay data is not gzip-compressed JSON Lines: {exc}") \
            from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(GameRecord.loads(line))
        except RecordError as exc:
            raise SdkError(f"{what}: replay line {number}: {exc}") from None
    return records


def _non_negative(value: int | None, name: str) -> int:
    if value is None:
        return 0
    if value < 0:
        raise InvalidRequestError("INVALID_ARGUMENT", f"{name} must be positive, got {value}")
    return value
