"""The bot protocol under random and hostile frames, both ways and on both transports.

- live: a client plays properly, then at a random decision sends garbage (undecodable bytes,
  messages of the wrong kind, wrong request ids, absurd actions, oversized or flooding
  messages) and maybe plays on. The referee forfeits that client's game with a reason it
  tells the client, keeps the other side unharmed, and keeps serving (tests/server/
  test_referee.py fuzzes a client's first messages; this goes mid-match).
- stdio, bot side: ``python -m tacocat.sdk.host`` fed random frames exits cleanly with a
  reason (exit 0 or 4), never a traceback; the session logic behind it (and behind
  ``connect``) raises only the protocol's errors, whatever the referee sends.
- stdio, referee side: :class:`HostProcess` reading random bytes from a bot process turns
  them into a forfeit with a reason and plays the next game with a fresh process.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import struct
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import grpc.aio
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tacocat.engine import STANDARD, Fault, Reason, duplicate_pairs
from tacocat.engine.bots import GreedyBot
from tacocat.protocol import MAX_CLIENT_MESSAGE, PLAY_METHOD, PROTOCOL_VERSION, ruleset_to_pb
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.referee import HostProcess, InProcessSeat, ProcessSeat, play_match
from tacocat.sdk import ProtocolError, RefereeError, connect
from tacocat.sdk._session import BotSession
from tests.arena.hostile import messages
from tests.live_referee import ROOT, ThreadReferee

QUIET = logging.getLogger("tacocat.sdk")
_NAMES = itertools.count()


class ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def referee() -> Iterator[ThreadReferee]:
    server = ThreadReferee(time_limit=0.3)
    yield server
    server.stop()


@pytest.fixture
def server_errors() -> Iterator[list[logging.LogRecord]]:
    handler = ErrorLog()
    logger = logging.getLogger("tacocat.server")
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


@pytest.fixture(autouse=True)
def _quiet_sdk() -> Iterator[None]:
    """The bot side logs every referee error it gets; thousands of them say nothing here."""
    level = QUIET.level
    QUIET.setLevel(logging.CRITICAL)
    yield
    QUIET.setLevel(level)


# ------------------------------------------------------------------ live, mid-match

def _action(request_id: int, cards: list[int]) -> bytes:
    msg = pb.ClientMessage()
    msg.action.request_id = request_id
    msg.action.cards.extend(cards)
    return msg.SerializeToString()


@st.composite
def injections(draw: st.DrawFn) -> list[bytes]:
    """What a broken or hostile client sends instead of (or with) its answer."""
    kind = draw(st.sampled_from(["raw", "message", "wrong_id", "cards", "failure", "play",
                                 "flood", "big"]))
    if kind == "raw":
        return [draw(st.binary(min_size=1, max_size=300))]
    if kind == "message":
        return [draw(messages(pb.ClientMessage.DESCRIPTOR, pb.ClientMessage))
                .SerializeToString()]
    if kind == "wrong_id":
        return [_action(draw(st.integers(0, 2**32 - 1)), [1])]
    if kind == "cards":
        return [_action(0, draw(st.lists(st.integers(-(2**31), 2**31 - 1), max_size=80)))]
    if kind == "failure":
        msg = pb.ClientMessage()
        msg.failure.request_id = draw(st.integers(0, 3))
        msg.failure.message = draw(st.text(max_size=300))
        return [msg.SerializeToString()]
    if kind == "play":
        msg = pb.ClientMessage()
        msg.play.games = 3
        return [msg.SerializeToString()]
    if kind == "flood":
        return [_action(0, [1])] * draw(st.integers(60, 80))
    return [b"\x0a" + b"\xff" * (MAX_CLIENT_MESSAGE + 10)]  # over the referee's 64 KiB


async def misbehave(address: str, name: str, at: int, garbage: list[bytes],
                    answer_too: bool) -> tuple[BotSession, str | None]:
    """Play ``house:random`` as ``name``; at decision ``at`` send ``garbage``, followed by
    the real answer if ``answer_too``. Returns the session and how the stream ended."""
    session = BotSession(GreedyBot())
    hello = pb.ClientMessage()
    hello.play.games, hello.play.opponent, hello.play.bot_name = 2, "house:random", name
    hello.play.protocol = PROTOCOL_VERSION
    ended: str | None = None
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(PLAY_METHOD)(timeout=15)
        try:
            await call.write(hello.SerializeToString())
            decisions = 0
            while not session.finished:
                data = await call.read()
                if not isinstance(data, bytes):
                    break
                msg = pb.ServerMessage.FromString(data)  # the referee always sends sense
                reply = session.handle(msg)
                if reply is None:
                    continue
                decisions += 1
                if decisions == at:
                    for item in garbage:
                        await call.write(item)
                    if not answer_too:
                        continue
                await call.write(reply.SerializeToString())
            await call.done_writing()
        except RefereeError as exc:
            ended = exc.code
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as exc:
            ended = getattr(exc, "code", lambda: None)()
            ended = ended.name if ended is not None else type(exc).__name__
    return session, ended


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(at=st.integers(1, 30), garbage=injections(), answer_too=st.booleans())
def test_garbage_mid_match_forfeits_that_game_only(
        referee: ThreadReferee, server_errors: list[logging.LogRecord], at: int,
        garbage: list[bytes], answer_too: bool) -> None:
    name = f"fuzz{next(_NAMES)}"  # the records of this example alone
    session, ended = asyncio.run(misbehave(referee.address, name, at, garbage, answer_too))
    assert not server_errors, [r.getMessage() for r in server_errors]
    assert ended in (None, "TIMEOUT", "UNAVAILABLE", "CANCELLED", "RESOURCE_EXHAUSTED",
                     "INVALID_ARGUMENT"), ended
    # Every error the client was told about has a code and says why.
    for code, message in session.errors:
        assert code in ("PROTOCOL", "ILLEGAL_ACTION", "TIMEOUT", "CRASH"), (code, message)
        assert message.strip(), code
    deadline = time.monotonic() + 5
    while referee.server.service.active_matches and time.monotonic() < deadline:
        time.sleep(0.02)
    records = referee.records([f"anonymous/{name}"])
    assert records, "the referee recorded nothing"
    for record in records:
        seat = record.players.index(f"anonymous/{name}")
        result = record.result
        if result.reason is Reason.FORFEIT:
            assert result.offender == seat, result  # only the misbehaving side loses
            assert result.fault in (Fault.PROTOCOL, Fault.ILLEGAL_ACTION, Fault.CRASH,
                                    Fault.TIMEOUT, Fault.DISCONNECT), result
            assert result.detail.strip(), result
        record.replay()  # a forfeited game is still a valid record


def test_the_referee_is_healthy_after_the_fuzzing(referee: ThreadReferee) -> None:
    with grpc.insecure_channel(referee.address) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(),
                                                          timeout=5)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING
    assert len(connect(GreedyBot(), referee.address, games=2, opponent="house:greedy")) == 2
    deadline = time.monotonic() + 5  # no match is left behind (the last one ends just now)
    service = referee.server.service
    while (service.active_matches or service._playing) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert service.active_matches == 0 and service._playing == {}


# ------------------------------------------------------------------ stdio, bot side

def _game_start(seat: int) -> pb.ServerMessage:
    msg = pb.ServerMessage()
    ruleset_to_pb(STANDARD, msg.game_start.ruleset)
    msg.game_start.seat, msg.game_start.games = seat, 1
    return msg


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(messages(pb.ServerMessage.DESCRIPTOR, pb.ServerMessage), max_size=5),
       st.booleans())
def test_the_bot_session_raises_only_protocol_errors(sent: list[pb.ServerMessage],
                                                     started: bool) -> None:
    session = BotSession(GreedyBot())
    try:
        if started:
            session.handle(_game_start(0))
        for msg in sent:
            reply = session.handle(msg)
            assert reply is None or reply.WhichOneof("kind") in ("action", "failure")
    except (ProtocolError, RefereeError) as exc:
        assert str(exc).strip()


def _frame(data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + data


@st.composite
def frame_streams(draw: st.DrawFn) -> bytes:
    """Bytes for a host's stdin: frames of random messages, raw bytes, lying lengths."""
    parts = []
    if draw(st.booleans()):
        start = pb.ServerFrame()
        start.messages.append(_game_start(draw(st.integers(0, 1))))
        parts.append(_frame(start.SerializeToString()))
    for _ in range(draw(st.integers(0, 4))):
        kind = draw(st.sampled_from(["message", "raw", "huge", "cut"]))
        if kind == "message":
            batch = pb.ServerFrame()
            batch.messages.extend(draw(st.lists(
                messages(pb.ServerMessage.DESCRIPTOR, pb.ServerMessage), max_size=3)))
            parts.append(_frame(batch.SerializeToString()))
        elif kind == "raw":
            parts.append(_frame(draw(st.binary(max_size=100))))
        elif kind == "huge":
            parts.append(struct.pack(">I", draw(st.integers(2**20 + 1, 2**32 - 1))))
        else:
            parts.append(struct.pack(">I", 50) + b"short")
    return b"".join(parts)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(frame_streams())
def test_the_stdio_host_exits_cleanly_on_random_frames(stream: bytes) -> None:
    done = subprocess.run([sys.executable, "-m", "tacocat.sdk.host", "house:random"],
                          input=stream, capture_output=True, timeout=60, cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, check=False)
    err = done.stderr.decode(errors="replace")
    assert done.returncode in (0, 4), (done.returncode, err)
    assert "Traceback" not in err, err
    if done.returncode == 4:
        assert err.strip().splitlines()[-1].startswith("tacocat.sdk.host: "), err
    # Whatever came in, what went out is well-framed: a Hello, then ClientFrames of answers.
    out, replies = done.stdout, []
    while out:
        (size,) = struct.unpack(">I", out[:4])
        assert len(out) >= 4 + size
        replies.append(out[4:4 + size])
        out = out[4 + size:]
    assert replies and pb.ClientMessage.FromString(replies[0]).WhichOneof("kind") == "hello"
    for data in replies[1:]:
        for reply in pb.ClientFrame.FromString(data).messages:
            assert reply.WhichOneof("kind") in ("action", "failure")


# ------------------------------------------------------------------ stdio, referee side

FAKE_BOT = r"""
import os, sys, struct
hello = bytes.fromhex(sys.argv[1]); garbage = bytes.fromhex(sys.argv[2])
os.write(1, struct.pack(">I", len(hello)) + hello)

def has_request(body):
    # A ServerFrame is field 1 (tag 0x0a) repeated: a varint length, then a ServerMessage,
    # whose field 2 (first byte 0x12) is a decision request. No protobuf under -S.
    i = 0
    while i < len(body):
        i += 1
        size = shift = 0
        while True:
            byte = body[i]; i += 1
            size |= (byte & 0x7F) << shift; shift += 7
            if byte < 0x80:
                break
        if body[i:i + 1] == b"\x12":
            return True
        i += size
    return False

header = sys.stdin.buffer.read(4)
while len(header) == 4:
    body = sys.stdin.buffer.read(struct.unpack(">I", header)[0])
    if has_request(body):
        os.write(1, garbage)
        sys.exit(int(sys.argv[3]))
    header = sys.stdin.buffer.read(4)
"""


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(garbage=st.one_of(
    st.binary(max_size=200),
    st.builds(_frame, st.binary(max_size=200)),
    st.builds(_frame, messages(pb.ClientMessage.DESCRIPTOR, pb.ClientMessage)
              .map(lambda m: m.SerializeToString())),
    st.just(struct.pack(">I", 2**31) + b"x"),
), exit_code=st.sampled_from([0, 1, 3]))
def test_random_bot_output_is_a_reasoned_forfeit(garbage: bytes, exit_code: int) -> None:
    request_kind = pb.ServerMessage.DESCRIPTOR.fields_by_name["request"].number
    frame_field = pb.ServerFrame.DESCRIPTOR.fields_by_name["messages"].number
    assert (request_kind, frame_field) == (2, 1)  # FAKE_BOT spots a request by its bytes
    hello = pb.ClientMessage()
    hello.hello.bot_name = "fake"
    hello.hello.protocol = PROTOCOL_VERSION
    host = HostProcess("fake", command=[sys.executable, "-S", "-c", FAKE_BOT,
                                        hello.SerializeToString().hex(), garbage.hex(),
                                        str(exit_code)])
    try:
        games = play_match((ProcessSeat(host, 0.5), InProcessSeat(GreedyBot)),
                           duplicate_pairs(2, "fuzz"), names=("fake", "greedy")).games
    finally:
        host.close(timeout=0.2)
    assert len(games) == 2  # the second game ran with a fresh process
    for game in games:
        result = game.record.result
        fake_seat = game.record.players.index("fake")
        if result.reason is Reason.FORFEIT:
            assert result.offender == fake_seat, result
            assert result.fault in (Fault.PROTOCOL, Fault.CRASH, Fault.TIMEOUT,
                                    Fault.ILLEGAL_ACTION), result
            assert result.detail.strip(), result
        game.record.replay()
    assert not host.running
