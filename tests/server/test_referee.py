"""The referee over real gRPC on loopback, served from a thread of the test process."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator

import grpc
import grpc.aio
import pytest
from google.protobuf import unknown_fields
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tacocat.engine import BOTH, Fault, GameRecord, GameState, Observation, Reason
from tacocat.engine.bots import GreedyBot, RandomBot
from tacocat.protocol import PLAY_METHOD, PROTOCOL_VERSION, REFEREE_SERVICE
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.sdk import MatchEndedError, RefereeError, connect
from tacocat.sdk._session import BotSession
from tests.live_referee import PLAYERS, ThreadReferee
from tests.protocol.test_wire import Recorder


@pytest.fixture(scope="module")
def referee() -> Iterator[ThreadReferee]:
    server = ThreadReferee(time_limit=0.3, queue_timeout=0.5)
    yield server
    server.stop()


class ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture
def server_errors() -> Iterator[list[logging.LogRecord]]:
    handler = ErrorLog()
    logger = logging.getLogger("tacocat.server")
    logger.addHandler(handler)
    yield handler.records
    logger.removeHandler(handler)


# ------------------------------------------------------------------ refusals


@pytest.mark.parametrize(("token", "opponent", "games", "seed", "code"), [
    ("nobody-has-this", "house:greedy", 1, None, "UNAUTHENTICATED"),
    (None, None, 1, None, "UNAUTHENTICATED"),  # anonymous may not play live clients
    (None, "house:nobody", 1, None, "INVALID_REQUEST"),
    (None, "house:greedy", 100_000, None, "INVALID_REQUEST"),
    (PLAYERS["alice"], None, 1, "my-seed", "INVALID_REQUEST"),  # live deals are the referee's
    (PLAYERS["alice"], None, 7, None, "UNAVAILABLE"),  # nobody else wants 7 games: timeout
])
def test_refusals_carry_a_code(referee: ThreadReferee, token: str | None, opponent: str | None,
                               games: int, seed: str | None, code: str) -> None:
    with pytest.raises(RefereeError) as caught:
        connect(GreedyBot(), referee.address, token, games=games, opponent=opponent, seed=seed)
    assert caught.value.code == code


def test_health_and_reflection_are_on(referee: ThreadReferee) -> None:
    with grpc.insecure_channel(referee.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", REFEREE_SERVICE):
            reply = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        names = {s.name for r in replies for s in r.list_services_response.service}
    assert {REFEREE_SERVICE, "grpc.health.v1.Health"} <= names


# ------------------------------------------------------------------ hidden information


async def capture(address: str, bot: Recorder, token: str, name: str, games: int
                  ) -> list[bytes]:
    """Play live like connect(), keeping every ServerMessage exactly as it arrived."""
    received: list[bytes] = []
    session = BotSession(lambda: bot)  # the same recorder for every game (one at a time)
    hello = pb.ClientMessage()
    hello.play.bot_name, hello.play.games = name, games
    hello.play.protocol = PROTOCOL_VERSION
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.stream_stream(PLAY_METHOD)(
            metadata=(("authorization", f"Bearer {token}"),))
        await call.write(hello.SerializeToString())
        while not session.finished:
            data = await call.read()
            assert isinstance(data, bytes)
            received.append(data)
            reply = session.handle(pb.ServerMessage.FromString(data))
            if reply is not None:
                await call.write(reply.SerializeToString())
        await call.done_writing()
    return received


def observations_by_seat(record: GameRecord) -> dict[int, list[Observation]]:
    """Replay a finished game: what the engine lets each seat see at each of its decisions."""
    state = GameState(record.ruleset, record.seed, decks=[r.deck for r in record.rounds])
    seen: dict[int, list[Observation]] = {0: [], 1: []}

    def act(seat: int, action: tuple[int, ...]) -> None:
        seen[seat].append(state.observation(seat))
        state.apply(seat, action)

    for played in record.rounds:
        arrow = record.ruleset.arrows[state.position]
        for seat in ((0, 1) if arrow == BOTH else (int(arrow), 1 - int(arrow))):
            act(seat, played.replace[seat])
        for c0, c1 in played.duels:
            act(0, (c0,))
            act(1, (c1,))
        for trick in played.tricks:
            act(trick.attacker, trick.attack)
            act(1 - trick.attacker, trick.response)
    assert state.outcome is not None and state.outcome.reason is record.result.reason
    return seen


def test_no_message_carries_hidden_information(referee: ThreadReferee) -> None:
    games = 4
    bots = {"alice": Recorder(RandomBot(1)), "bob": Recorder(RandomBot(2))}

    async def both() -> list[list[bytes]]:
        return await asyncio.gather(*(
            capture(referee.address, bot, PLAYERS[name], "spy", games)
            for name, bot in bots.items()))

    raw = dict(zip(bots, asyncio.run(both()), strict=True))
    records = [r for r in referee.records(["alice/spy"])][-games:]
    assert len(records) == games
    per_game: dict[str, list[list[Observation]]] = {name: [] for name in bots}
    for record in records:
        assert record.result.reason is not Reason.FORFEIT
        seen = observations_by_seat(record)
        for seat, player in enumerate(record.players):
            per_game[player.split("/")[0]].append(seen[seat])
    for name, bot in bots.items():
        # The bot saw exactly the engine's observations, which never hold the other hand,
        # the pile or the deck: the wire added nothing to them.
        assert bot.seen == [obs for game in per_game[name] for obs in game]
        secrets = {r.seed.rsplit("/", 1)[0].encode() for r in records}  # the seeds deal all
        for data in raw[name]:
            msg = pb.ServerMessage.FromString(data)
            assert len(unknown_fields.UnknownFieldSet(msg)) == 0
            assert not any(secret in data for secret in secrets)


def test_the_schema_has_no_place_for_secrets() -> None:
    names: set[str] = set()
    pending = [pb.ServerMessage.DESCRIPTOR]
    while pending:
        message = pending.pop()
        for field in message.fields:
            names.add(f"{message.name}.{field.name}")
            if field.message_type is not None and field.message_type.name not in {
                    n.split(".")[0] for n in names if n != f"{message.name}.{field.name}"}:
                pending.append(field.message_type)
    suspicious = {n for n in names if any(w in n.split(".")[1] for w in
                                          ("seed", "pile", "opponent_hand", "deck"))}
    # The ruleset's deck is the public composition (rank -> count).
    # (The pile's size rides in DecisionRequest.view, whose layout game.proto spells out:
    # counts, the seat's own hand and public cards only.)
    assert suspicious == {"Ruleset.deck"}


# ------------------------------------------------------------------ nonsense never hurts


def client_message(kind: str, data: st.DataObject) -> bytes:
    msg = pb.ClientMessage()
    if kind == "play":
        msg.play.games = data.draw(st.sampled_from([0, 1, 2, 3, 2**32 - 1]))
        msg.play.opponent = data.draw(st.sampled_from(["house:greedy", "house:random", "",
                                                       "house:x", "zzz"]))
        msg.play.bot_name = data.draw(st.text(max_size=20))
        msg.play.seed = data.draw(st.sampled_from(["", "s", "\x00"]))
    elif kind == "action":
        msg.action.request_id = data.draw(st.integers(0, 6))
        msg.action.cards.extend(data.draw(st.lists(st.integers(-(2**31), 2**31 - 1),
                                                   max_size=70)))
    elif kind == "hello":
        msg.hello.bot_name = data.draw(st.text(max_size=10))
    elif kind == "failure":
        msg.failure.request_id = data.draw(st.integers(0, 6))
        msg.failure.message = data.draw(st.text(max_size=50))
    else:
        return data.draw(st.binary(max_size=200))
    return msg.SerializeToString()


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.data())
def test_arbitrary_client_messages_never_hurt_the_referee(referee: ThreadReferee,
                                                          data: st.DataObject) -> None:
    kinds = data.draw(st.lists(st.sampled_from(["play", "action", "hello", "failure", "raw"]),
                               min_size=1, max_size=6))
    messages = [client_message(k, data) for k in kinds]
    token = data.draw(st.sampled_from([None, PLAYERS["carol"], "bad-token"]))
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    with grpc.insecure_channel(referee.address) as channel:
        stream = channel.stream_stream(PLAY_METHOD)(iter(messages), metadata=metadata,
                                                    timeout=10)
        try:
            for reply in stream:
                pb.ServerMessage.FromString(reply)  # whatever comes back is well formed
        except grpc.RpcError as exc:
            assert exc.code() in (grpc.StatusCode.INVALID_ARGUMENT,
                                  grpc.StatusCode.UNAUTHENTICATED,
                                  grpc.StatusCode.UNAVAILABLE), exc


def test_the_referee_survived_the_fuzzing(referee: ThreadReferee,
                                          server_errors: list[logging.LogRecord]) -> None:
    # Runs after the fuzz test (file order): the referee is healthy and plays normally.
    results = connect(GreedyBot(), referee.address, games=2, opponent="house:random")
    assert len(results) == 2
    assert not server_errors


# ------------------------------------------------------------------ shutdown


def test_shutdown_aborts_running_games_and_records_them() -> None:
    server = ThreadReferee(time_limit=5.0)
    entered = threading.Event()

    class Slow(GreedyBot):
        def duel(self, obs):  # type: ignore[no-untyped-def]
            entered.set()
            threading.Event().wait(0.5)
            return super().duel(obs)

    outcome: list[BaseException | object] = []

    def play() -> None:
        try:
            outcome.append(connect(Slow(), server.address, games=20, opponent="house:greedy",
                                   name="victim"))
        except BaseException as exc:
            outcome.append(exc)

    thread = threading.Thread(target=play)
    thread.start()
    assert entered.wait(10)
    server.stop(grace=0.0)
    thread.join(10)
    (error,) = outcome
    assert isinstance(error, RefereeError) and error.code == "UNAVAILABLE"
    (record,) = server.records(["anonymous/victim"])
    assert record.result.reason is Reason.ABORTED
    record.replay()


def test_a_live_opponent_who_leaves_forfeits_to_the_one_who_stays(
        referee: ThreadReferee) -> None:
    class Quitter(GreedyBot):
        def attack(self, obs):  # type: ignore[no-untyped-def]
            raise KeyboardInterrupt  # escapes the session: the client process "dies"

    errors: list[BaseException] = []
    stayed: list[object] = []

    def run(bot: GreedyBot, name: str, sink: list) -> None:  # type: ignore[type-arg]
        try:
            sink.append(connect(bot, referee.address, PLAYERS[name], games=4, opponent=None,
                                name="pair"))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run, args=(Quitter(), "dave", [])),
               threading.Thread(target=run, args=(GreedyBot(), "carol", stayed))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    (results,) = stayed
    assert len(results) >= 1  # type: ignore[arg-type]
    last = results[-1]  # type: ignore[index]
    assert last.outcome.fault is Fault.DISCONNECT and last.won


def test_a_client_that_stops_answering_is_told_and_dropped(referee: ThreadReferee) -> None:
    class Asleep(GreedyBot):
        def replace(self, obs):  # type: ignore[no-untyped-def]
            threading.Event().wait(0.7)  # every decision misses the 0.3 s limit
            return ()

    with pytest.raises(MatchEndedError) as caught:
        connect(Asleep(), referee.address, games=50, opponent="house:greedy", name="asleep")
    assert isinstance(caught.value, RefereeError) and caught.value.code == "TIMEOUT"
    assert "gave up after 3 faults in a row; last: timeout" in caught.value.message
    assert "the referee ended the match after 3 of 50 games" in str(caught.value)
    # The results so far come with it: three games, each forfeited on time.
    assert [r.forfeited and r.outcome.fault for r in caught.value.results] == [Fault.TIMEOUT] * 3
    records = referee.records(["anonymous/asleep"])
    assert len(records) == 3  # the match ended with the third timeout, not after 50 games
    assert all(r.result.fault is Fault.TIMEOUT for r in records)


def test_a_slow_but_legal_live_client_runs_out_of_its_time_bank(
        request: pytest.FixtureRequest) -> None:
    class Dawdler(GreedyBot):
        def replace(self, obs):  # type: ignore[no-untyped-def]
            threading.Event().wait(0.15)  # half the 0.3 s limit: legal, every time
            return super().replace(obs)

        def duel(self, obs):  # type: ignore[no-untyped-def]
            threading.Event().wait(0.15)
            return super().duel(obs)

        def attack(self, obs):  # type: ignore[no-untyped-def]
            threading.Event().wait(0.15)
            return super().attack(obs)

        def defend(self, obs):  # type: ignore[no-untyped-def]
            threading.Event().wait(0.15)
            return super().defend(obs)

    # Its bank: (2 + 1) games x 3 limits x 0.3 s = 2.7 s, 18 of its decisions. Two games
    # took 38 to 116 decisions of a side in 30 matches: it always runs out. (The default of
    # 10 limits per game would be too near a short match's whole time at half the limit.)
    referee = ThreadReferee(time_limit=0.3, bank_limits_per_game=3)
    request.addfinalizer(referee.stop)
    with pytest.raises(MatchEndedError) as caught:
        connect(Dawdler(), referee.address, games=2, opponent="house:greedy", name="dawdler")
    assert isinstance(caught.value, RefereeError)
    assert "used up its time bank of 2.7 s for this match" in caught.value.message, caught.value
    records = referee.records(["anonymous/dawdler"])
    assert records and "time bank" in records[-1].result.detail
    assert records[-1].result.fault is Fault.TIMEOUT
