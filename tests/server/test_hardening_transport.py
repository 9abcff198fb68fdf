"""Transport hardening of the gRPC port: explicit limits (message and metadata sizes, streams,
connection age, keepalive), deadlines that cancel server work, and the live-game limits
(per-player rate and concurrency) with their RESOURCE_EXHAUSTED refusals. Real gRPC over
loopback; the referee runs on a thread of the test process."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable, Iterator

import grpc
import pytest
import redis as redis_py
from grpc_health.v1 import health_pb2, health_pb2_grpc
from redis.backoff import NoBackoff
from redis.retry import Retry

from tacocat.arena import Arena, RateLimit
from tacocat.arena.ratelimit import LIVE
from tacocat.cli import main
from tacocat.engine import Fault, Reason
from tacocat.engine.bots import GreedyBot
from tacocat.protocol import MAX_CLIENT_MESSAGE, PLAY_METHOD, PROTOCOL_VERSION
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.sdk import (
    ArenaClient,
    ConnectionLostError,
    RefereeError,
    ServerUnavailableError,
    connect,
)
from tacocat.server import ArenaLimiter, ArenaService, MemoryLimiter, RefereeConfig, RefereeServer
from tests.arena.helpers import bot_source
from tests.live_referee import PLAYERS, ThreadReferee

from .arena_server import serve_in_thread


def wait_until(check: Callable[[], bool], timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.02)
    return check()


def healthy(address: str) -> bool:
    with grpc.insecure_channel(address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                          timeout=5)
    return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)


def hello(games: int = 1, opponent: str = "house:random", name: str = "") -> bytes:
    msg = pb.ClientMessage()
    msg.play.games, msg.play.opponent, msg.play.bot_name = games, opponent, name
    msg.play.protocol = PROTOCOL_VERSION
    return msg.SerializeToString()


Metadata = tuple[tuple[str, str], ...]


def raw_play(address: str, messages: Iterator[bytes] | list[bytes], *,
             token: str | None = None, timeout: float = 10.0,
             metadata: Metadata = ()) -> tuple[list[bytes], grpc.RpcError | None]:
    """A Play stream with raw bytes: what came back, and the error that ended it."""
    if token:
        metadata = (*metadata, ("authorization", f"Bearer {token}"))
    replies: list[bytes] = []
    with grpc.insecure_channel(address) as channel:
        call = channel.stream_stream(PLAY_METHOD)(iter(messages), metadata=metadata,
                                                  timeout=timeout)
        try:
            replies.extend(call)
        except grpc.RpcError as exc:
            return replies, exc
    return replies, None


def fatal_error(replies: list[bytes]) -> pb.Error:
    errors = [m.error for m in map(pb.ServerMessage.FromString, replies)
              if m.WhichOneof("kind") == "error" and m.error.fatal]
    assert errors, replies
    return errors[-1]


# ------------------------------------------------------------------ explicit limits


def test_every_transport_limit_is_set_explicitly() -> None:
    config = RefereeConfig()
    options = dict(config.grpc_options())
    assert options == {
        "grpc.max_receive_message_length": MAX_CLIENT_MESSAGE,
        "grpc.max_send_message_length": 1024 * 1024,
        "grpc.max_concurrent_streams": 256,
        "grpc.keepalive_time_ms": 30_000,
        "grpc.keepalive_timeout_ms": 10_000,
        "grpc.keepalive_permit_without_calls": 0,
        "grpc.http2.min_ping_interval_without_data_ms": 10_000,
        "grpc.http2.max_ping_strikes": 2,
        "grpc.max_connection_idle_ms": 300_000,
        "grpc.max_connection_age_ms": 4 * 3600 * 1000,
        "grpc.max_connection_age_grace_ms": 3600 * 1000,
        "grpc.max_metadata_size": 8192,
        "grpc.absolute_max_metadata_size": 8192,
        "grpc.so_reuseport": 0,
    }
    # With the arena on the same port, the receive limit rises to four uploads at the limit
    # (so an oversized upload gets the arena's readable refusal) plus room for the request
    # around it; nothing else changes.
    arena = Arena(redis_py.Redis())  # never connects: only its limits are read
    server = RefereeServer(config, services=[ArenaService(arena)])
    served = dict(server._grpc_options())
    assert served["grpc.max_receive_message_length"] == 4 * 1024 * 1024 + 64 * 1024
    assert served["grpc.max_send_message_length"] == 64 * 1024 * 1024
    assert {k: v for k, v in served.items() if "message_length" not in k} == {
        k: v for k, v in options.items() if "message_length" not in k}
    assert config.max_concurrent_rpcs == 4096
    assert (config.live_game_limit, config.max_matches_per_player) == (RateLimit(2000, 20.0), 64)


@pytest.fixture(scope="module")
def referee() -> Iterator[ThreadReferee]:
    server = ThreadReferee(time_limit=0.5, queue_timeout=5.0)
    yield server
    server.stop()


def test_oversized_metadata_and_messages_are_refused(referee: ThreadReferee) -> None:
    # Metadata over 8 KiB: refused by gRPC before any handler runs, saying which limit.
    _, error = raw_play(referee.address, [hello()], metadata=(("x-pad", "a" * 9000),))
    assert error is not None and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "metadata size exceeds hard limit" in (error.details() or "")
    with pytest.raises(ConnectionLostError) as caught:
        connect(GreedyBot(), referee.address, "t" * 10_000)
    assert caught.value.status == "RESOURCE_EXHAUSTED"
    assert "metadata size exceeds hard limit" in str(caught.value)

    # A message over the referee's 64 KiB: gRPC's own limit on a referee-only port.
    _, error = raw_play(referee.address, [hello(name="x" * (MAX_CLIENT_MESSAGE + 10))])
    assert error is not None and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "larger than max" in (error.details() or "")
    assert healthy(referee.address)
    assert len(connect(GreedyBot(), referee.address, opponent="house:random")) == 1


def test_the_referee_bounds_its_messages_where_grpc_allows_more(redis: redis_py.Redis) -> None:
    # Next to the arena gRPC accepts uploads of 1 MiB; the referee still takes 64 KiB.
    with serve_in_thread(Arena(redis)) as server:
        replies, error = raw_play(server.address, [hello(name="x" * (200 * 1024))])
        assert error is not None and error.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert f"at most {MAX_CLIENT_MESSAGE} bytes per message" in (error.details() or "")
        assert fatal_error(replies).code == pb.ERROR_CODE_INVALID_REQUEST
        assert healthy(server.address)


def test_concurrent_calls_are_bounded() -> None:
    server = ThreadReferee(max_concurrent_rpcs=2, queue_timeout=10.0)
    release = threading.Event()

    def wait_for_opponent(games: int) -> Iterator[bytes]:
        yield hello(games=games, opponent="")
        release.wait(10)

    # Two live clients wait for opponents (different game counts: never paired).
    threads = [threading.Thread(target=raw_play, args=(server.address, wait_for_opponent(n)),
                                kwargs={"token": PLAYERS[who]})
               for who, n in (("alice", 3), ("bob", 5))]
    try:
        for thread in threads:
            thread.start()
        assert wait_until(lambda: len(server.server.service._waiting) == 2)
        _, error = raw_play(server.address, [hello()], timeout=5)
        assert error is not None and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        release.set()
        for thread in threads:
            thread.join(10)
        server.stop()


def test_a_connection_past_its_age_and_grace_is_cut_and_forfeits() -> None:
    class Slow(GreedyBot):
        def attack(self, obs):  # type: ignore[no-untyped-def]
            time.sleep(0.05)
            return super().attack(obs)

    server = ThreadReferee(time_limit=5.0, max_connection_age=0.3,
                           max_connection_age_grace=0.3)
    try:
        started = time.monotonic()
        with pytest.raises(Exception):  # noqa: B017 - gRPC reports it as it likes
            connect(Slow(), server.address, games=40, opponent="house:greedy", name="aged")
        assert time.monotonic() - started < 5
        assert wait_until(lambda: server.server.service.active_matches == 0)
        last = server.records(["anonymous/aged"])[-1]
        assert last.result.reason is Reason.FORFEIT and last.result.fault is Fault.DISCONNECT
    finally:
        server.stop()
    # With a grace longer than the match, the same match ends normally.
    server = ThreadReferee(time_limit=5.0, max_connection_age=0.3,
                           max_connection_age_grace=30.0)
    try:
        assert len(connect(Slow(), server.address, games=2, opponent="house:greedy")) == 2
    finally:
        server.stop()


# ------------------------------------------------------------------ deadlines


def test_a_client_deadline_ends_its_match_on_the_server() -> None:
    server = ThreadReferee(time_limit=5.0)
    release = threading.Event()

    def never_answers() -> Iterator[bytes]:
        yield hello(games=100, opponent="house:greedy", name="impatient")
        release.wait(10)  # keeps the stream open without answering

    try:
        started = time.monotonic()
        _, error = raw_play(server.address, never_answers(), timeout=0.5)
        assert error is not None and error.code() is grpc.StatusCode.DEADLINE_EXCEEDED
        # The referee learns at once (not after its 5 s decision limit) and stops the match.
        assert wait_until(lambda: server.server.service.active_matches == 0, timeout=3.0)
        assert time.monotonic() - started < 4.0
        (record,) = server.records(["anonymous/impatient"])
        assert record.result.fault is Fault.DISCONNECT
        assert wait_until(lambda: server.server.service._playing == {})  # its slot is free

        # The SDK's connect(timeout=...) is that deadline, for the whole match.
        class Slow(GreedyBot):
            def replace(self, obs):  # type: ignore[no-untyped-def]
                time.sleep(0.3)
                return super().replace(obs)

        with pytest.raises(ConnectionLostError) as caught:
            connect(Slow(), server.address, games=100, opponent="house:greedy", timeout=0.5)
        assert caught.value.status == "DEADLINE_EXCEEDED"
        assert wait_until(lambda: server.server.service.active_matches == 0, timeout=3.0)
    finally:
        release.set()
        server.stop()


def test_a_client_deadline_drops_queued_arena_work(redis: redis_py.Redis) -> None:
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    admin = arena.users.authenticate(token)
    arena.users.create(admin, "alice")
    alice = arena.users.create_token(admin, "alice")
    entered, release = threading.Event(), threading.Event()
    calls: list[str] = []
    real_submit = arena.bots.submit

    def slow_submit(*args: object) -> object:
        calls.append(str(args[1]))
        entered.set()
        release.wait(10)
        return real_submit(*args)  # type: ignore[arg-type]

    arena.bots.submit = slow_submit  # type: ignore[method-assign]
    with serve_in_thread(arena, threads=1) as server:
        first: list[object] = []
        slow = threading.Thread(target=lambda: first.append(
            ArenaClient(server.address, alice, timeout=20).submit_bytes(
                "a.py", bot_source("a"), "first")))
        slow.start()
        try:
            assert entered.wait(10)
            with ArenaClient(server.address, alice, timeout=0.5) as hasty, \
                    pytest.raises(ServerUnavailableError, match=r"did not answer within 0\.5 s"):
                hasty.submit_bytes("b.py", bot_source("b"), "second")
        finally:
            release.set()
            slow.join(10)
        assert len(first) == 1
        time.sleep(0.2)  # were it still queued, the worker thread would run it now
        assert calls == ["first"]  # the call whose client gave up never ran
        assert [b.name for b in arena.bots.all("alice")] == ["first"]


# ------------------------------------------------------------------ live-game limits


def test_live_games_are_rate_limited_per_player() -> None:
    # 4 games at once, then one a second: a match takes one per game it asks for.
    server = ThreadReferee(live_game_burst=4, live_games_per_second=1.0, max_games=4)
    try:
        assert len(connect(GreedyBot(), server.address, games=4, opponent="house:random")) == 4
        with pytest.raises(RefereeError) as caught:
            connect(GreedyBot(), server.address, games=4, opponent="house:random")
        assert caught.value.code == "RESOURCE_EXHAUSTED"
        message = caught.value.message
        assert ("too many live games for anonymous clients from 127.0.0.1: the limit is 4 "
                "games at once, then 1 per second (this match asks for 4); retry in ") in message
        assert re.search(r"retry in [1-4] s$", message), message
        # The gRPC status and trailers say the same, for clients that read only those.
        replies, error = raw_play(server.address, [hello(games=4)])
        assert error is not None and error.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert 1 <= int(dict(error.trailing_metadata() or ())["retry-after"]) <= 4
        assert fatal_error(replies).code == pb.ERROR_CODE_RESOURCE_EXHAUSTED
        # A token holder has a bucket of its own; an exhausted one refills.
        assert len(connect(GreedyBot(), server.address, PLAYERS["alice"], games=4,
                           opponent="house:random")) == 4
        time.sleep(1.1)
        assert len(connect(GreedyBot(), server.address, games=1, opponent="house:random")) == 1
        assert healthy(server.address)
    finally:
        server.stop()


def test_matches_per_player_are_bounded() -> None:
    server = ThreadReferee(max_matches_per_player=1, queue_timeout=10.0)
    outcome: list[object] = []
    waiting = threading.Thread(target=lambda: outcome.append(connect(
        GreedyBot(), server.address, PLAYERS["alice"], games=2, opponent=None)))
    try:
        waiting.start()
        assert wait_until(lambda: len(server.server.service._waiting) == 1)
        with pytest.raises(RefereeError) as caught:
            connect(GreedyBot(), server.address, PLAYERS["alice"], opponent="house:random")
        assert caught.value.code == "RESOURCE_EXHAUSTED"
        assert ("player 'alice' already has 1 matches running or waiting, the most one player "
                "may have at once") in caught.value.message
        # Others are not affected: bob pairs with the waiting alice.
        assert len(connect(GreedyBot(), server.address, PLAYERS["bob"], games=2,
                           opponent=None)) == 2
        waiting.join(10)
        assert len(outcome[0]) == 2  # type: ignore[arg-type]
        # Her match over (and its stream closed), alice may play again.
        assert wait_until(lambda: "alice" not in server.server.service._playing)
        assert len(connect(GreedyBot(), server.address, PLAYERS["alice"],
                           opponent="house:random")) == 1
    finally:
        server.stop()


def test_arena_limits_are_shared_through_redis_and_survive_its_loss(
        redis: redis_py.Redis) -> None:
    limit = RateLimit(3, 0.5)
    one, two = ArenaLimiter(Arena(redis)), ArenaLimiter(Arena(redis))

    async def takes() -> list[float]:
        return [await one.take("alice", 2, limit), await two.take("alice", 1, limit),
                await two.take("alice", 1, limit), await one.take("bob", 3, limit),
                await one.take("alice", 4, limit)]

    first, second, third, bob, too_many = asyncio.run(takes())
    assert (first, second, bob) == (0.0, 0.0, 0.0)
    assert 1.5 < third <= 2.0  # a second process sees the first one's takes
    assert too_many == float("inf")  # more than the burst never fits
    key = Arena(redis).keys.rate_limit(LIVE, "alice")
    assert 0 < redis.pttl(key) <= 3 / 0.5 * 1000 + 1000  # gone once it would be full again

    # Without Redis the limits still hold, in memory.
    lost = ArenaLimiter(Arena(redis_py.Redis(port=1, retry=Retry(NoBackoff(), 0))))
    slow = RateLimit(3, 0.001)

    async def without_redis() -> list[float]:
        return [await lost.take("carol", 3, slow), await lost.take("carol", 1, slow)]

    taken, refused = asyncio.run(without_redis())
    assert taken == 0.0 and refused > 0


def test_the_memory_limiter_stays_bounded() -> None:
    now = [0.0]
    limiter = MemoryLimiter(clock=lambda: now[0], max_subjects=10)
    limit = RateLimit(2, 1.0)
    for n in range(50):
        assert limiter.take_now(f"ip:10.0.0.{n}", 1, limit) == 0.0
        now[0] += 0.1
    assert len(limiter._buckets) <= 10
    assert limiter.take_now("ip:10.0.0.49", 2, limit) > 0  # a busy subject is remembered


def test_serve_checks_its_limit_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["serve", "--no-arena", "--port", "0", "--live-game-burst", "10"]) == 2
    assert "live_game_burst (10) must be at least max_games (1000)" in capsys.readouterr().err
    assert main(["serve", "--no-arena", "--port", "0", "--max-matches-per-player", "0"]) == 2
    assert "max_matches_per_player must be positive" in capsys.readouterr().err
