"""What a job needs to play stored versions: its worker process's :class:`JobContext`,
the sandboxed play of two stored versions (:func:`play_versions`, for ladder and trial
matches alike) and what a match job reports (:class:`MatchReport`).

The ladder's jobs (:mod:`tacocat.worker.jobs`) and a trial's (:mod:`tacocat.worker.trial_jobs`)
both build on this module, which imports neither.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tacocat.arena import Arena, unpack
from tacocat.engine import MatchGame, Ruleset, ScheduledGame
from tacocat.protocol import MAX_BATCH

from . import progress
from ._folders import match_folder
from .bounds import stall_seconds
from .errors import SandboxUnavailableError
from .launch import BotSpec, Launcher
from .match import MatchPlayer, PlayedMatch
from .settings import WorkerSettings

if TYPE_CHECKING:
    from .metrics import WorkerMetrics


@dataclass(frozen=True)
class JobContext:
    """What a job needs from its worker process."""

    settings: WorkerSettings = field(default_factory=WorkerSettings)
    launcher: Launcher = field(default_factory=Launcher)
    worker: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    metrics: WorkerMetrics | None = None
    """Where decision and refit times go (None: not measured)."""


_context = JobContext()


def configure(context: JobContext) -> None:
    """Set this process's job context (the worker process does, before its first job)."""
    global _context
    _context = context


def context() -> JobContext:
    return _context



@dataclass
class MatchReport:
    """What one match job did (its RQ return value, as JSON)."""

    match: str
    outcome: str
    """``recorded``, ``duplicate`` (another run recorded it first) or ``skipped``."""
    detail: str = ""
    games: int = 0
    seconds: float = 0.0
    game_seconds: float = 0.0
    bot_start_seconds: float = 0.0
    record_seconds: float = 0.0
    wins: int = 0
    ties: int = 0
    losses: int = 0
    forfeits: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v)
                for k, v in self.__dict__.items()}


def play_versions(arena: Arena, ctx: JobContext, a: str, b: str,
                  schedule: Sequence[ScheduledGame], rules: Ruleset, time_limit: float,
                  batch: int, on_game: Callable[[MatchGame], None] | None = None,
                  on_progress: Callable[[], None] | None = None) -> PlayedMatch:
    """Play ``schedule`` between the stored versions ``a`` and ``b``, each unpacked into a
    private folder and sandboxed (ladder and trial matches alike). ``on_game`` gets each
    game as it ends, ``on_progress`` is called after every decision answered (or failed)."""
    settings = ctx.settings
    timed = _decision_hook(ctx.metrics.observe_decision if ctx.metrics is not None else None,
                           on_progress)
    batch = min(batch or settings.batch, MAX_BATCH)
    progress.expect(stall_seconds(time_limit, batch=batch, startup_timeout=settings.startup_timeout,
                                  margin=settings.stall_margin))
    with match_folder() as folder:
        bots = [unpack_version(arena, version, Path(folder) / side, ctx)
                for version, side in ((a, "a"), (b, "b"))]
        with MatchPlayer(ctx.launcher, bots[0], bots[1], rules, time_limit=time_limit,
                         max_strikes=settings.max_strikes,
                         bank_limits_per_game=settings.bank_limits_per_game,
                         batch=batch,
                         startup_timeout=settings.startup_timeout,
                         on_decision=timed) as player:
            return player.play(schedule, on_game=on_game)


def _decision_hook(timed: Callable[[float], None] | None,
                   on_progress: Callable[[], None] | None) -> Callable[[float], None]:
    """The seats' per-decision callback: the metrics' timer, the horse's beat for its
    worker (:mod:`tacocat.worker.progress`), then ``on_progress``."""
    beat = progress.beat

    def hook(seconds: float) -> None:
        if timed is not None:
            timed(seconds)
        beat()
        if on_progress is not None:
            on_progress()

    return hook


def unpack_version(arena: Arena, version_id: str, folder: Path, ctx: JobContext) -> BotSpec:
    """Write a version's upload into ``folder`` (readable by the sandbox's own uid: the
    parent temporary folder stays private to the worker). A trusted owner's bot (the
    operator's own code, ``WorkerSettings.trusted_owners``) runs outside the sandbox."""
    folder.mkdir(mode=0o755)
    version = arena.get_version(version_id)
    trusted = version.owner in ctx.settings.trusted_owners
    if not trusted and ctx.settings.sandbox and ctx.settings.sandbox_problem:
        # The host's fault, not the bot's: the job fails (nothing recorded, nobody blamed)
        # and the match or smoke test waits for a worker that can sandbox it.
        raise SandboxUnavailableError(
            f"{version_id} not started: this worker cannot sandbox submitted bots "
            f"({ctx.settings.sandbox_problem}); it waits for a worker that can")
    unpack(version.kind, arena.version_source(version_id), folder)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    folder.chmod(0o755)
    return BotSpec(version_id, folder, trusted=trusted)
