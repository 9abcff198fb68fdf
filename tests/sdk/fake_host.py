"""A stand-in for ``tacocat.sdk.host`` that misbehaves on purpose: ``fake_host.py MODE``.

It sends a proper Hello, reads frames, and when it gets its first decision request it:
  oversize  - writes a length header announcing a 100 MB frame
  garbage   - writes a well-framed body that is not a ClientMessage
  truncate  - writes half a frame, then stalls
  halfexit  - writes half a frame, then exits
  wrongkind - answers with a Hello instead of an Action
  badid     - answers with an Action for a request id never issued
  silent    - never answers (but keeps reading)
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
    send(hello.SerializeToString())
    while True:
        data = read_frame()
        if data is None:
            return
        msg = pb.ServerMessage.FromString(data)
        if msg.WhichOneof("kind") != "request":
            continue
        if mode == "oversize":
            os.write(1, struct.pack(">I", 100_000_000) + b"xx")
        elif mode == "garbage":
            send(b"\xff\xff\xff\xff not protobuf at all")
        elif mode in ("truncate", "halfexit"):
            os.write(1, struct.pack(">I", 50) + b"only a little")
            if mode == "halfexit":
                os._exit(0)
        elif mode == "wrongkind":
            send(hello.SerializeToString())
        elif mode == "badid":
            reply = pb.ClientMessage()
            reply.action.request_id = msg.request.request_id + 1000
            reply.action.cards.append(msg.request.hand[0])
            send(reply.SerializeToString())
        time.sleep(60 if mode != "silent" else 0)


if __name__ == "__main__":
    main(sys.argv[1])
