"""The protocol's pieces: generated code, frames, the codec and the referee's feed."""

from __future__ import annotations

import importlib.util
import io
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tacocat.engine import (
    STANDARD,
    Bot,
    BotDriver,
    Fault,
    Observation,
    Outcome,
    Reason,
    Ruleset,
    Table,
)
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.sdk import (
    MAX_ACTION_CARDS,
    BotSession,
    Failure,
    FrameBuffer,
    ProtocolError,
    RefereeError,
    SeatFeed,
    frame,
    read_frame,
)
from tacocat.sdk._codec import outcome_from_pb, outcome_to_pb, ruleset_from_pb, ruleset_to_pb
from tacocat.sdk.proto.v1 import game_pb2 as pb

ROOT = Path(__file__).resolve().parents[2]


# ------------------------------------------------------------------ generated code


def test_committed_generated_modules_are_fresh() -> None:
    done = subprocess.run([sys.executable, "scripts/gen_proto.py", "--check"], check=False,
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"stale generated code:\n{done.stderr}"


def test_generator_handles_a_second_file_importing_the_first(tmp_path: Path) -> None:
    spec = importlib.util.spec_from_file_location("gen_proto", ROOT / "scripts" / "gen_proto.py")
    assert spec is not None and spec.loader is not None
    gen_proto = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_proto)
    protos = tmp_path / "proto"
    shutil.copytree(ROOT / "proto", protos)
    (protos / "tacocat" / "v1" / "extra_test.proto").write_text(
        'syntax = "proto3";\npackage tacocat.v1;\nimport "tacocat/v1/game.proto";\n'
        "message Wrapped { Ruleset ruleset = 1; }\n"
        "service Extra { rpc Get(Wrapped) returns (Wrapped); }\n")
    out = tmp_path / "out"
    gen_proto.generate(out, protos)
    module = out / "v1" / "extra_test_pb2.py"
    text = module.read_text()
    assert "from tacocat.sdk.proto.v1 import game_pb2 as" in text
    assert "'tacocat.sdk.proto.v1.extra_test_pb2'" in text
    grpc_text = (out / "v1" / "extra_test_pb2_grpc.py").read_text()
    assert "from tacocat.sdk.proto.v1 import extra_test_pb2" in grpc_text
    assert "'/tacocat.v1.Extra/Get'" in grpc_text  # service names keep their proto names
    stub = (out / "v1" / "extra_test_pb2.pyi").read_text()
    assert "from tacocat.sdk.proto.v1 import game_pb2 as" in stub
    # The rewritten module imports, next to the real game_pb2, and links to its messages.
    spec = importlib.util.spec_from_file_location("tacocat.sdk.proto.v1.extra_test_pb2", module)
    assert spec is not None and spec.loader is not None
    extra = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(extra)  # registers extra_test.proto, which needs game.proto
    wrapped = extra.Wrapped()
    wrapped.ruleset.name = "x"
    assert isinstance(wrapped.ruleset, pb.Ruleset)


# ------------------------------------------------------------------ frames


def test_frames_split_anywhere_come_back_whole() -> None:
    messages = [b"", b"a", b"hello" * 100, bytes(range(256))]
    stream = b"".join(frame(m) for m in messages)
    for step in (1, 3, 7, len(stream)):
        buffer = FrameBuffer(limit=10_000)
        got = []
        for i in range(0, len(stream), step):
            buffer.feed(stream[i:i + step])
            while (data := buffer.next()) is not None:
                got.append(data)
        assert got == messages
        assert not buffer.partial


def test_oversized_and_truncated_frames() -> None:
    buffer = FrameBuffer(limit=100)
    buffer.feed(frame(b"x" * 101)[:4])
    with pytest.raises(ProtocolError, match="exceeds the 100-byte limit"):
        buffer.next()
    assert read_frame(io.BytesIO(b""), 100) is None
    with pytest.raises(ProtocolError, match="inside a frame header"):
        read_frame(io.BytesIO(b"\x00\x00"), 100)
    with pytest.raises(ProtocolError, match="inside a frame"):
        read_frame(io.BytesIO(frame(b"abcdef")[:-2]), 100)
    with pytest.raises(ProtocolError, match="exceeds"):
        read_frame(io.BytesIO(frame(b"x" * 200)), 100)


# ------------------------------------------------------------------ the codec, end to end


class Recorder(Bot):
    """Delegates to another bot and keeps every observation it was shown."""

    def __init__(self, inner: Bot) -> None:
        self.inner = inner
        self.seen: list[Observation] = []
        self.rounds_ended = 0
        self.outcomes: list[Outcome] = []

    def replace(self, obs):  # type: ignore[no-untyped-def]
        self.seen.append(obs)
        return self.inner.replace(obs)

    def duel(self, obs):  # type: ignore[no-untyped-def]
        self.seen.append(obs)
        return self.inner.duel(obs)

    def attack(self, obs):  # type: ignore[no-untyped-def]
        self.seen.append(obs)
        return self.inner.attack(obs)

    def defend(self, obs):  # type: ignore[no-untyped-def]
        self.seen.append(obs)
        return self.inner.defend(obs)

    def on_round_end(self, round):  # type: ignore[no-untyped-def]
        assert round.deck is None
        self.rounds_ended += 1

    def on_game_end(self, outcome, seat):  # type: ignore[no-untyped-def]
        self.outcomes.append(outcome)


def play_through_codec(seed: str, rules: Ruleset = STANDARD, games: int = 1) -> None:
    """Seat 0 plays over bytes (SeatFeed -> BotSession); it must see exactly what the engine
    gives a local bot, hooks included."""
    for game in range(games):
        remote = Recorder(RandomBot(seed))
        session = BotSession(remote)
        feed = SeatFeed(1.5)
        local = BotDriver(GreedyBot())
        table = Table(rules, f"{seed}/{game}", ("remote", "local"))
        session.handle(pb.ServerMessage.FromString(feed.game_start(game, games, 0, rules,
                                                                   "local")))
        local.start(1, rules, "remote")
        expected: list[Observation] = []
        while not table.is_over:
            for obs in table.requests():
                if obs.seat == 0:
                    expected.append(obs)
                    reply = session.handle(pb.ServerMessage.FromString(feed.request(obs)))
                    assert reply is not None
                    answer = feed.read(reply.SerializeToString())
                    assert isinstance(answer, tuple)
                else:
                    answer = local.decide(obs)
                assert table.answer(obs.seat, answer) is None
                if table.is_over:
                    break
        outcome = table.state.outcome
        assert outcome is not None
        session.handle(pb.ServerMessage.FromString(
            feed.result(game, outcome, table.public_rounds())))
        assert remote.seen == expected
        assert remote.rounds_ended == len(table.state.rounds)
        assert remote.outcomes == [outcome]
        assert session.results[-1].rounds == table.public_rounds()


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=8))
def test_every_observation_crosses_the_wire_unchanged(seed: str) -> None:
    play_through_codec(seed)


def test_other_rulesets_cross_the_wire() -> None:
    data = STANDARD.to_dict()
    data.update(name="variant", tie_rule="arrow", hand_sizes=[3, 5, 8, 6, 8, 5, 3],
                max_rounds=7, deck={str(r): 3 for r in range(1, 14)})
    variant = Ruleset.from_dict(data)
    msg = pb.Ruleset()
    ruleset_to_pb(variant, msg)
    assert ruleset_from_pb(msg) == variant
    play_through_codec("variant", variant, games=3)


def test_forfeits_and_partial_rounds_reach_the_bot() -> None:
    remote = Recorder(GreedyBot())
    session = BotSession(remote)
    feed = SeatFeed(1.0)
    table = Table(STANDARD, "f", ("a", "b"))
    session.handle(pb.ServerMessage.FromString(feed.game_start(0, 1, 1, STANDARD, "a")))
    table.fault(0, Fault.TIMEOUT, "no answer within 1 s")
    outcome = table.state.outcome
    assert outcome is not None
    session.handle(pb.ServerMessage.FromString(feed.result(0, outcome,
                                                           table.public_rounds())))
    (result,) = session.results
    assert result.outcome == outcome
    assert result.won and not result.forfeited
    assert result.rounds[0].showdown is None and result.rounds[0].winner is None


def test_fatal_errors_raise_and_others_are_kept() -> None:
    session = BotSession(GreedyBot())
    msg = pb.ServerMessage()
    msg.error.code = pb.ERROR_CODE_TIMEOUT
    msg.error.message = "timeout: slow"
    assert session.handle(msg) is None
    assert session.errors == [("TIMEOUT", "slow")]  # the code is not said twice
    msg.error.fatal = True
    msg.error.code = pb.ERROR_CODE_UNAUTHENTICATED
    with pytest.raises(RefereeError) as caught:
        session.handle(msg)
    assert caught.value.code == "UNAUTHENTICATED"
    with pytest.raises(ProtocolError):
        session.handle(pb.ServerMessage())
    request = pb.ServerMessage()
    request.request.request_id = 1
    with pytest.raises(ProtocolError, match="before any game start"):
        session.handle(request)


def test_a_bot_that_raises_is_reported_not_fatal() -> None:
    class Broken(GreedyBot):
        def duel(self, obs):  # type: ignore[no-untyped-def]
            raise ValueError("no duel today")

    session = BotSession(Broken())
    feed = SeatFeed(1.0)
    table = Table(STANDARD, "b", ("a", "b"))
    session.handle(pb.ServerMessage.FromString(feed.game_start(0, 1, 0, STANDARD, "b")))
    table.answer(0, ())
    table.answer(1, ())
    reply = session.handle(pb.ServerMessage.FromString(feed.request(table.requests()[0])))
    assert reply is not None and reply.WhichOneof("kind") == "failure"
    answer = feed.read(reply.SerializeToString())
    assert isinstance(answer, Failure) and answer.fault is Fault.CRASH
    assert "ValueError: no duel today" in answer.detail


# ------------------------------------------------------------------ what the referee reads


def asked_feed() -> tuple[SeatFeed, int]:
    feed = SeatFeed(1.0)
    table = Table(STANDARD, "r", ("a", "b"))
    feed.game_start(0, 1, 0, STANDARD, "b")
    feed.request(table.requests()[0])
    return feed, 1


def action(request_id: int, cards: list[int]) -> bytes:
    msg = pb.ClientMessage()
    msg.action.request_id = request_id
    msg.action.cards.extend(cards)
    return msg.SerializeToString()


def test_feed_sorts_what_comes_back() -> None:
    feed, rid = asked_feed()
    assert feed.read(action(rid, [3, 4])) == (3, 4)
    assert not feed.pending
    assert feed.read(action(rid, [5])) is None  # late duplicate: dropped
    feed, rid = asked_feed()
    late = feed.read(action(rid + 1, [1]))
    assert isinstance(late, Failure) and late.fault is Fault.PROTOCOL
    feed, rid = asked_feed()
    assert feed.read(b"\xff\xff\xff") == Failure(Fault.PROTOCOL, "undecodable message (3 bytes)")
    feed, rid = asked_feed()
    hello = pb.ClientMessage()
    hello.play.games = 3
    failure = feed.read(hello.SerializeToString())
    assert isinstance(failure, Failure) and "unexpected play message" in failure.detail
    feed, rid = asked_feed()
    failure = feed.read(pb.ClientMessage().SerializeToString())
    assert isinstance(failure, Failure) and failure.fault is Fault.PROTOCOL
    feed, rid = asked_feed()
    failure = feed.read(action(rid, [1] * (MAX_ACTION_CARDS + 1)))
    assert isinstance(failure, Failure) and failure.fault is Fault.ILLEGAL_ACTION
    feed, rid = asked_feed()
    crash = pb.ClientMessage()
    crash.failure.request_id = rid
    crash.failure.message = "Oops\x00\n  with\tcontrol   characters " + "x" * 1000
    failure = feed.read(crash.SerializeToString())
    assert isinstance(failure, Failure) and failure.fault is Fault.CRASH
    assert failure.detail.startswith("Oops with control characters x")
    assert len(failure.detail) <= 300


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_feed_never_raises_on_bytes(data: bytes) -> None:
    feed, _ = asked_feed()
    answer = feed.read(data)
    assert answer is None or isinstance(answer, tuple | Failure)


def test_outcome_codes_cover_every_reason_and_fault() -> None:
    for reason in Reason:
        for fault in (None, *Fault):
            outcome = Outcome(1 if reason is Reason.GOAL else None, reason, "d", fault,
                              0 if fault else None)
            msg = pb.Outcome()
            outcome_to_pb(outcome, msg)
            assert outcome_from_pb(msg) == outcome
