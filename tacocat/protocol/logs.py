"""What a bot wrote, kept for its owner: one capped log per bot per match, game by game.

The format both ends share: the bot's host (:mod:`tacocat.sdk.host`) writes the game
markers, the referee (:class:`~tacocat.referee.HostProcess`) keeps the capped log, local play
(``tacocat play --logs``) cuts its files the same way, and the web viewer splits a log by
game. Standard library only: a bot host imports it at start-up.

The arena keeps a sandboxed bot's stderr (everything it prints: ``tacocat.sdk.host``
points its stdout there too, and writes its tracebacks there) for the bot's owner, and
``tacocat play --logs DIR`` keeps a local bot's output the same way. Both cut at
:data:`LOG_CAP` bytes with the same notice (:class:`LogCap`), so a bot author reads the
same thing from both.

Game markers: the host writes :func:`game_marker` lines before the first output of each
game it handles (one process plays many games, several at once in a batch), so a log can
be split by game (:func:`split_games`). The bot could print a marker itself; that only
misleads its own owner, the only reader.
"""

from __future__ import annotations

import re
from typing import Final

LOG_CAP: Final = 64 * 1024
"""Bytes kept per bot per match in the arena (per bot per game in local play)."""

REFEREE_PREFIX: Final = "[referee] "
"""Starts the lines the referee adds (faults, restarts), never the bot."""

_MARKER: Final = re.compile(r"^=== game (\d+) ===$", re.MULTILINE)


def cut_notice(cap: int = LOG_CAP) -> bytes:
    """The line that ends a log cut at ``cap`` bytes (it states the cap)."""
    return f"\n[log cut at {cap // 1024} KiB]\n".encode()


def game_marker(game: int) -> str:
    """The line that opens game ``game``'s part of a log (``game`` from 0; shown from 1, as
    everywhere)."""
    return f"=== game {game + 1} ===\n"


class LogCap:
    """The cut: :meth:`take` says what of the next bytes is kept, the notice included."""

    __slots__ = ("cap", "cut", "size")

    def __init__(self, cap: int = LOG_CAP) -> None:
        self.cap = cap
        self.size = 0
        self.cut = False

    def take(self, data: bytes) -> bytes:
        if self.cut or not data:
            return b""
        room = self.cap - self.size
        if len(data) > room:
            data = data[:room] + cut_notice(self.cap)
            self.cut = True
        self.size += len(data)
        return data


class CappedLog:
    """One bot's log over a match, in memory (at most :data:`LOG_CAP` bytes and a notice)."""

    __slots__ = ("_cap", "_data")

    def __init__(self, cap: int = LOG_CAP) -> None:
        self._cap = LogCap(cap)
        self._data = bytearray()

    def write(self, data: bytes) -> None:
        self._data += self._cap.take(data)

    def note(self, text: str) -> None:
        """A referee line (a fault, a restart), on a line of its own."""
        start = b"\n" if self._data and not self._data.endswith(b"\n") else b""
        self.write(start + (REFEREE_PREFIX + text.rstrip("\n") + "\n").encode())

    @property
    def cut(self) -> bool:
        return self._cap.cut

    @property
    def data(self) -> bytes:
        return bytes(self._data)


_CONTROLS: Final = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e"
    "\u2066-\u2069]")


def shown_as_text(text: str) -> str:
    """``text`` with every control character but newline and tab written as an escape
    (``\\x1b``, ``\\u202e``), for a terminal or a page.

    A log is what a bot wrote: raw, an escape sequence would drive its owner's terminal
    (retitle it, rewrite what was printed before, answer back on some terminals), and
    bidirectional overrides would reorder the text on a page.
    """
    return _CONTROLS.sub(_escaped, text)


def _escaped(found: re.Match[str]) -> str:
    code = ord(found.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def split_games(text: str) -> dict[int | None, str]:
    """A log's parts by game (from 0): ``None`` holds what came before the first marker (the
    bot's start-up)."""
    parts: dict[int | None, str] = {}
    last: int | None = None
    position = 0
    for found in _MARKER.finditer(text):
        parts[last] = parts.get(last, "") + text[position:found.start()]
        last = int(found.group(1)) - 1
        position = found.end() + 1
    parts[last] = parts.get(last, "") + text[position:]
    return {k: v for k, v in parts.items() if v.strip()}
