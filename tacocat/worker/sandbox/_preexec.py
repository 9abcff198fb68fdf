"""What runs in a bot's child process between fork and exec: cgroup, rlimits, parent death.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). The hook runs in
the forked child of a worker that may have threads, so everything it needs (paths, limits) is
worked out in the parent and the child does little but system calls. The rlimits set here are
inherited by bwrap and by everything below it, which is why they hold whatever else fails.
"""

from __future__ import annotations

import ctypes
import os
import resource
import signal
from collections.abc import Callable, Sequence
from pathlib import Path

from ._policy import SandboxPolicy

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl
_prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                   ctypes.c_ulong]
_prctl.restype = ctypes.c_int


def _make_preexec(policy: SandboxPolicy, *, cgroups: Sequence[Path], nproc: int | None,
                  seccomp_fd: int | None) -> Callable[[], None]:
    """What runs in the child between fork and exec (of bwrap, or of Python unsandboxed).

    Order matters: join the cgroup first (everything after is counted), then rlimits, then
    the parent-death signal last (a credential change would clear it) with a check that
    the parent did not die before it was armed (the signal is tied to the forking *thread*:
    start bots from a thread that lives as long as they should). The seccomp fd is reopened
    so each start (the referee restarts crashed bots with the same command) reads the
    program from its beginning through its own file offset.
    """
    procs = [str(cgroup / "cgroup.procs") for cgroup in cgroups]
    limits = [
        (resource.RLIMIT_CPU, (policy.cpu_seconds, policy.cpu_seconds + 1)),
        (resource.RLIMIT_AS, (policy.address_space, policy.address_space)),
        (resource.RLIMIT_FSIZE, (policy.file_size, policy.file_size)),
        (resource.RLIMIT_NOFILE, (policy.open_files, policy.open_files)),
        (resource.RLIMIT_CORE, (0, 0)),
    ]
    if nproc is not None:
        limits.append((resource.RLIMIT_NPROC, (nproc, nproc)))
    proc_fd = f"/proc/self/fd/{seccomp_fd}" if seccomp_fd is not None else None

    def preexec() -> None:
        try:
            setup()
        except BaseException as exc:
            # subprocess only reports "Exception occurred in preexec_fn": say which, on the
            # child's stderr, before the exception ends the child.
            os.write(2, f"tacocat sandbox: preexec failed: {exc!r}\n".encode())
            raise

    def setup() -> None:
        parent = os.getppid()
        for path in procs:  # the pids cgroup and the whole-tree ones (memory, CPU, core)
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, str(os.getpid()).encode())
            finally:
                os.close(fd)
        # Descriptors before rlimits: in a parent with many open files the fresh descriptor
        # (and the seccomp one) can lie above RLIMIT_NOFILE, which would refuse them.
        if proc_fd is not None and seccomp_fd is not None:
            fresh = os.open(proc_fd, os.O_RDONLY)
            os.dup2(fresh, seccomp_fd)
            os.close(fresh)
        for which, values in limits:
            resource.setrlimit(which, values)
        _prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec
