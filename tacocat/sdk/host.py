"""Run one bot over stdin/stdout: ``python -m tacocat.sdk.host path/to/bot.py[:Class]``.

This is what the arena's workers start inside the sandbox. It reads ``ServerFrame`` frames
on stdin (4-byte big-endian length, then the message: every message waiting for this bot,
for all the games in flight) and answers each with one ``ClientFrame`` on stdout holding
the answers to its requests (a slow frame in several, so the referee sees progress), after
a ``Hello`` once the bot is loaded. Every game gets its own bot object, made by the bot's
class.

Anything the bot prints goes to stderr: file descriptor 1 is pointed at stderr before the
bot is imported, and the frames go out on a private duplicate of the original stdout.
Before the first thing the bot prints in each game, a marker line (``=== game 7 ===``,
:mod:`tacocat.protocol.logs`) says which game it belongs to, so its owner can read the
arena's log game by game (writes straight to file descriptor 2, by a child process say,
carry no marker of their own).

Exit status: 0 at the end of the match (``MatchEnd`` or end of input), 2 for bad usage, 3
when the bot cannot be loaded, 4 when the referee breaks the protocol.
"""

from __future__ import annotations

import gc
import io
import math
import os
import sys
import time
from typing import Any, BinaryIO, TextIO

from google.protobuf.message import DecodeError

import tacocat
from tacocat.protocol import (
    MAX_SERVER_MESSAGE,
    PROTOCOL_VERSION,
    ProtocolError,
    frame,
    read_frame,
)
from tacocat.protocol.logs import game_marker
from tacocat.protocol.proto.v1 import game_pb2 as pb

from ._errors import BotLoadError, RefereeError
from ._session import BotSession
from .loader import load_bot_class, make_bot

USAGE = "usage: python -m tacocat.sdk.host path/to/bot.py[:ClassName] | house:NAME"


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1 or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr)
        return 0 if args and args[0] in ("-h", "--help") else 2
    frames_in, frames_out = _claim_stdio()
    marks = _GameMarks(sys.stderr)
    sys.stdout = sys.stderr = marks
    try:
        factory = load_bot_class(args[0])
        bot = make_bot(factory)  # fails here, with its reason, if the class cannot be made
    except BotLoadError as exc:
        print(f"tacocat.sdk.host: {exc}", file=sys.stderr)
        return 3
    hello = pb.ClientMessage()
    hello.hello.bot_name = bot.name
    hello.hello.sdk_version = tacocat.__version__
    hello.hello.protocol = PROTOCOL_VERSION
    _send(frames_out, hello.SerializeToString())
    session = BotSession(factory)
    # The modules and the bot loaded by now live as long as the process: out of the cyclic
    # collector's sight, its full collections walk only what the games made.
    gc.freeze()
    # The answers of a frame go out together, except that a frame taking a while (a slow
    # bot) sends what it has every quarter of the shortest decision limit: the referee
    # expects progress within 2 limits (docs/PROTOCOL.md, "The referee's backstop").
    progress_every = math.inf
    monotonic = time.monotonic
    try:
        while not session.finished:
            data = read_frame(frames_in, MAX_SERVER_MESSAGE)
            if data is None:
                break
            replies = pb.ClientFrame()
            flushed_at = monotonic()
            for msg in pb.ServerFrame.FromString(data).messages:
                kind = msg.WhichOneof("kind")
                if kind == "game_start":
                    progress_every = min(progress_every,
                                         msg.game_start.time_limit_ms / 4000 or math.inf)
                marks.game = _game_of(msg, kind)
                session.handle(msg, replies.messages.add)
                if kind == "request" and monotonic() - flushed_at >= progress_every:
                    _send(frames_out, replies.SerializeToString())
                    replies = pb.ClientFrame()
                    flushed_at = monotonic()
            if replies.messages:
                _send(frames_out, replies.SerializeToString())
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


class _GameMarks(io.TextIOBase):
    """The bot's ``sys.stdout``/``sys.stderr``: ``inner`` with a marker line before the first
    write of each game (:attr:`game`, set before each message is handled)."""

    def __init__(self, inner: TextIO) -> None:
        self.inner = inner
        self.game: int | None = None
        self._marked: int | None = None
        self._line_open = False

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not text:
            return 0
        if self.game is not None and self.game != self._marked:
            self._marked = self.game
            self.inner.write(("\n" if self._line_open else "") + game_marker(self.game))
        self._line_open = not text.endswith("\n")
        return self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.inner.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.inner.errors

    def __getattr__(self, name: str) -> Any:
        # What else a bot may use of a real stderr (``buffer``, ``reconfigure``, ...);
        # bytes written to ``buffer`` carry no marker, like writes to file descriptor 2.
        return getattr(self.inner, name)


def _game_of(msg: pb.ServerMessage, kind: str | None) -> int | None:
    """The game a message of ``kind`` is about (``None``: the whole match)."""
    if kind in ("game_start", "request", "result", "error"):
        return int(getattr(msg, kind).game)
    return None


def _send(fd: int, data: bytes) -> None:
    view = memoryview(frame(data))
    while view:
        view = view[os.write(fd, view):]


if __name__ == "__main__":
    sys.exit(main())
