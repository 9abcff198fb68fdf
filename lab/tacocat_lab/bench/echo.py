"""The baseline of ``tacocat bench referee``: a plain grpc.aio bidirectional ping-pong.

The same shape as the referee run (one server process, the same client processes, streams
and connections, one message each way per round trip, messages of the sizes the game
protocol really sends) with nothing behind it: the server answers each message at once.
Its round trips per second are what gRPC and Python can do on this machine, so the
referee's figure divided by this one says how much the referee itself costs.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Sequence
from statistics import mean

from tacocat.engine import Observation, Outcome, Round, Ruleset, duplicate_pairs
from tacocat.engine.bots import GreedyBot
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.referee import Answer, Failure, InProcessSeat, SeatFeed, play_match

SERVICE = "tacocat.bench.Echo"
METHOD = f"/{SERVICE}/PingPong"


class _MeasuredSeat:
    """A greedy bot in this process that also encodes, as a bot process would be sent, each
    request it is asked and the action it answers: what the protocol's messages weigh.

    It wraps an :class:`InProcessSeat` rather than subclassing it: the seats are compiled,
    and a Python class cannot inherit from a compiled one."""

    broken: Failure | None = None
    lost: str | None = None
    never_started = False

    def __init__(self) -> None:
        self.seat = InProcessSeat(GreedyBot)
        self.feed = SeatFeed(2.0)
        self.requests: list[int] = []
        self.actions: list[int] = []
        self._asked: list[int] = []

    @property
    def time_limit(self) -> float | None:
        return self.seat.time_limit

    @property
    def spent(self) -> float:
        return self.seat.spent

    def start(self, game: int, games: int, seat: int, rules: Ruleset, opponent: str) -> None:
        self.feed.game_start(pb.ServerMessage(), game, games, seat, rules, opponent)
        self.seat.start(game, games, seat, rules, opponent)

    def ask(self, game: int, obs: Observation) -> None:
        msg = pb.ServerMessage()
        request_id = self.feed.request(msg, game, obs)
        self.feed.abandon(request_id)
        self.requests.append(msg.ByteSize())
        self._asked.append(request_id)
        self.seat.ask(game, obs)

    def refuse(self, game: int, failure: Failure) -> None:
        self.seat.refuse(game, failure)

    def end(self, game: int, outcome: Outcome, rounds: Sequence[Round]) -> None:
        self.feed.result(pb.ServerMessage(), game, outcome, rounds)
        self.seat.end(game, outcome, rounds)

    async def send(self) -> None:
        await self.seat.send()

    async def answers(self) -> list[Answer]:
        answers = await self.seat.answers()
        asked, self._asked = self._asked, []
        for request_id, answer in zip(asked, answers, strict=True):
            reply = pb.ClientMessage()
            reply.action.request_id, reply.action.think_us = request_id, 150
            if not isinstance(answer, Failure):
                reply.action.cards.extend(answer)
            self.actions.append(reply.ByteSize())
        return answers

    def restart(self) -> None:
        self.seat.restart()

    def give_up(self, failure: Failure) -> None:
        self.seat.give_up(failure)


def message_sizes(games: int = 20) -> tuple[int, int]:
    """Mean bytes of a decision request and of an action, from real games."""
    seats = (_MeasuredSeat(), _MeasuredSeat())
    play_match(seats, duplicate_pairs(games, "sizes"), names=("a", "b"))
    requests = [size for seat in seats for size in seat.requests]
    actions = [size for seat in seats for size in seat.actions]
    return round(mean(requests)), round(mean(actions))


def spin(seconds: float) -> None:
    """Keep this thread's CPU busy for ``seconds`` (a stand-in for a referee's work)."""
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


async def _serve(port_file: str, reply_size: int, work: float) -> None:
    import grpc  # noqa: PLC0415 - only the echo process

    reply = b"x" * reply_size

    async def ping_pong(requests: object, context: grpc.aio.ServicerContext[bytes, bytes]
                        ) -> None:
        while True:
            data = await context.read()
            if not isinstance(data, bytes):
                return
            if work:
                spin(work)
            await context.write(reply)

    server = grpc.aio.server()
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(
        SERVICE, {"PingPong": grpc.stream_stream_rpc_method_handler(ping_pong)}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    with open(port_file, "w") as out:
        out.write(str(port))
    await server.wait_for_termination()


async def _client(address: str, rounds: int, size: int) -> dict[str, list[float]]:
    import grpc  # noqa: PLC0415

    message = b"y" * size
    times: list[float] = []
    waits: list[float] = []
    wait_times: list[float] = []
    options = [("grpc.use_local_subchannel_pool", 1)]  # one connection per client
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        call: grpc.aio.StreamStreamCall[bytes, bytes] = channel.stream_stream(METHOD)()
        last = 0.0
        for _ in range(rounds):
            await call.write(message)
            await call.read()
            now = time.time()
            if last:  # as the bot notes it: from its answer to the next request
                waits.append(now - last)
                wait_times.append(now)
            times.append(now)
            last = time.time()
        await call.done_writing()
    return {"times": times, "waits": waits, "wait_times": wait_times}


async def _clients(address: str, count: int, rounds: int, size: int) -> None:
    reports = await asyncio.gather(*(_client(address, rounds, size) for _ in range(count)))
    for report in reports:
        print(json.dumps(report))


def server_main(argv: Sequence[str]) -> None:
    """The echo server process: ``PORT_FILE REPLY_BYTES [WORK_US]`` (``WORK_US``: CPU spent
    on each message before its reply; 0, the plain echo, unless given)."""
    from tacocat.cli import run_async  # noqa: PLC0415

    work = float(argv[2]) / 1e6 if len(argv) > 2 else 0.0
    run_async(_serve(argv[0], int(argv[1]), work))


def client_main(argv: Sequence[str]) -> None:
    """An echo client process: ``ADDRESS COUNT ROUNDS MESSAGE_BYTES``; one JSON line per
    client, then one with the CPU seconds the process spent playing."""
    from tacocat.cli import run_async  # noqa: PLC0415

    address, count, rounds, size = argv
    started = time.process_time()
    run_async(_clients(address, int(count), int(rounds), int(size)))
    print(json.dumps({"cpu": time.process_time() - started}))


SERVER_MAIN = ("import sys; from tacocat_lab.bench.echo import server_main; "
               "server_main(sys.argv[1:])")
CLIENT_MAIN = ("import sys; from tacocat_lab.bench.echo import client_main; "
               "client_main(sys.argv[1:])")
