"""One bot process's command and its clean-up: :class:`SandboxedCommand`.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model, and builds these
with :func:`~tacocat.worker.sandbox.sandboxed_command` or
:func:`~tacocat.worker.sandbox.unsandboxed_command`). The command outlives the processes it
starts (the referee restarts crashed bots with it), so it, not the process, owns the cgroup,
the uid slot and the seccomp descriptor, and :meth:`SandboxedCommand.close` is what guarantees
that nothing the bot started is left running.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from ._cgroups import cgroup_pids, cpu_usage_file, cpu_usage_ns
from ._confine import _kill_until_gone, _running, _SlotLease, _uid_pids

# Under the public module's name, as before these classes moved here: log filters and alerts
# that match "tacocat.worker.sandbox" keep seeing the sandbox's errors.
log = logging.getLogger("tacocat.worker.sandbox")


@dataclass
class SandboxedCommand:
    """Everything needed to start one bot process, and to clean up after it.

    Pass :meth:`host_process_kwargs` to :class:`tacocat.referee.HostProcess` (or ``argv``,
    ``env``, ``cwd``, ``preexec_fn`` and ``pass_fds`` to :class:`subprocess.Popen`). It can
    be started again after the previous process ended (the referee restarts crashed bots).
    Call :meth:`close` when the bot is done (after the process was killed and reaped):
    it kills anything still running, removes the cgroup and releases the uid slot.
    """

    argv: list[str]
    env: dict[str, str]
    cwd: str
    preexec_fn: Callable[[], None]
    pass_fds: tuple[int, ...]
    sandboxed: bool
    cgroup: Path | None = None
    """The bot's pids cgroup (``pids.max``), if it has one."""
    tree: tuple[Path, ...] = ()
    """The bot tree's cgroups (memory, CPU share and core, CPU time), if it has them: one per
    controller on cgroup v1; on v2 the one cgroup, the same as :attr:`cgroup`."""
    uid: int | None = None
    """The bot's dedicated host uid (``RLIMIT_NPROC`` applies to it), if it has one."""
    _lease: _SlotLease | None = field(default=None, repr=False)
    _closed: bool = field(default=False, repr=False)
    _usage_file: str | None = field(default=None, init=False, repr=False)
    """The tree's CPU counter (v1 ``cpuacct.usage``, v2 ``cpu.stat``), found on the first
    :meth:`cpu_seconds`."""

    def popen_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`subprocess.Popen` (besides the pipes)."""
        return {"args": self.argv, "env": self.env, "cwd": self.cwd,
                "preexec_fn": self.preexec_fn, "pass_fds": self.pass_fds,
                "start_new_session": True}

    def host_process_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :class:`tacocat.referee.HostProcess` (besides the bot name)."""
        return {"command": self.argv, "env": self.env, "cwd": self.cwd,
                "preexec_fn": self.preexec_fn, "popen_kwargs": {"pass_fds": self.pass_fds}}

    @property
    def process_bound(self) -> str:
        """How the process count is bounded: ``"cgroup+nproc"``, ``"cgroup"``, ``"nproc"``
        or ``""`` (none: unsandboxed without a cgroup)."""
        return "+".join(name for name, on in (("cgroup", self.cgroup), ("nproc", self.uid))
                        if on is not None)

    def cpu_seconds(self) -> float | None:
        """CPU time the bot's whole tree used so far (every process and thread), if known."""
        if self._usage_file is None:
            self._usage_file = cpu_usage_file(self.tree)
            if self._usage_file is None:
                return None
        used = cpu_usage_ns(self._usage_file)
        return used / 1e9 if used is not None else None

    def pin(self, cpu: int) -> None:
        """Confine the bot's tree to one core (its cpuset; threads cannot move off it)."""
        for cgroup in self.tree:
            cpus = cgroup / "cpuset.cpus"
            if cpus.exists():
                cpus.write_text(f"{cpu}\n")

    def _cgroups(self) -> list[Path]:
        """Each of the bot's cgroup directories once (on v2 :attr:`cgroup` is in the tree)."""
        return list(dict.fromkeys(c for c in (self.cgroup, *self.tree) if c is not None))

    def _list(self) -> list[int]:
        found: set[int] = set()
        if self.cgroup is not None:
            found.update(cgroup_pids(self.cgroup))
        if self.uid is not None:
            found.update(_uid_pids(self.uid))
        return sorted(found)

    def pids(self) -> list[int]:
        """Host pids of everything running that this command started (its cgroup's
        members, its uid's processes; bwrap's own two root processes are in the cgroup)."""
        return _running(self._list())

    def kill(self, timeout: float = 5.0) -> None:
        """SIGKILL everything this command started and wait until none of it runs.

        With neither a cgroup nor a uid (unsandboxed without a writable cgroup) there is
        nothing to find: the caller's process-group kill is all there is. With a uid only,
        bwrap's two root processes are not found, but they exit as soon as the bot does.
        """
        for cgroup in self._cgroups():
            with contextlib.suppress(OSError):  # v2, kernel 5.14+: the whole tree at once
                (cgroup / "cgroup.kill").write_text("1")
        left = _kill_until_gone(self._list, timeout)
        if left:
            log.error("sandbox: processes %s survived SIGKILL for %.1f s", left, timeout)

    def close(self) -> None:
        """Kill what is left, remove the cgroup, release the uid slot and the seccomp fd."""
        if self._closed:
            return
        self._closed = True
        self.kill()
        for cgroup in self._cgroups():
            for _ in range(100):
                try:
                    cgroup.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)  # a reaped task may take a moment to leave
            else:
                log.warning("sandbox: could not remove %s (left for the next sweep)", cgroup)
        if self._lease is not None:
            self._lease.release()
        for fd in self.pass_fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def __enter__(self) -> SandboxedCommand:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    def __del__(self) -> None:
        # Forgotten without close(): whatever it started must not outlive it.
        if not self._closed:
            with contextlib.suppress(Exception):
                self.close()
