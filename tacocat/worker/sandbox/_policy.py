"""A bot's resource limits: :class:`SandboxPolicy`.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). The policy is
frozen data, checked when it is made, so a bad limit raises in the worker rather than in the
forked child that would apply it; a :class:`~tacocat.worker.launch.Launcher` starts every bot,
sandboxed or not, with the same one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True)
class SandboxPolicy:
    """Resource limits for one bot process (and everything it starts).

    ``cpu_seconds`` is per process and cumulative over its life (a bot process lives for a
    whole match), so it bounds a match's total compute, not a decision: the per-decision
    wall-clock deadline is the referee's. ``address_space`` is ``RLIMIT_AS`` per process;
    ``file_size`` is the largest file it may write; ``tmp_size`` caps its whole ``/tmp``
    (which is memory). ``max_processes`` counts the bot's tasks (processes *and* threads,
    itself included). ``memory_bytes`` bounds the memory of the bot's whole process tree
    (its memory cgroup, swap included), whatever it forks. The frame size cap is the
    referee's (``tacocat.protocol``).

    ``process_bound`` picks how ``max_processes`` is enforced: ``"auto"``: a pids cgroup
    where one can be made, plus (as root) ``RLIMIT_NPROC`` on the slot's dedicated uid;
    ``"cgroup"``: the same, but fail where no cgroup can be made; ``"nproc"``: the uid's
    ``RLIMIT_NPROC`` only (the fallback; root only). As root, bots run as the uids
    ``uid_base`` to ``uid_base + uid_slots - 1``, one per concurrently running bot.
    ``extra_ro_paths`` are more host directories to show read-only at the same path (e.g.
    an unusual Python installation).
    """

    cpu_seconds: int = 600
    address_space: int = 1 << 30
    file_size: int = 8 << 20
    open_files: int = 64
    max_processes: int = 16
    memory_bytes: int = 1 << 30
    tmp_size: int = 32 << 20
    process_bound: Literal["auto", "cgroup", "nproc"] = "auto"
    uid_base: int = 1_600_000_000
    uid_slots: int = 1024
    extra_ro_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for name in ("cpu_seconds", "address_space", "file_size", "open_files",
                     "max_processes", "memory_bytes", "tmp_size", "uid_base", "uid_slots"):
            if getattr(self, name) <= 0:
                raise ValueError(f"SandboxPolicy.{name} must be positive")
        if self.open_files < 16:
            raise ValueError("SandboxPolicy.open_files must be at least 16 (Python needs some)")
        if self.process_bound not in ("auto", "cgroup", "nproc"):
            raise ValueError(f"SandboxPolicy.process_bound {self.process_bound!r}: "
                             "choose 'auto', 'cgroup' or 'nproc'")
        if self.uid_base + self.uid_slots >= 2**32 - 1:
            raise ValueError("SandboxPolicy.uid_base + uid_slots must be below 2**32 - 1")
