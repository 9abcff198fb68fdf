"""The protocol's pieces: generated code, frames, the codec, the referee's feed and the
bot's session, talking to each other in bytes."""

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
from tacocat.protocol import (
    MAX_ACTION_CARDS,
    FrameBuffer,
    frame,
    outcome_from_pb,
    outcome_to_pb,
    read_frame,
    ruleset_from_pb,
    ruleset_to_pb,
)
from tacocat.protocol import ProtocolError as WireError
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.referee import Failure, SeatFeed
from tacocat.sdk import ProtocolError, RefereeError
from tacocat.sdk._session import BotSession

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
    assert "from tacocat.protocol.proto.v1 import game_pb2 as" in text
    assert "'tacocat.protocol.proto.v1.extra_test_pb2'" in text
    grpc_text = (out / "v1" / "extra_test_pb2_grpc.py").read_text()
    assert "from tacocat.protocol.proto.v1 import extra_test_pb2" in grpc_text
    assert "'/tacocat.v1.Extra/Get'" in grpc_text  # service names keep their proto names
    stub = (out / "v1" / "extra_test_pb2.pyi").read_text()
    assert "from tacocat.protocol.proto.v1 import game_pb2 as" in stub
    # The rewritten module imports, next to the real game_pb2, and links to its messages.
    spec = importlib.util.spec_from_file_location("tacocat.protocol.proto.v1.extra_test_pb2",
                                                  module)
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
    with pytest.raises(WireError, match="exceeds the 100-byte limit"):
        buffer.next()
    assert read_frame(io.BytesIO(b""), 100) is None
    with pytest.raises(WireError, match="inside a frame header"):
        read_frame(io.BytesIO(b"\x00\x00"), 100)
    with pytest.raises(WireError, match="inside a frame"):
        read_frame(io.BytesIO(frame(b"abcdef")[:-2]), 100)
    with pytest.raises(WireError, match="exceeds"):
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


def server(fill: object, *args: object) -> pb.ServerMessage:
    """The bytes a feed method writes, as the bot receives them."""
    msg = pb.ServerMessage()
    fill(msg, *args)  # type: ignore[operator]
    return pb.ServerMessage.FromString(msg.SerializeToString())


def client(msg: pb.ClientMessage) -> pb.ClientMessage:
    return pb.ClientMessage.FromString(msg.SerializeToString())


def play_through_codec(seed: str, rules: Ruleset = STANDARD, games: int = 1) -> None:
    """Seat 0 plays ``games`` games at once over bytes (SeatFeed -> one BotSession, the
    games interleaved decision by decision); in every game it must see exactly what the
    engine gives a local bot, hooks included."""
    remotes = [Recorder(RandomBot(seed)) for _ in range(games)]
    made = iter(remotes)
    session = BotSession(lambda: next(made))
    feed = SeatFeed(1.5)
    tables = [Table(rules, f"{seed}/{game}", ("remote", "local")) for game in range(games)]
    locals_ = [BotDriver(GreedyBot()) for _ in range(games)]
    expected: list[list[Observation]] = [[] for _ in range(games)]
    for game in range(games):
        session.handle(server(feed.game_start, game, games, 0, rules, "local"))
        locals_[game].start(1, rules, "remote")
    while not all(t.is_over for t in tables):
        for game, table in enumerate(tables):  # one step of every game in flight
            if table.is_over:
                continue
            for obs in table.requests():
                if obs.seat == 0:
                    expected[game].append(obs)
                    reply = session.handle(server(feed.request, game, obs))
                    assert reply is not None
                    read = feed.read(client(reply))
                    assert isinstance(read, tuple) and not isinstance(read, Failure)
                    answer = read[1]
                    assert not isinstance(answer, Failure)
                else:
                    answer = locals_[game].decide(obs)
                assert table.answer(obs.seat, answer) is None
                if table.is_over:
                    break
    for game, table in enumerate(tables):
        outcome = table.state.outcome
        assert outcome is not None
        session.handle(server(feed.result, game, outcome, table.public_rounds()))
        remote = remotes[game]
        assert remote.seen == expected[game]
        assert remote.rounds_ended == len(table.state.rounds)
        assert remote.outcomes == [outcome]
        assert next(r for r in session.results if r.game == game).rounds == \
            table.public_rounds()


@settings(max_examples=40, deadline=None)
@given(st.text(min_size=1, max_size=8))
def test_every_observation_crosses_the_wire_unchanged(seed: str) -> None:
    play_through_codec(seed)


@settings(max_examples=15, deadline=None)
@given(st.text(min_size=1, max_size=8), st.integers(2, 9))
def test_games_in_flight_at_once_keep_their_own_views(seed: str, games: int) -> None:
    play_through_codec(seed, games=games)


def test_a_request_is_incremental() -> None:
    """Within a game, a request carries only the rounds, tricks, duels and discards the
    seat has not been sent: much less than the whole view each time."""
    table = Table(STANDARD, "inc", ("a", "b"))
    feed = SeatFeed(1.0)
    feed.game_start(pb.ServerMessage(), 0, 1, 0, STANDARD, "b")
    drivers = (BotDriver(GreedyBot()), BotDriver(GreedyBot()))
    sent = whole = 0
    while not table.is_over:
        for obs in table.requests():
            if obs.seat == 0:
                msg = pb.ServerMessage()
                feed.request(msg, 0, obs)
                sent += msg.ByteSize()
                fresh = SeatFeed(1.0)  # knows nothing yet: sends everything
                fresh.game_start(pb.ServerMessage(), 0, 1, 0, STANDARD, "b")
                full = pb.ServerMessage()
                fresh.request(full, 0, obs)
                whole += full.ByteSize()
            assert table.answer(obs.seat, drivers[obs.seat].decide(obs)) is None
            if table.is_over:
                break
    assert sent < whole / 2, (sent, whole)


def test_other_rulesets_cross_the_wire() -> None:
    data = STANDARD.to_dict()
    data.update(name="variant", tie_rule="arrow", hand_sizes=[3, 5, 8, 6, 8, 5, 3],
                max_rounds=7, deck={str(r): 3 for r in range(1, 14)})
    variant = Ruleset.from_dict(data)
    msg = pb.Ruleset()
    ruleset_to_pb(variant, msg)
    assert ruleset_from_pb(msg) == variant
    assert ruleset_from_pb(msg) is ruleset_from_pb(msg)  # validated once per process
    play_through_codec("variant", variant, games=3)


def test_forfeits_and_partial_rounds_reach_the_bot() -> None:
    remote = Recorder(GreedyBot())
    session = BotSession(remote)
    feed = SeatFeed(1.0)
    table = Table(STANDARD, "f", ("a", "b"))
    session.handle(server(feed.game_start, 0, 1, 1, STANDARD, "a"))
    table.fault(0, Fault.TIMEOUT, "no answer within 1 s")
    outcome = table.state.outcome
    assert outcome is not None
    session.handle(server(feed.result, 0, outcome, table.public_rounds()))
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
    request.request.game = 4
    with pytest.raises(ProtocolError, match="for game 4, which has not started"):
        session.handle(request)


def test_a_malformed_view_is_a_protocol_error_not_a_crash() -> None:
    session = BotSession(GreedyBot())
    feed = SeatFeed(1.0)
    session.handle(server(feed.game_start, 0, 1, 0, STANDARD, "b"))
    request = pb.ServerMessage()
    request.request.request_id = 1
    request.request.decision = pb.DECISION_DUEL
    request.request.view.extend([0, 3, 0, 9, 20, 0, 0, 0, -1, 50])
    with pytest.raises(ProtocolError, match="malformed view"):
        session.handle(request)


def test_a_bot_that_raises_is_reported_not_fatal() -> None:
    class Broken(GreedyBot):
        def duel(self, obs):  # type: ignore[no-untyped-def]
            raise ValueError("no duel today")

    session = BotSession(Broken())
    feed = SeatFeed(1.0)
    table = Table(STANDARD, "b", ("a", "b"))
    session.handle(server(feed.game_start, 0, 1, 0, STANDARD, "b"))
    table.answer(0, ())
    table.answer(1, ())
    reply = session.handle(server(feed.request, 0, table.requests()[0]))
    assert reply is not None and reply.WhichOneof("kind") == "failure"
    read = feed.read(client(reply))
    assert isinstance(read, tuple) and not isinstance(read, Failure)
    answer = read[1]
    assert isinstance(answer, Failure) and answer.fault is Fault.CRASH
    assert "ValueError: no duel today" in reply.failure.message  # the bot says it all ...
    assert answer.detail == "the bot raised an exception"  # ... the record a fixed text


@pytest.mark.parametrize(("message", "public"), [
    ("RuntimeError: I read /etc/secret: hunter2 at bot.py:12", "the bot raised an exception"),
    ("Secret_hunter2: boo at bot.py:3", "the bot raised an exception"),
    ("making the bot raised KeyError: 'x' at bot.py:1", "making the bot raised an exception"),
    ("the bot answered 'hunter2', not card ranks: bad", "the bot's answer is not card ranks"),
    ("", "the bot raised an exception"),
    ("x" * 5000, "the bot raised an exception"),
])
def test_a_bots_failure_message_never_reaches_the_record(message: str, public: str) -> None:
    # A bot's host is the bot's to rewrite: whatever text it sends, the record says one of
    # a few fixed things.
    feed, request_id = asked_feed()
    reply = pb.ClientMessage()
    reply.failure.request_id = request_id
    reply.failure.message = message
    read = feed.read(reply)
    assert isinstance(read, tuple)
    assert read[1] == Failure(Fault.CRASH, public)


# ------------------------------------------------------------------ what the referee reads


def asked_feed() -> tuple[SeatFeed, int]:
    feed = SeatFeed(1.0)
    table = Table(STANDARD, "r", ("a", "b"))
    feed.game_start(pb.ServerMessage(), 0, 1, 0, STANDARD, "b")
    return feed, feed.request(pb.ServerMessage(), 0, table.requests()[0])


def action(request_id: int, cards: list[int], think_us: int = 0) -> bytes:
    msg = pb.ClientMessage()
    msg.action.request_id = request_id
    msg.action.cards.extend(cards)
    msg.action.think_us = think_us
    return msg.SerializeToString()


def test_feed_sorts_what_comes_back() -> None:
    feed, rid = asked_feed()
    assert feed.read_bytes(action(rid, [3, 4])) == (rid, (3, 4))
    assert feed.read_bytes(action(rid, [5])) is None  # late duplicate: dropped
    feed, rid = asked_feed()
    late = feed.read_bytes(action(rid + 1, [1]))
    assert isinstance(late, Failure) and late.fault is Fault.PROTOCOL
    feed, rid = asked_feed()
    assert feed.read_bytes(b"\xff\xff\xff") == Failure(Fault.PROTOCOL,
                                                       "an undecodable message", "3 bytes")
    feed, rid = asked_feed()
    hello = pb.ClientMessage()
    hello.play.games = 3
    failure = feed.read_bytes(hello.SerializeToString())
    assert isinstance(failure, Failure) and "unexpected play message" in failure.detail
    feed, rid = asked_feed()
    failure = feed.read_bytes(pb.ClientMessage().SerializeToString())
    assert isinstance(failure, Failure) and failure.fault is Fault.PROTOCOL
    feed, rid = asked_feed()
    assert feed.read_bytes(action(rid, [1] * (MAX_ACTION_CARDS + 1))) == (rid, Failure(
        Fault.ILLEGAL_ACTION, f"an action of more than {MAX_ACTION_CARDS} cards: no hand "
                              "holds that many", f"{MAX_ACTION_CARDS + 1} cards"))
    feed, rid = asked_feed()
    assert feed.read_bytes(action(rid, [3], think_us=1_500_000)) == (rid, Failure(
        Fault.TIMEOUT, "answered after the limit of 1 s", "reported 1500000 us"))
    feed, rid = asked_feed()
    crash = pb.ClientMessage()
    crash.failure.request_id = rid
    crash.failure.message = "Oops\x00\n  with\tcontrol   characters " + "x" * 1000
    read = feed.read_bytes(crash.SerializeToString())
    assert isinstance(read, tuple) and not isinstance(read, Failure)
    failure = read[1]
    assert isinstance(failure, Failure) and failure.fault is Fault.CRASH
    assert failure.detail == "the bot raised an exception"  # none of its words


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_feed_never_raises_on_bytes(data: bytes) -> None:
    feed, _ = asked_feed()
    answer = feed.read_bytes(data)
    assert answer is None or isinstance(answer, tuple | Failure)


def test_outcome_codes_cover_every_reason_and_fault() -> None:
    for reason in Reason:
        for fault in (None, *Fault):
            outcome = Outcome(1 if reason is Reason.GOAL else None, reason, "d", fault,
                              0 if fault else None)
            msg = pb.Outcome()
            outcome_to_pb(outcome, msg)
            assert outcome_from_pb(msg) == outcome
