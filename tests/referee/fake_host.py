"""A stand-in for ``tacocat.sdk.host`` that misbehaves on purpose: ``fake_host.py MODE``.

It sends a proper Hello (protocol 2), reads frames, and when a frame holds a decision
request it:
  oversize  - writes a length header announcing a 100 MB frame
  garbage   - writes a well-framed body that is not a ClientFrame
  truncate  - writes half a frame, then stalls
  halfexit  - writes half a frame, then exits
  wrongkind - answers with a Hello instead of an Action
  badid     - answers with an Action for a request id never issued
  silent    - never answers (but keeps reading)
  liar      - answers every request legally, claiming each took 10 s
  oldhello  - (at start) says Hello as protocol 1 would, without a version
"""

import os
import struct
import sys
import time

from tacocat.protocol.proto.v1 import game_pb2 as pb


def send(data: bytes) -> None:
    os.write(1, struct.pack(">I", len(data)) + data)


def read_frame():
    header = sys.stdin.buffer.read(4)
    if len(header) < 4:
        return None
    (size,) = struct.unpack(">I", header)
    return sys.stdin.buffer.read(size)


def main(mode: str) -> None:
    hello = pb.ClientMessage()
    hello.hello.bot_name = f"fake-{mode}"
    hello.hello.protocol = 0 if mode == "oldhello" else 2
    send(hello.SerializeToString())
    hands: dict[int, int] = {}
    while True:
        data = read_frame()
        if data is None:
            return
        requests = [m.request for m in pb.ServerFrame.FromString(data).messages
                    if m.WhichOneof("kind") == "request"]
        if not requests:
            continue
        first = requests[0]
        if mode == "oversize":
            os.write(1, struct.pack(">I", 100_000_000) + b"xx")
        elif mode == "garbage":
            send(b"\xff\xff\xff\xff not protobuf at all")
        elif mode in ("truncate", "halfexit"):
            os.write(1, struct.pack(">I", 50) + b"only a little")
            if mode == "halfexit":
                os._exit(0)
        elif mode == "wrongkind":
            reply = pb.ClientFrame()
            reply.messages.append(hello)
            send(reply.SerializeToString())
        elif mode == "badid":
            reply = pb.ClientFrame()
            action = reply.messages.add().action
            action.request_id = first.request_id + 1000
            send(reply.SerializeToString())
        elif mode == "liar":
            reply = pb.ClientFrame()
            for request in requests:
                action = reply.messages.add().action
                action.request_id = request.request_id
                action.think_us = 10_000_000
                hands[request.game] = request.view[9]
            send(reply.SerializeToString())
            continue
        time.sleep(60 if mode != "silent" else 0)


if __name__ == "__main__":
    main(sys.argv[1])
