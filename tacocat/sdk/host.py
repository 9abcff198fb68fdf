"""Run one bot over stdin/stdout: ``python -m tacocat.sdk.host path/to/bot.py[:Class]``.

This is what the arena's workers start inside the sandbox. It reads ``ServerMessage`` frames
on stdin and answers with ``ClientMessage`` frames on stdout (4-byte big-endian length, then
the message), starting with a ``Hello`` once the bot is loaded. Anything the bot prints goes
to stderr: file descriptor 1 is pointed at stderr before the bot is imported, and the frames
go out on a private duplicate of the original stdout. Exit status: 0 at the end of the match
(``MatchEnd`` or end of input), 2 for bad usage, 3 when the bot cannot be loaded, 4 when the
referee breaks the protocol.
"""

from __future__ import annotations

import os
import sys
from typing import BinaryIO

from google.protobuf.message import DecodeError

import tacocat

from ._errors import BotLoadError, ProtocolError, RefereeError
from ._loader import load_bot
from ._protocol import MAX_SERVER_MESSAGE, frame, read_frame
from ._session import BotSession
from .proto.v1 import game_pb2 as pb

USAGE = "usage: python -m tacocat.sdk.host path/to/bot.py[:ClassName] | house:NAME"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if args and args[0] in ("-h", "--help") else 2
    frames_in, frames_out = _claim_stdio()
    try:
        bot = load_bot(args[0])
    except BotLoadError as exc:
        print(f"tacocat.sdk.host: {exc}", file=sys.stderr)
        return 3
    hello = pb.ClientMessage()
    hello.hello.bot_name = bot.name
    hello.hello.sdk_version = tacocat.__version__
    _send(frames_out, hello)
    session = BotSession(bot)
    try:
        while not session.finished:
            data = read_frame(frames_in, MAX_SERVER_MESSAGE)
            if data is None:
                break
            reply = session.handle(pb.ServerMessage.FromString(data))
            if reply is not None:
                _send(frames_out, reply)
    except (ProtocolError, RefereeError, DecodeError, ValueError) as exc:
        print(f"tacocat.sdk.host: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 4
    except BrokenPipeError:
        return 0  # the referee went away: nothing left to answer
    return 0


def _claim_stdio() -> tuple[BinaryIO, int]:
    """Keep the protocol's pipes for the host: the bot gets /dev/null and stderr instead."""
    frames_in = os.fdopen(os.dup(0), "rb", buffering=1 << 16)
    frames_out = os.dup(1)
    os.dup2(2, 1)  # print(), os.write(1, ...) and child processes now reach stderr
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull, encoding="utf-8")  # noqa: SIM115 - lives as long as the host
    return frames_in, frames_out


def _send(fd: int, msg: pb.ClientMessage) -> None:
    data = memoryview(frame(msg.SerializeToString()))
    while data:
        data = data[os.write(fd, data):]


if __name__ == "__main__":
    sys.exit(main())
