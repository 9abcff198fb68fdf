"""What the bots of ``tacocat play`` print: kept off the terminal, counted, kept per game.

A bot's output never reaches the terminal by default (a chatty bot would bury the summary):
each side's :class:`SideOutput` counts it, keeps its first lines for the summary, and, with
``--logs DIR``, writes it per game to ``DIR/game-NNNNN-A.log`` (or ``-B``; what a bot process
printed before its first game goes to ``DIR/startup-A.log``), each file cut at
:data:`~tacocat.protocol.logs.LOG_CAP` bytes with the arena's notice
(:class:`~tacocat.protocol.logs.LogCap`). ``--show-output`` also copies it to stderr, live,
each line prefixed with its side.

Two sources feed it. A bot in this process (a house bot, or any bot with ``--no-time-limit``)
runs each call with its ``sys.stdout`` and ``sys.stderr`` pointed at that game's output
(:func:`logged`), and an exception it raises is written there with its whole traceback
before it forfeits the game (the summary shows one line). A bot in a host process writes to
its stderr, which the referee drains (:class:`~tacocat.referee.HostProcess`) into
:class:`StreamLog`: the host puts a marker line before the first thing the bot prints in each
game (:mod:`tacocat.protocol.logs`), which says which game's file each line goes to.
"""

from __future__ import annotations

import contextlib
import io
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from tacocat.engine import Bot, Observation, Outcome, Round, Ruleset
from tacocat.protocol.logs import LOG_CAP, REFEREE_PREFIX, CappedLog, LogCap

FIRST_LINES: Final = 3
"""Lines of a bot's output the summary quotes when there is no ``--logs`` folder."""
LINE_CHARS: Final = 160
"""Characters of each quoted line."""

_MARKER: Final = re.compile(rb"^=== game (\d+) ===$")


@dataclass
class Printed:
    """What one side printed (cheap to send between processes)."""

    size: int = 0
    """Bytes, referee notes not included."""
    first: list[str] = field(default_factory=list)
    """Its first :data:`FIRST_LINES` non-blank lines, cut at :data:`LINE_CHARS`."""

    def add(self, other: Printed) -> None:
        """Another run's output after this one's (the runs in schedule order)."""
        self.size += other.size
        self.first.extend(other.first[: FIRST_LINES - len(self.first)])


class SideOutput:
    """One side's output in one run of games: counted, quoted, logged, echoed."""

    def __init__(self, side: str, directory: Path | None, *, echo: bool) -> None:
        self.side = side
        self.directory = directory
        self.echo = echo
        self.printed = Printed()
        self._caps: dict[int | None, LogCap] = {}

    def write(self, game: int | None, data: bytes, *, counted: bool = True) -> None:
        """``data`` printed in ``game`` (``None``: before the first game); ``counted`` False
        for the referee's notes, which are logged but are not the bot's printing."""
        if not data:
            return
        if counted:
            self.printed.size += len(data)
            first = self.printed.first
            if len(first) < FIRST_LINES:
                for line in data.decode("utf-8", "replace").splitlines():
                    if line.strip() and len(first) < FIRST_LINES:
                        first.append(_printable(line)[:LINE_CHARS])
        if self.echo:
            text = data.decode("utf-8", "replace")
            # The real stderr: an in-process bot's sys.stderr is this output itself.
            terminal = sys.__stderr__
            if terminal is not None:
                terminal.write("".join(f"[{self.side}] {line}\n" for line in text.splitlines()))
                terminal.flush()
        if self.directory is not None:
            cap = self._caps.setdefault(game, LogCap(LOG_CAP))
            kept = cap.take(data)
            if kept:
                # Numbered from 1, as the summary, pages and replays number games.
                name = "startup" if game is None else f"game-{game + 1:05d}"
                with (self.directory / f"{name}-{self.side}.log").open("ab") as handle:
                    handle.write(kept)


class StreamLog(CappedLog):
    """A bot process's stderr (:class:`~tacocat.referee.HostProcess` ``log``), line by line
    into its :class:`SideOutput`, following the host's game markers."""

    def __init__(self, output: SideOutput) -> None:
        super().__init__(cap=1)  # keeps nothing itself
        self.output = output
        self.game: int | None = None
        self._partial = b""

    def write(self, data: bytes) -> None:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()
        for line in lines:
            marker = _MARKER.match(line)
            if marker is not None:
                self.game = int(marker.group(1)) - 1
            else:
                self.output.write(self.game, line + b"\n")

    def note(self, text: str) -> None:
        self.flush()
        self.output.write(self.game, (REFEREE_PREFIX + text.rstrip("\n") + "\n").encode(),
                          counted=False)

    def flush(self) -> None:
        """Pass on a last line without its newline (the process ended or was killed)."""
        if self._partial:
            partial, self._partial = self._partial, b""
            self.output.write(self.game, partial + b"\n")


class GameOutput(io.TextIOBase):
    """An in-process bot's ``sys.stdout``/``sys.stderr`` during one game."""

    def __init__(self, output: SideOutput, game: int) -> None:
        self.output = output
        self.game = game

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        self.output.write(self.game, text.encode(errors="replace"))
        return len(text)


class LoggedBot(Bot):
    """``bot`` with everything it prints, and its tracebacks, going to ``log``."""

    def __init__(self, bot: Bot, log: GameOutput) -> None:
        self.bot = bot
        self.log = log

    def _call(self, method: Callable[..., Any], *args: Any) -> Any:
        with contextlib.redirect_stdout(self.log), contextlib.redirect_stderr(self.log):
            try:
                return method(*args)
            except Exception:
                traceback.print_exc(file=self.log)
                raise

    def on_game_start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        self._call(self.bot.on_game_start, seat, ruleset, opponent)

    def replace(self, obs: Observation) -> Sequence[int]:
        result: Sequence[int] = self._call(self.bot.replace, obs)
        return result

    def duel(self, obs: Observation) -> int:
        result: int = self._call(self.bot.duel, obs)
        return result

    def attack(self, obs: Observation) -> Sequence[int]:
        result: Sequence[int] = self._call(self.bot.attack, obs)
        return result

    def defend(self, obs: Observation) -> Sequence[int]:
        result: Sequence[int] = self._call(self.bot.defend, obs)
        return result

    def on_round_end(self, round: Round) -> None:
        self._call(self.bot.on_round_end, round)

    def on_game_end(self, outcome: Outcome, seat: int) -> None:
        self._call(self.bot.on_game_end, outcome, seat)


def logged(factory: Callable[[], Bot], output: SideOutput,
           game: Callable[[], int]) -> Callable[[], Bot]:
    """``factory`` whose bots print to ``output``, each to the game ``game()`` says when it
    is made (the seat makes a bot as its game starts)."""

    def make() -> Bot:
        log = GameOutput(output, game())
        with contextlib.redirect_stdout(log), contextlib.redirect_stderr(log):
            try:
                bot = factory()
            except Exception:
                traceback.print_exc(file=log)
                raise
        return LoggedBot(bot, log)

    return make


def describe_printed(name: str, printed: Printed, logs: Path | None) -> str:
    """The summary's lines about what a bot printed, or ``""`` if it printed nothing."""
    if not printed.size:
        return ""
    head = f"{name} printed {_size(printed.size)}"
    if logs is not None:
        return f"{head}: in {logs}/game-*-{{A,B}}.log (--show-output shows it live)"
    quoted = "".join(f"\n    {line}" for line in printed.first)
    return (f"{head} (--logs DIR keeps it per game, --show-output shows it live); "
            f"it began:{quoted}")


def _size(size: int) -> str:
    for unit, scale in (("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} byte{'s' * (size != 1)}"


def _printable(line: str) -> str:
    """A bot's line made safe for the terminal: control characters shown, not obeyed."""
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in line)
