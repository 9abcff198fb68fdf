"""A bot's cgroups on either cgroup version: where they are made, their bounds, their CPU use.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). Every bot gets
cgroups that bound its *whole* process tree, whatever it forks: its memory (swap included),
one core's CPU share, its core (cpuset), its task count, and a CPU counter the referee reads
per decision frame. Where they live depends on the host:

- **cgroup v1** (and the *hybrid* layout, v1 controllers beside an empty v2 mount): one
  directory per controller hierarchy, ``<the worker's own cgroup>/tacocat/<bot>`` (the
  ``cpu`` one beside the worker instead, so each bot weighs as one process). Needs root.
- **cgroup v2** (the unified hierarchy alone: Debian 12, Ubuntu 22.04+, Fedora, RHEL 9, the
  Docker and Kubernetes nodes built on them): one directory per bot,
  ``<the worker's own cgroup>/<bot>``, with ``memory.max``, ``memory.swap.max`` 0,
  ``cpu.max``, ``cpuset.cpus``, ``pids.max``; CPU use from ``cpu.stat``; ``cgroup.kill`` ends
  it. v2 allows no processes in a cgroup whose controllers are enabled for its children, so
  the worker first moves every process of its own cgroup into the leaf
  ``tacocat-workers`` and enables the controllers in ``cgroup.subtree_control``; bots are
  sibling leaves. That needs write access to the worker's own cgroup only, which root has
  and which a non-root service gets by *delegation* (systemd ``Delegate=yes``, a container
  with its own cgroup namespace and a writable cgroup mount): no other privilege.

Nothing here decides whether to sandbox; :func:`cgroup_report` says what this host gives,
for ``tacocat worker --check``.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import secrets
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Final, Literal

from ..errors import SandboxUnavailableError
from ._confine import _kill_until_gone, pid_alive

if TYPE_CHECKING:
    from ._policy import SandboxPolicy

CgroupMode = Literal["v1", "hybrid", "v2", "none"]

_CGROUP_PREFIX: Final = "tacocat"
WORKERS_LEAF: Final = "tacocat-workers"
"""cgroup v2: the leaf the worker's own processes move to, beside its bots' cgroups."""
V1_TREE_CONTROLLERS: Final = ("memory", "cpu", "cpuacct", "cpuset")
"""The cgroup-v1 controllers that bound a bot's whole process tree, besides ``pids``."""
V2_CONTROLLERS: Final = ("cpu", "cpuset", "memory", "pids")
"""The cgroup-v2 controllers a bot's cgroup needs (``cpu`` also counts its CPU time)."""
_CFS_PERIOD_US: Final = 100_000
_SWEEP_EVERY: Final = 60.0  # seconds between sweeps for cgroups of dead workers

_counter = itertools.count()
_lock = threading.Lock()
_last_sweep = 0.0


# ---------------------------------------------------------------------------- the host


def _mounts() -> list[tuple[str, str, str, str]]:
    """``(fstype, root, mount point, super options)`` of every cgroup mount."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    found = []
    for line in lines:
        pre, _, post = line.partition(" - ")
        fields, after = pre.split(), post.split()
        if len(fields) >= 5 and len(after) >= 3 and after[0] in ("cgroup", "cgroup2"):
            found.append((after[0], fields[3], fields[4], after[2]))
    return found


def _own_paths() -> dict[str, str]:
    """The worker's cgroup path per v1 controller, and ``""`` for the v2 hierarchy."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    paths: dict[str, str] = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller.removeprefix("name=")] = path
    return paths


def _under(mount_point: str, root: str, own: str) -> Path:
    rel = own[len(root):] if root != "/" and own.startswith(root) else own
    return Path(mount_point) / rel.lstrip("/")


def _v1_hierarchy(controller: str) -> Path | None:
    """The worker's own cgroup directory in the cgroup-v1 hierarchy of ``controller``."""
    own = _own_paths().get(controller)
    if own is None:
        return None
    for fstype, root, mount_point, options in _mounts():
        if fstype == "cgroup" and controller in options.split(","):
            return _under(mount_point, root, own)
    return None


def _v2_own() -> Path | None:
    """The worker's own cgroup directory in the unified (v2) hierarchy, if one is mounted."""
    own = _own_paths().get("")
    if own is None:
        return None
    for fstype, root, mount_point, _ in _mounts():
        if fstype == "cgroup2":
            return _under(mount_point, root, own)
    return None


@lru_cache(maxsize=1)
def cgroup_mode() -> CgroupMode:
    """Which cgroup layout this host has: ``v1``, ``hybrid`` (v1 controllers and a v2 mount
    beside them: used as v1), ``v2`` (unified alone) or ``none``."""
    kinds = {fstype for fstype, *_ in _mounts()}
    if _v1_hierarchy("memory") is not None:
        return "hybrid" if "cgroup2" in kinds else "v1"
    if "cgroup2" in kinds:
        return "v2"
    return "none"


def _uses_v2() -> bool:
    return cgroup_mode() == "v2"


# ---------------------------------------------------------------------------- cgroup v2


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _move_processes(source: Path, leaf: Path) -> None:
    """Move every process of ``source`` into ``leaf`` (one write per process: the kernel
    takes one pid per write)."""
    for pid in _read(source / "cgroup.procs").split():
        with contextlib.suppress(ProcessLookupError):  # it exited meanwhile
            fd = os.open(leaf / "cgroup.procs", os.O_WRONLY)
            try:
                os.write(fd, pid.encode())
            finally:
                os.close(fd)


def _enable_v2_controllers(own: Path) -> None:
    """Enable :data:`V2_CONTROLLERS` for ``own``'s children, moving ``own``'s processes into
    :data:`WORKERS_LEAF` first where the no-internal-process rule asks for it."""
    wanted = [c for c in V2_CONTROLLERS if c not in _read(own / "cgroup.subtree_control").split()]
    if not wanted:
        return
    control = " ".join(f"+{c}" for c in wanted)
    for attempt in range(20):
        try:
            (own / "cgroup.subtree_control").write_text(control)
            return
        except OSError as exc:
            # EBUSY: processes in ``own`` (not the hierarchy's root, which is exempt). A
            # process forked meanwhile lands in ``own`` again, hence the loop.
            if exc.errno != 16 or attempt == 19:
                raise
        leaf = own / WORKERS_LEAF
        leaf.mkdir(exist_ok=True)
        _move_processes(own, leaf)


@lru_cache(maxsize=1)
def _v2_base() -> tuple[Path | None, str]:
    """``(the cgroup-v2 directory bots' cgroups are made in, or None; why not)``."""
    own = _v2_own()
    if own is None:
        return None, "no cgroup2 hierarchy is mounted"
    if own.name == WORKERS_LEAF:  # a process started after another one moved it there
        own = own.parent
    have = _read(own / "cgroup.controllers").split()
    missing = [c for c in V2_CONTROLLERS if c not in have]
    if missing:
        return None, (f"the cgroup-v2 controllers {', '.join(missing)} are not available in "
                      f"the worker's cgroup {own} (the parent must enable them for it: "
                      "delegate them, see docs/SECURITY.md)")
    try:
        _enable_v2_controllers(own)
        _probe(own, pids=True)
    except OSError as exc:
        return None, (f"cannot manage the worker's cgroup {own}: {exc.strerror or exc} (it "
                      "must be delegated to this user: root, systemd Delegate=yes, or a "
                      "container with its own cgroup namespace and a writable /sys/fs/cgroup)")
    return own, ""


def _probe(base: Path, *, pids: bool) -> None:
    probe = base / f"probe-{os.getpid()}-{secrets.token_hex(4)}"
    probe.mkdir()
    try:
        if pids:
            (probe / "pids.max").write_text("1\n")
    finally:
        probe.rmdir()


# ---------------------------------------------------------------------------- bases


@lru_cache(maxsize=1)
def pids_base() -> tuple[Path | None, str]:
    """``(directory under which per-bot pids cgroups are made, or None; why not)``."""
    if _uses_v2():
        return _v2_base()
    own = _v1_hierarchy("pids")
    if own is None:
        return None, ("no pids cgroup: neither a cgroup-v1 pids hierarchy nor a cgroup2 "
                      "hierarchy is mounted")
    base = own / _CGROUP_PREFIX
    try:
        base.mkdir(exist_ok=True)
        _probe(base, pids=True)
    except OSError as exc:
        return None, f"cannot create a pids cgroup under {base}: {exc.strerror or exc}"
    return base, ""


@lru_cache(maxsize=1)
def tree_bases() -> tuple[tuple[Path, ...], str]:
    """``(the directories the whole-tree cgroups are made in, or (); why not)``: on v1 one
    per controller of :data:`V1_TREE_CONTROLLERS` (co-mounted ones listed once), on v2 the
    one directory that also holds the pids bound."""
    if _uses_v2():
        base, why = _v2_base()
        return ((base,) if base is not None else ()), why
    bases: list[Path] = []
    for controller in V1_TREE_CONTROLLERS:
        own = _v1_hierarchy(controller)
        if own is None:
            return (), (f"no cgroup-v1 {controller} hierarchy and no cgroup2 hierarchy is "
                        "mounted")
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


# ---------------------------------------------------------------------------- one bot


def _limit_tree(cgroup: Path, policy: SandboxPolicy) -> None:
    """Write the whole-tree bounds into one new cgroup (whichever controllers it has)."""
    if (cgroup / "memory.max").exists():  # v2
        (cgroup / "memory.max").write_text(f"{policy.memory_bytes}\n")
        if (cgroup / "memory.swap.max").exists():  # swap accounting on: no swap at all
            (cgroup / "memory.swap.max").write_text("0\n")
    elif (cgroup / "memory.limit_in_bytes").exists():  # v1
        (cgroup / "memory.limit_in_bytes").write_text(f"{policy.memory_bytes}\n")
        memsw = cgroup / "memory.memsw.limit_in_bytes"
        if memsw.exists():  # swap accounting on: memory plus swap gets the same bound
            memsw.write_text(f"{policy.memory_bytes}\n")
        with contextlib.suppress(OSError):
            (cgroup / "memory.swappiness").write_text("0\n")
    if (cgroup / "cpu.max").exists():  # v2: one core's share
        (cgroup / "cpu.max").write_text(f"{_CFS_PERIOD_US} {_CFS_PERIOD_US}\n")
    elif (cgroup / "cpu.cfs_quota_us").exists():
        (cgroup / "cpu.cfs_period_us").write_text(f"{_CFS_PERIOD_US}\n")
        (cgroup / "cpu.cfs_quota_us").write_text(f"{_CFS_PERIOD_US}\n")
    if (cgroup / "cpuset.cpus").exists():
        if (cgroup / "cpuset.mems").exists() and not _uses_v2():
            # v1 starts empty; v2's empty value means "the parent's", which is what we want.
            (cgroup / "cpuset.mems").write_text((cgroup.parent / "cpuset.mems").read_text())
        cpus = ",".join(map(str, sorted(os.sched_getaffinity(0))))
        (cgroup / "cpuset.cpus").write_text(cpus + "\n")


def make_cgroups(policy: SandboxPolicy, extra: int, *, pids: bool = True,
                 tree: bool = True) -> tuple[Path | None, tuple[Path, ...]]:
    """A bot's cgroups: ``(the pids one, or None; the whole-tree ones, or ())``. On cgroup
    v2 both are the one directory.

    Raises :class:`SandboxUnavailableError` naming what is missing: a bot tree without a
    memory and CPU bound is refused, never run silently unbounded.
    """
    global _last_sweep
    base: Path | None = None
    if pids:
        base, why = pids_base()
        if base is None:
            raise SandboxUnavailableError(why)
    bases: tuple[Path, ...] = ()
    if tree:
        bases, why = tree_bases()
        if not bases:
            raise SandboxUnavailableError(why)
    everywhere = list(dict.fromkeys(((base,) if base is not None else ()) + bases))
    with _lock:
        number = next(_counter)
        sweep = time.monotonic() - _last_sweep > _SWEEP_EVERY
        if sweep:
            _last_sweep = time.monotonic()
    if sweep:
        for each in everywhere:
            sweep_stale_cgroups(each)
    name = f"{os.getpid()}-{number}-{secrets.token_hex(3)}"
    made: list[Path] = []
    try:
        for each in everywhere:
            cgroup = each / name
            cgroup.mkdir()
            made.append(cgroup)
            if each == base:
                (cgroup / "pids.max").write_text(f"{policy.max_processes + extra}\n")
            if each in bases:
                _limit_tree(cgroup, policy)
    except OSError as exc:
        for cgroup in made:
            with contextlib.suppress(OSError):
                cgroup.rmdir()
        raise SandboxUnavailableError(f"cannot set up the bot's cgroups: {exc}") from exc
    pids_cgroup = made[0] if base is not None else None
    return pids_cgroup, tuple(made[everywhere.index(b)] for b in bases)


def cpu_usage_file(cgroups: Iterable[Path]) -> str | None:
    """The file that counts the CPU time of the tree these cgroups bound, if there is one:
    v1's ``cpuacct.usage`` (ns), v2's ``cpu.stat`` (``usage_usec``)."""
    cgroups = list(cgroups)
    # v1's cpu controller has a cpu.stat too, without the usage: cpuacct's counter first.
    for name in ("cpuacct.usage", "cpu.stat" if _uses_v2() else ""):
        for cgroup in cgroups:
            if name and (cgroup / name).exists():
                return str(cgroup / name)
    return None


def cpu_usage_ns(usage_file: str) -> int | None:
    """CPU time (ns) used so far by the tree whose counter :func:`cpu_usage_file` found.

    Read once per frame of every match (the referee's background-CPU check), so with bare
    ``os`` calls on a path found once: pathlib's exists/read_text here cost the referee a
    third of a millisecond per game."""
    try:
        fd = os.open(usage_file, os.O_RDONLY)
        try:
            data = os.read(fd, 256)
        finally:
            os.close(fd)
        if data.startswith(b"usage_usec "):  # v2's cpu.stat: its first line
            return int(data[11:data.index(b"\n")]) * 1000
        return int(data)
    except (OSError, ValueError):
        return None


def cgroup_pids(cgroup: Path) -> list[int]:
    try:
        return [int(x) for x in (cgroup / "cgroup.procs").read_text().split()]
    except (OSError, ValueError):
        return []


def kill_cgroup(cgroup: Path, timeout: float = 5.0) -> list[int]:
    """SIGKILL everything in ``cgroup`` (v2's ``cgroup.kill`` at once where the kernel has
    it, 5.14+) and wait until none of it runs; returns what survived."""
    with contextlib.suppress(OSError):
        (cgroup / "cgroup.kill").write_text("1")
    return _kill_until_gone(lambda: cgroup_pids(cgroup), timeout)


def sweep_stale_cgroups(base: Path) -> None:
    """Remove leftover per-bot cgroups of workers that died (named ``<worker pid>-...``)."""
    with contextlib.suppress(OSError):
        for child in base.iterdir():
            owner, _, rest = child.name.partition("-")
            if not (owner.isdigit() and rest and child.is_dir()):
                continue  # not a bot's: the worker's own groups, the workers leaf
            if not pid_alive(int(owner)):
                with contextlib.suppress(OSError):
                    kill_cgroup(child, timeout=1.0)
                    child.rmdir()


# ---------------------------------------------------------------------------- report


@dataclass(frozen=True)
class CgroupReport:
    """What this host's cgroups give the sandbox (for ``tacocat worker --check``)."""

    mode: CgroupMode
    own: str
    """The worker's own cgroup (the v2 directory, or v1's memory one)."""
    controllers: tuple[tuple[str, bool, str], ...]
    """``(controller, usable, why not)`` for each controller a bot's cgroups need."""
    delegated: bool
    """Whether this process may make and manage its bots' cgroups (root or delegation)."""
    problem: str


def cgroup_report() -> CgroupReport:
    mode = cgroup_mode()
    if mode == "v2":
        own = _v2_own()
        base, why = _v2_base()
        have = set(_read(own / "cgroup.controllers").split()) if own else set()
        enabled = set(_read(base / "cgroup.subtree_control").split()) if base else set()
        rows = tuple((c, c in enabled, "" if c in enabled else
                      ("not delegated to this cgroup" if c not in have
                       else "not enabled in cgroup.subtree_control")) for c in V2_CONTROLLERS)
        return CgroupReport(mode, str(base or own or ""), rows, base is not None, why)
    if mode in ("v1", "hybrid"):
        pbase, pwhy = pids_base()
        tbases, twhy = tree_bases()
        rows_v1 = [("pids", pbase is not None, pwhy)]
        for controller in V1_TREE_CONTROLLERS:
            mounted = _v1_hierarchy(controller) is not None
            rows_v1.append((controller, mounted and bool(tbases),
                            twhy if mounted else "no cgroup-v1 hierarchy is mounted"))
        problem = "; ".join(w for w in (pwhy, twhy) if w)
        own = _v1_hierarchy("memory")
        return CgroupReport(mode, str(own or ""), tuple(rows_v1),
                            pbase is not None and bool(tbases), problem)
    return CgroupReport(mode, "", tuple((c, False, "no cgroup hierarchy is mounted")
                                        for c in V2_CONTROLLERS), False,
                        "no cgroup hierarchy is mounted (mount cgroup2 on /sys/fs/cgroup)")
