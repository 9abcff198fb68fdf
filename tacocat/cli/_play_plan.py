"""What ``tacocat play`` plays: :class:`MatchPlan`, the match as every process of
``--jobs`` needs it (the seats of :mod:`._play_seats` are made from it)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tacocat.engine import Bot, Ruleset

if TYPE_CHECKING:
    from tacocat.worker.launch import Launcher


@dataclass(frozen=True)
class MatchPlan:
    """What every process needs to play its part of a match."""

    bots: tuple[Callable[[], Bot], Callable[[], Bot]]
    """What makes each side's bot, for a side played in this process."""
    specs: tuple[str, str]
    """Each side as given (``house:NAME`` or ``path/to/bot.py[:Class]``): what a bot
    process is started with."""
    names: tuple[str, str]
    seed: str
    rules: Ruleset
    batch: int
    time_limit: float | None
    logs: Path | None = None
    """Where each game's bot output goes (``--logs``), if anywhere."""
    keep_records: bool = False
    """Whether the games' replay records are wanted (``--replay``)."""
    launcher: Launcher | None = None
    """The worker's launcher, sandbox and limits (``--sandbox``); ``None``: plain processes."""
    show_output: bool = False
    """Copy what the bots print to stderr as they print it (``--show-output``)."""
    commands: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    """Each side's process argv from its manifest (a bot in another language, its folder in
    ``specs``); empty for Python and house bots."""
