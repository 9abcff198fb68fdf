"""Bounding and ending a bot's processes: a pids cgroup per bot, and dedicated uid slots.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). RLIMIT_NPROC does
not bind root, so a bot's process count is bounded by a pids cgroup where the hierarchy is
writable, and by running it under an unprivileged uid leased per bot slot.
"""

from __future__ import annotations

import contextlib
import fcntl
import itertools
import os
import re
import secrets
import signal
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import SandboxUnavailableError

if TYPE_CHECKING:
    from .sandbox import SandboxPolicy

# ---------------------------------------------------------------------------- pids cgroup

_CGROUP_PREFIX = "tacocat"
_SWEEP_EVERY = 60.0  # seconds between sweeps for cgroups of dead workers
_counter = itertools.count()
_lock = threading.Lock()
_last_sweep = 0.0


# The cgroup-v1 controllers that bound a bot's whole process tree, besides ``pids``: its
# memory (RLIMIT_AS is per process, so forked children would each get their own), its CPU
# share and core (children could otherwise spin on every core), and its CPU time, read
# per decision frame by the referee.
TREE_CONTROLLERS = ("memory", "cpu", "cpuacct", "cpuset")
_CFS_PERIOD_US = 100_000
_NAME = re.compile(r"[0-9]+-[0-9]+-[0-9a-f]{6}")
"""A bot's cgroup: ``<worker pid>-<number>-<random>``."""


def _hierarchy(controller: str) -> Path | None:
    """The worker's own cgroup directory in the cgroup-v1 hierarchy of ``controller``."""
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text().splitlines()
        own = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    own_path = next((line.split(":", 2)[2] for line in own
                     if controller in line.split(":", 2)[1].split(",")), None)
    if own_path is None:
        return None
    for line in mountinfo:
        pre, _, post = line.partition(" - ")
        fields, after = pre.split(), post.split()
        if len(fields) < 5 or len(after) < 3 or after[0] != "cgroup":
            continue
        if controller not in after[2].split(","):
            continue
        root, mount_point = fields[3], fields[4]
        rel = own_path[len(root):] if own_path.startswith(root) else own_path
        return Path(mount_point) / rel.lstrip("/")
    return None


def _pids_hierarchy() -> Path | None:
    return _hierarchy("pids")


@lru_cache(maxsize=1)
def _cgroup_base() -> tuple[Path | None, str]:
    """``(directory under which per-bot pids cgroups are made, or None; why not)``."""
    own = _pids_hierarchy()
    if own is None:
        return None, "no cgroup-v1 pids hierarchy is mounted (cgroup v2 is not supported yet)"
    base = own / _CGROUP_PREFIX
    try:
        base.mkdir(exist_ok=True)
        probe = base / f"probe-{os.getpid()}-{secrets.token_hex(4)}"
        probe.mkdir()
        try:
            (probe / "pids.max").write_text("1\n")
        finally:
            probe.rmdir()
    except OSError as exc:
        return None, f"cannot create a pids cgroup under {base}: {exc.strerror or exc}"
    return base, ""


@lru_cache(maxsize=1)
def tree_bases() -> tuple[tuple[Path, ...], str]:
    """``(one base directory per controller of TREE_CONTROLLERS, or (); why not)``.

    Co-mounted controllers (``cpu,cpuacct``) share a directory, listed once.
    """
    bases: list[Path] = []
    for controller in TREE_CONTROLLERS:
        own = _hierarchy(controller)
        if own is None:
            return (), (f"no cgroup-v1 {controller} hierarchy is mounted (cgroup v2 is not "
                        "supported yet)")
        # CPU weight is shared per level: under one "tacocat" group every bot of this worker
        # together would weigh as much as a single other process. Beside the worker instead,
        # each bot weighs as one process, as it did before it had a group.
        base = own if controller == "cpu" else own / _CGROUP_PREFIX
        try:
            base.mkdir(exist_ok=True)
            if controller == "cpuset":
                # A v1 cpuset starts empty and takes no task until it has CPUs and nodes.
                for name in ("cpuset.cpus", "cpuset.mems"):
                    if not (base / name).read_text().strip():
                        (base / name).write_text((own / name).read_text())
        except OSError as exc:
            return (), f"cannot create a {controller} cgroup under {base}: {exc.strerror or exc}"
        if base not in bases:
            bases.append(base)
    return tuple(bases), ""


def _limit_tree(cgroup: Path, policy: SandboxPolicy) -> None:
    """Write the whole-tree bounds into one new cgroup (whichever controller it belongs to)."""
    if (cgroup / "memory.limit_in_bytes").exists():
        (cgroup / "memory.limit_in_bytes").write_text(f"{policy.memory_bytes}\n")
        memsw = cgroup / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # swap accounting on: memory plus swap gets the same bound
            memsw.write_text(f"{policy.memory_bytes}\n")
        with contextlib.suppress(OSError):
            (cgroup / "memory.swappiness").write_text("0\n")
    if (cgroup / "cpu.cfs_quota_us").exists():
        (cgroup / "cpu.cfs_period_us").write_text(f"{_CFS_PERIOD_US}\n")
        (cgroup / "cpu.cfs_quota_us").write_text(f"{_CFS_PERIOD_US}\n")  # one core's share
    if (cgroup / "cpuset.cpus").exists():
        parent = cgroup.parent
        (cgroup / "cpuset.mems").write_text((parent / "cpuset.mems").read_text())
        cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        (cgroup / "cpuset.cpus").write_text(cpus + "\n")


def cpuacct_usage_file(cgroups: Iterable[Path]) -> str | None:
    """The ``cpuacct.usage`` file of the ``cpuacct`` one of ``cgroups``, if there is one."""
    for cgroup in cgroups:
        usage = cgroup / "cpuacct.usage"
        if usage.exists():
            return str(usage)
    return None


def cpuacct_usage_ns(usage_file: str) -> int | None:
    """CPU time (ns) used so far by the tree whose ``cpuacct.usage`` file this is.

    Read once per frame of every match (the referee's background-CPU check), so with bare
    ``os`` calls on a path found once: pathlib's exists/read_text here cost the referee a
    third of a millisecond per game."""
    try:
        fd = os.open(usage_file, os.O_RDONLY)
        try:
            return int(os.read(fd, 64))
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return None


def _sweep_stale_cgroups(base: Path) -> None:
    """Remove leftover per-bot cgroups of workers that died (named ``<worker pid>-...``)."""
    with contextlib.suppress(OSError):
        for child in base.iterdir():
            if not _NAME.fullmatch(child.name):
                continue  # not a bot's: the cpu bases are the worker's own, shared cgroups
            owner = child.name.split("-", 1)[0]
            if not _alive(int(owner)) and child.is_dir():
                with contextlib.suppress(OSError):
                    _kill_cgroup(child, timeout=1.0)
                    child.rmdir()


def _alive(pid: int) -> bool:
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


def _cgroup_pids(cgroup: Path) -> list[int]:
    try:
        return [int(x) for x in (cgroup / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def _kill_cgroup(cgroup: Path, timeout: float = 5.0) -> list[int]:
    return _kill_until_gone(lambda: _cgroup_pids(cgroup), timeout)


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

def _make_cgroup(policy: SandboxPolicy, extra: int, *, pids: bool = True,
                 tree: bool = True) -> tuple[Path | None, tuple[Path, ...]]:
    """A bot's cgroups: ``(the pids one, or None; one per whole-tree controller, or ())``.

    Raises :class:`SandboxUnavailableError` naming what is missing: a bot tree without a
    memory and CPU bound is refused, never run silently unbounded.
    """
    global _last_sweep
    base: Path | None = None
    if pids:
        base, why = _cgroup_base()
        if base is None:
            raise SandboxUnavailableError(why)
    bases: tuple[Path, ...] = ()
    if tree:
        bases, why = tree_bases()
        if not bases:
            raise SandboxUnavailableError(why)
    everywhere = ((base,) if base is not None else ()) + bases
    with _lock:
        number = next(_counter)
        sweep = time.monotonic() - _last_sweep > _SWEEP_EVERY
        if sweep:
            _last_sweep = time.monotonic()
    if sweep:
        for each in everywhere:
            _sweep_stale_cgroups(each)
    name = f"{os.getpid()}-{number}-{secrets.token_hex(3)}"
    made: list[Path] = []
    try:
        for each in everywhere:
            cgroup = each / name
            cgroup.mkdir()
            made.append(cgroup)
            if each is base:
                (cgroup / "pids.max").write_text(f"{policy.max_processes + extra}\n")
            else:
                _limit_tree(cgroup, policy)
    except OSError as exc:
        for cgroup in made:
            with contextlib.suppress(OSError):
                cgroup.rmdir()
        raise SandboxUnavailableError(f"cannot set up the bot's cgroups: {exc}") from exc
    return (made[0] if base is not None else None), tuple(made[1 if base is not None else 0:])
