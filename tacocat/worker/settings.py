"""A worker's settings: one frozen value, passed to each worker process as JSON."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from typing import Any, Final

from tacocat.arena import DEFAULT_PREFIX
from tacocat.engine import DEFAULT_TIME_LIMIT
from tacocat.protocol import MAX_BATCH
from tacocat.referee import BANK_LIMITS_PER_GAME, DEFAULT_BATCH, DEFAULT_MAX_STRIKES

from .launch import PINNINGS
from .queue import DEFAULT_JOB_TIMEOUT, DEFAULT_LEASE, MATCH_QUEUE, SMOKE_QUEUE
from .sandbox import SandboxPolicy

MIB: Final = 1024 * 1024
TREE_HEADROOM_MB: Final = 256
"""The bot tree's memory bound is one process's address space plus this (the interpreter's
pages, bwrap, page cache): a lone process meets its own limit first, a clean MemoryError,
while forked children share the one bound."""


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker runs jobs. The defaults are production's; tests shorten the times."""

    prefix: str = DEFAULT_PREFIX
    """The arena's Redis key prefix."""
    match_queue: str = MATCH_QUEUE
    smoke_queue: str = SMOKE_QUEUE
    sandbox: bool = True
    """False: submitted bots run without the sandbox (``--insecure-no-sandbox``)."""
    trusted_owners: tuple[str, ...] = ()
    """Users whose bots are the operator's own code: they run outside the sandbox, with its
    limits, as house bots do (``--trust-owner``; ``tacocat up`` on a host without a sandbox)."""
    sandbox_problem: str = ""
    """Why this host cannot sandbox submitted bots (``tacocat worker --check``'s summary);
    empty when it can. Such a worker plays only the trusted owners' bots."""
    pinning: str = "all"
    """``all``, ``bots`` or ``none``: see :data:`tacocat.worker.launch.Pinning`."""
    max_strikes: int = DEFAULT_MAX_STRIKES
    """Costly faults in a row (timeouts, crashes of the process) after which a bot gives up
    a match: it forfeits the rest (:mod:`tacocat.referee`'s fault policy)."""
    bank_limits_per_game: float = BANK_LIMITS_PER_GAME
    """Each side's time bank for a match, in decision limits per game (the referee's fault
    policy: a side past it forfeits the rest on time); match job timeouts derive from it."""
    batch: int = DEFAULT_BATCH
    """Games of a match played at once (lockstep), unless the ladder says otherwise."""
    startup_timeout: float = 10.0
    """Seconds a bot process has to say Hello."""
    lease: float = DEFAULT_LEASE
    """Seconds a running match's lease lasts without renewal (orphan detection time)."""
    job_timeout: int = DEFAULT_JOB_TIMEOUT
    stall_margin: float = 30.0
    """Seconds beyond a match step's worst case that its work horse may go without progress
    before its worker kills it as stalled (:mod:`tacocat.worker.progress`)."""
    smoke_games: int = 2
    """Games of a smoke test (a duplicate pair: the new version plays both seats)."""
    smoke_decision_seconds: float = DEFAULT_TIME_LIMIT
    smoke_opponent: str = "random"
    """The house bot a new version must play cleanly against."""
    keep_replays: bool = True
    bot_cpu_seconds: int = 600
    """CPU seconds per bot process, over its whole match (RLIMIT_CPU)."""
    bot_memory_mb: int = 1024
    """Address space per bot process (RLIMIT_AS): a hog gets MemoryError."""
    bot_file_mb: int = 8
    bot_open_files: int = 64
    bot_processes: int = 16
    """Tasks (processes and threads) a bot may have at once."""
    build_seconds: float = 120.0
    """Wall-clock time of one bot build (a version with a ``build`` in its bot.toml, built
    once, at its smoke test)."""
    build_mb: int = 16
    """The size of a built bot's folder, sources and what the build made."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "trusted_owners", tuple(self.trusted_owners))  # from JSON
        if self.pinning not in PINNINGS:
            raise ValueError(f"pinning must be one of {', '.join(PINNINGS)}, "
                             f"got {self.pinning!r}")
        if self.smoke_games < 2 or self.smoke_games % 2:
            raise ValueError(f"smoke_games must be even and >= 2, got {self.smoke_games}")
        for name in ("lease", "startup_timeout", "smoke_decision_seconds", "stall_margin",
                     "build_seconds", "build_mb"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)!r}")
        if self.lease < 3:
            raise ValueError(f"lease must be at least 3 seconds, got {self.lease}")
        if self.bank_limits_per_game <= 0:
            raise ValueError("bank_limits_per_game must be positive, got "
                             f"{self.bank_limits_per_game}")
        if self.max_strikes < 1:
            raise ValueError(f"max_strikes must be >= 1, got {self.max_strikes}")
        if not 1 <= self.batch <= MAX_BATCH:
            raise ValueError(f"batch must be from 1 to {MAX_BATCH}, got {self.batch}")

    def sandbox_policy(self) -> SandboxPolicy:
        return SandboxPolicy(
            cpu_seconds=self.bot_cpu_seconds, address_space=self.bot_memory_mb * MIB,
            memory_bytes=(self.bot_memory_mb + TREE_HEADROOM_MB) * MIB,
            file_size=self.bot_file_mb * MIB, open_files=self.bot_open_files,
            max_processes=self.bot_processes,
        )

    @property
    def monitor_interval(self) -> int:
        """How often (whole seconds, RQ's unit) a worker renews its running job's lease:
        three times per lease, so one late renewal never loses it."""
        return max(1, int(self.lease / 3))

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> WorkerSettings:
        data: dict[str, Any] = json.loads(text)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown worker settings: {', '.join(unknown)}")
        return cls(**data)
