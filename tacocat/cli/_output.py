"""Readable terminal output: aligned tables, a progress bar, a follower's reconnections."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO


def plural(count: int, singular: str, many: str | None = None) -> str:
    """``1 match``, ``2 matches``: the count with the word in the right number."""
    return f"{count:,} {singular if count == 1 else many or singular + 's'}"


def table(headers: Sequence[str], rows: Sequence[Sequence[object]], *,
          align: str | None = None) -> str:
    """An aligned text table. ``align`` has one letter per column: ``l`` or ``r``."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    align = align or "l" + "r" * (len(headers) - 1)

    def line(row: Sequence[str]) -> str:
        parts = [c.ljust(w) if a == "l" else c.rjust(w)
                 for c, w, a in zip(row, widths, align, strict=True)]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(r) for r in cells[1:])])


class ProgressBar:
    """A progress bar on a terminal; on anything else, a line every ``every_seconds``."""

    def __init__(self, total: int, label: str, stream: TextIO = sys.stderr,
                 every_seconds: float = 5.0) -> None:
        self.total = max(total, 1)
        self.label = label
        self.stream = stream
        self.tty = stream.isatty()
        self.every = 0.1 if self.tty else every_seconds
        self.start = time.monotonic()
        self.last = self.start if not self.tty else 0.0
        self.done = 0

    def update(self, done: int, note: str = "") -> None:
        self.done = done
        now = time.monotonic()
        if now - self.last < self.every and done < self.total:
            return
        self.last = now
        elapsed = now - self.start
        rate = done / elapsed if elapsed > 0 else 0.0
        eta = (self.total - done) / rate if rate > 0 else 0.0
        share = done / self.total
        text = (f"{self.label} {done}/{self.total} ({share:4.0%}) {rate:,.0f}/s "
                f"eta {eta:4.0f}s {note}").rstrip()
        if self.tty:
            width = 24
            filled = int(share * width)
            bar = "#" * filled + "." * (width - filled)
            self.stream.write(f"\r[{bar}] {text}\033[K")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.tty:
            self.stream.write("\n")
            self.stream.flush()


@dataclass
class SayReconnecting:
    """What a following command (``leaderboard --watch``, ``test``) says on stderr when its
    server goes away and comes back (``reconnect=`` of ``ArenaClient.watch``)."""

    command: str
    address: str
    stream: TextIO = sys.stderr

    def lost(self, error: Exception, delay: float, attempt: int) -> None:
        print(f"{self.command}: lost the server at {self.address} ({error}); reconnecting in "
              f"{delay:g} s (attempt {attempt}; Ctrl-C to stop)", file=self.stream, flush=True)

    def resumed(self) -> None:
        print(f"{self.command}: reconnected to {self.address}", file=self.stream, flush=True)
