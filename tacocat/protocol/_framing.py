"""Constants of the game protocol, and the length-prefixed frames of its stdio transport.

A frame is a 4-byte big-endian length followed by that many bytes of one ``ServerFrame``
(referee to bot: every message waiting for the bot) or ``ClientFrame`` (bot to referee: its
answers), as defined in ``proto/tacocat/v1/game.proto``; the host's ``Hello`` is the one
bare ``ClientMessage``.
"""

from __future__ import annotations

import struct
from typing import BinaryIO, Final

from ._errors import ProtocolError
from .proto.v1 import game_pb2

_SERVICE = game_pb2.DESCRIPTOR.services_by_name["Referee"]
REFEREE_SERVICE: Final = _SERVICE.full_name
"""``tacocat.v1.Referee``, as gRPC and reflection name it."""
PLAY_METHOD: Final = f"/{REFEREE_SERVICE}/{_SERVICE.methods_by_name['Play'].name}"

PROTOCOL_VERSION: Final = 2
"""Batched games, per-game messages, incremental requests, reported thinking time
(``game.proto``'s header says what changed from version 1)."""

DEFAULT_PORT: Final = 50051
DEFAULT_ADDRESS: Final = f"localhost:{DEFAULT_PORT}"

MAX_CLIENT_MESSAGE: Final = 64 * 1024
"""Largest message or frame a bot may send. An action is a handful of ranks; a frame of a
batch's answers is a few hundred bytes; the cap leaves room."""
MAX_SERVER_MESSAGE: Final = 1024 * 1024
"""Largest message or frame a referee sends (a batch's game results with every round)."""
MAX_BATCH: Final = 256
"""Most games a match plays at once: keeps a frame of requests far below the size limit."""
MAX_ACTION_CARDS: Final = 64
"""More cards than this in one action is refused before the rules see it, so a hostile
action cannot blow up the error text that goes into the replay record."""

_HEADER = struct.Struct(">I")
HEADER_SIZE: Final = _HEADER.size


def frame(data: bytes) -> bytes:
    """One frame: the length prefix and ``data``."""
    return _HEADER.pack(len(data)) + data


class FrameBuffer:
    """Cuts a byte stream into frames as chunks arrive (non-blocking readers)."""

    __slots__ = ("_buffer", "limit")

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._buffer = bytearray()

    def feed(self, chunk: bytes) -> None:
        self._buffer += chunk

    @property
    def partial(self) -> bool:
        """Whether some bytes of an incomplete frame are waiting."""
        return bool(self._buffer)

    def describe_partial(self) -> str:
        if len(self._buffer) < HEADER_SIZE:
            return f"{len(self._buffer)} bytes of a frame header"
        (size,) = _HEADER.unpack_from(self._buffer)
        return f"{len(self._buffer) - HEADER_SIZE} of {size} bytes of a frame"

    def next(self) -> bytes | None:
        """The next complete frame, or ``None`` until more bytes arrive.

        Raises :class:`ProtocolError` as soon as a header announces a frame over the limit,
        without waiting for (or buffering) its body.
        """
        buffer = self._buffer
        if len(buffer) < HEADER_SIZE:
            return None
        (size,) = _HEADER.unpack_from(buffer)
        if size > self.limit:
            raise ProtocolError(f"frame of {size} bytes exceeds the {self.limit}-byte limit")
        end = HEADER_SIZE + size
        if len(buffer) < end:
            return None
        data = bytes(buffer[HEADER_SIZE:end])
        del buffer[:end]
        return data


def read_frame(stream: BinaryIO, limit: int) -> bytes | None:
    """Read one frame from a blocking stream; ``None`` at a clean end of stream."""
    header = stream.read(HEADER_SIZE)
    if not header:
        return None
    if len(header) < HEADER_SIZE:
        raise ProtocolError(f"stream ended inside a frame header ({len(header)} bytes)")
    (size,) = _HEADER.unpack(header)
    if size > limit:
        raise ProtocolError(f"frame of {size} bytes exceeds the {limit}-byte limit")
    data = stream.read(size)
    if len(data) < size:
        raise ProtocolError(f"stream ended inside a frame ({len(data)} of {size} bytes)")
    return data
