"""A live client process for the referee tests: ``live_client.py MODE ADDRESS NAME [...]``.

Prints one JSON line: the results it saw (and what went wrong, if anything).

  healthy ADDRESS NAME GAMES OPPONENT [TOKEN]  - plays properly with a greedy bot
  stall ADDRESS NAME                           - sleeps past the time limit at its first duel
  illegal ADDRESS NAME                         - duels with a card it does not hold
  garbage ADDRESS NAME                         - answers its first request with raw garbage
  malformed ADDRESS NAME                       - answers with a PlayRequest instead of an Action
  disconnect ADDRESS NAME                      - plays a few decisions, then dies
"""

from __future__ import annotations

import json
import os
import queue
import sys
import time
from collections.abc import Iterator

import grpc

from tacocat.engine.bots import GreedyBot
from tacocat.protocol import PLAY_METHOD, PROTOCOL_VERSION
from tacocat.protocol.proto.v1 import game_pb2 as pb
from tacocat.sdk import SdkError, connect, lowest_response


def report(**fields: object) -> None:
    print(json.dumps(fields), flush=True)


def play(name: str, bot: GreedyBot, games: int, opponent: str | None,
         token: str | None, address: str) -> None:
    try:
        results = connect(bot, address, token, games=games, opponent=opponent, name=name)
    except SdkError as exc:
        report(error=f"{type(exc).__name__}: {exc}")
        return
    report(results=[{"seat": r.seat, "winner": r.outcome.winner, "reason": r.outcome.reason.value,
                     "fault": r.outcome.fault.value if r.outcome.fault else None,
                     "offender": r.outcome.offender, "rounds": len(r.rounds)}
                    for r in results])


class Stalling(GreedyBot):
    def duel(self, obs):  # type: ignore[no-untyped-def]
        time.sleep(1.5)
        return super().duel(obs)


class Illegal(GreedyBot):
    def duel(self, obs):  # type: ignore[no-untyped-def]
        return 99


def raw(address: str, name: str, mode: str) -> None:
    """Speak the protocol by hand, to break it on purpose."""
    outbox: queue.Queue[bytes | None] = queue.Queue()

    def requests() -> Iterator[bytes]:
        while (item := outbox.get()) is not None:
            yield item

    hello = pb.ClientMessage()
    hello.play.bot_name = name
    hello.play.games = 2
    hello.play.opponent = "house:greedy"
    hello.play.protocol = PROTOCOL_VERSION
    outbox.put(hello.SerializeToString())
    channel = grpc.insecure_channel(address)
    stream = channel.stream_stream(PLAY_METHOD)(requests())
    seen: list[str] = []
    answered = 0
    for data in stream:
        msg = pb.ServerMessage.FromString(data)
        kind = msg.WhichOneof("kind")
        seen.append(kind if kind != "error" else f"error:{msg.error.code}")
        if kind != "request":
            if kind == "match_end":
                outbox.put(None)
            continue
        if mode == "disconnect" and answered == 3:
            report(seen=seen)
            os._exit(0)  # no goodbye, no half-close: the process is simply gone
        if answered == 0 and mode == "garbage":
            outbox.put(b"\x08\x96\x01 this is not a ClientMessage \xff\xfe")
        elif answered == 0 and mode == "malformed":
            outbox.put(hello.SerializeToString())
        else:
            reply = pb.ClientMessage()
            reply.action.request_id = msg.request.request_id
            # The packed view (game.proto): ..., n, hand, k, attack, ...
            view = list(msg.request.view)
            n = view[9]
            hand, attack = view[10:10 + n], view[11 + n:11 + n + view[10 + n]]
            if msg.request.decision == pb.DECISION_DEFEND:
                reply.action.cards.extend(lowest_response(sorted(hand), attack))
            elif msg.request.decision != pb.DECISION_REPLACE:
                reply.action.cards.append(max(hand))
            outbox.put(reply.SerializeToString())
        answered += 1
    report(seen=seen)


def main(argv: list[str]) -> None:
    mode, address, name = argv[:3]
    if mode == "healthy":
        games, opponent = int(argv[3]), argv[4]
        token = argv[5] if len(argv) > 5 else None
        play(name, GreedyBot(), games, None if opponent == "live" else opponent, token, address)
    elif mode == "stall":
        play(name, Stalling(), 1, "house:greedy", None, address)
    elif mode == "illegal":
        play(name, Illegal(), 1, "house:greedy", None, address)
    else:
        raw(address, name, mode)


if __name__ == "__main__":
    main(sys.argv[1:])
