"""Ending a bot's processes, and the dedicated uid slots bots run as under a root worker.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). RLIMIT_NPROC does
not bind root, so as root a bot runs under an unprivileged uid leased per bot slot, which both
bounds its process count and lets everything it started be found; its cgroups
(:mod:`~tacocat.worker.sandbox._cgroups`) are the other bound.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import SandboxUnavailableError

if TYPE_CHECKING:
    from ._policy import SandboxPolicy


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid exists (a zombie, or another user's, counts): a stale
    cgroup's or match folder's owner that is gone leaves them to be swept."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _running(pids: Iterable[int]) -> list[int]:
    """The given pids that are neither gone nor zombies."""
    found = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if stat[stat.rindex(")") + 2] not in "ZX":
            found.append(pid)
    return found


def _kill_until_gone(list_pids: Callable[[], list[int]], timeout: float) -> list[int]:
    """SIGKILL whatever ``list_pids`` returns until it returns nothing running (or time out)."""
    deadline = time.monotonic() + timeout
    while True:
        pids = _running(list_pids())
        if not pids:
            return []
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if time.monotonic() > deadline:
            return pids
        time.sleep(0.005)


# ---------------------------------------------------------------------------- uid slots


def _uid_pids(uid: int) -> list[int]:
    found = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if os.stat(entry.path).st_uid != uid:
                continue
            status = Path(entry.path, "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("Uid:"):
                if int(line.split()[1]) == uid:  # the real uid
                    found.append(int(entry.name))
                break
    return found


class _SlotLease:
    """An exclusive ``flock`` on one uid slot's lock file; released on close or death."""

    def __init__(self, policy: SandboxPolicy) -> None:
        root = Path("/run/tacocat-sandbox")
        try:
            root.mkdir(mode=0o700, exist_ok=True)
        except OSError:
            root = Path(tempfile.gettempdir()) / "tacocat-sandbox-slots"
            root.mkdir(mode=0o700, exist_ok=True)
        for slot in range(policy.uid_slots):
            fd = os.open(root / f"slot-{slot}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC,
                         0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            self.fd: int | None = fd
            self.slot = slot
            self.uid = policy.uid_base + slot
            # Whatever a dead worker left under this uid is not ours to keep.
            _kill_until_gone(lambda: _uid_pids(self.uid), 5.0)
            return
        raise SandboxUnavailableError(f"all {policy.uid_slots} sandbox uid slots are in use")

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
