"""The command lines a bot process starts with, inside bubblewrap or not, and whether the
sandbox works on this host at all.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model and the layers):
this module puts the parts together into one command (:func:`sandboxed_command`: namespaces,
mounts, seccomp, the uid drop, the fork-to-exec hook; :func:`unsandboxed_command`: the limits
alone) and probes once per process whether it can (:func:`sandbox_status`).
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from ..errors import SandboxUnavailableError
from ._cgroups import cgroup_mode, make_cgroups, pids_base, tree_bases
from ._command import SandboxedCommand
from ._confine import _SlotLease
from ._mounts import (
    BOT_DIR,
    Mounts,
    _check_argv,
    _clean_env,
    _mount_args,
    _pythonpath,
    rewinding,
)
from ._policy import SandboxPolicy
from ._preexec import _make_preexec
from ._seccomp import ABIS as _ABIS
from ._seccomp import seccomp_program

# The package's name, not the module's: what a worker's logging configuration names.
log = logging.getLogger("tacocat.worker.sandbox")

SANDBOX_UID = 65534
"""The bot's uid (and gid) inside the user namespace when the worker is not root."""
BWRAP_PROCESSES = 2
"""Tasks bwrap itself keeps in the bot's pids cgroup: the outer monitor and the namespace's
init (reaper); ``pids.max`` is ``max_processes`` plus these."""


INSECURE_WARNING = (
    "\n" + "!" * 78 + "\n"
    "!!  INSECURE: --insecure-no-sandbox is set. Submitted bots run WITHOUT the sandbox:\n"
    "!!  they can read this worker's files and secrets, reach the network and Redis, and\n"
    "!!  signal or trace other processes. Use only on a machine where every submitted bot\n"
    "!!  is trusted. See docs/SECURITY.md.\n" + "!" * 78
)


# ---------------------------------------------------------------------------- commands


def unsandboxed_command(policy: SandboxPolicy, bot_dir: str | os.PathLike[str],
                        python_argv: Sequence[str]) -> SandboxedCommand:
    """A bot process *without* the sandbox: for house bots, or an explicit insecure worker.

    It still gets the rlimits, the parent-death signal, a cleared environment, and a pids
    cgroup where one can be made (so :meth:`SandboxedCommand.kill` still finds everything),
    but no namespaces and no seccomp: the bot can read and reach whatever the worker can.
    """
    argv = _check_argv(python_argv)
    cgroup: Path | None = None
    if pids_base()[0] is not None:
        cgroup, _ = make_cgroups(policy, 0, tree=False)
    env = _clean_env(argv[0], _pythonpath(argv))
    env["HOME"] = env["TMPDIR"] = tempfile.gettempdir()
    return SandboxedCommand(
        argv=argv, env=env, cwd=os.fspath(bot_dir),
        preexec_fn=_make_preexec(policy, cgroups=(cgroup,) if cgroup else (), nproc=None,
                                 seccomp_fd=None),
        pass_fds=(), sandboxed=False, cgroup=cgroup)


def sandboxed_command(policy: SandboxPolicy, bot_dir: str | os.PathLike[str],
                      python_argv: Sequence[str], *, writable: int = 0) -> SandboxedCommand:
    """The bwrap command (and its preexec hook, fds and environment) for one bot process.

    ``bot_dir`` (a host directory with the bot's files) appears read-only at
    :data:`BOT_DIR`, the working directory. ``python_argv`` starts with the Python
    interpreter (normally ``sys.executable``, which must be visible inside: under the
    installation's prefixes, ``/usr`` or ``policy.extra_ro_paths``); paths after it are
    relative to the bot's directory; it may also be a program of the bot's own, under
    :data:`BOT_DIR`. ``writable`` (a build's) leaves the copy at :data:`BOT_DIR` writable,
    a tmpfs of that many bytes. Raises :class:`SandboxUnavailableError` when
    bubblewrap or the chosen process bound cannot be had here (see :func:`sandbox_status`).
    """
    bwrap = _bwrap_path()
    if bwrap is None:
        raise SandboxUnavailableError("bubblewrap (bwrap) is not installed: "
                                      "apt-get install bubblewrap")
    argv = _check_argv(python_argv, policy)
    use_cgroup = _use_cgroup(policy)
    as_root = os.geteuid() == 0
    bot = Path(bot_dir).resolve()
    if not bot.is_dir():
        raise ValueError(f"bot directory {str(bot)!r} does not exist")
    if as_root and (bot.stat().st_mode & 0o005) != 0o005:
        raise ValueError(f"bot directory {str(bot)!r} must be world-readable (o+rx): the bot "
                         "runs as an unprivileged uid of its own")

    seccomp = os.memfd_create("tacocat-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    cgroup: Path | None = None
    tree: tuple[Path, ...] = ()
    lease: _SlotLease | None = None
    mounts: Mounts | None = None
    try:
        os.write(seccomp, seccomp_program())
        fcntl.fcntl(seccomp, fcntl.F_ADD_SEALS, fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW
                    | fcntl.F_SEAL_WRITE | fcntl.F_SEAL_SEAL)
        # The tree's memory, CPU and core bounds always; the pids one unless the process
        # count is bounded by the uid's RLIMIT_NPROC alone.
        cgroup, tree = make_cgroups(policy, BWRAP_PROCESSES, pids=use_cgroup)
        if as_root:
            lease = _SlotLease(policy)
        env = _clean_env(argv[0], _pythonpath(argv))
        args = [bwrap, "--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try", "--hostname", "tacocat-bot", "--die-with-parent",
                "--new-session", "--cap-drop", "ALL"]
        if as_root:  # no user namespace (it would map the bot to uid 0): setpriv drops uid
            args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]
        else:  # bwrap's user namespace maps the bot to the worker's own unprivileged uid
            args += ["--unshare-user", "--disable-userns", "--uid", str(SANDBOX_UID),
                     "--gid", str(SANDBOX_UID)]
        args += ["--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        mounts = _mount_args(policy, bot, writable)
        args += mounts.args
        args += ["--chdir", BOT_DIR, "--seccomp", str(seccomp), "--"]
        if lease is not None:
            args += _drop_to(lease.uid, argv[0])
        args += argv
    except BaseException:
        os.close(seccomp)
        if mounts is not None:
            mounts.close()
        for made in dict.fromkeys((*tree, cgroup)):
            if made is not None:
                made.rmdir()
        if lease is not None:
            lease.release()
        raise
    return SandboxedCommand(
        argv=args, env=env, cwd="/",
        preexec_fn=rewinding(mounts.fds, _make_preexec(
            policy, cgroups=tuple(dict.fromkeys(((cgroup,) if cgroup else ()) + tree)),
            nproc=policy.max_processes if lease else None, seccomp_fd=seccomp)),
        pass_fds=(seccomp, *mounts.fds), sandboxed=True, cgroup=cgroup, tree=tree,
        uid=lease.uid if lease else None, _lease=lease)


def _drop_to(uid: int, python: str) -> list[str]:
    """The command prefix that drops from root to ``uid`` inside the sandbox, then execs the
    rest: util-linux's ``setpriv`` (3 ms) where the system has it, else a Python stub (a
    whole interpreter start, 11 ms more for every bot process)."""
    setpriv = _setpriv_path()
    if setpriv is not None:
        # setresuid(u, u, u) and setresgid(u, u, u), as the stub does; setpriv exits non-zero
        # (and the bot never starts) if any of it fails.
        return [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    return [python, "-I", "-S", "-c", _DROP_STUB, str(uid)]


@lru_cache(maxsize=1)
def _setpriv_path() -> str | None:
    # Only the system's own copy: /usr is what the sandbox binds read-only.
    for path in ("/usr/bin/setpriv", "/bin/setpriv"):
        if os.access(path, os.X_OK):
            return os.path.realpath(path)
    return None


# Runs inside the sandbox when the worker is root (as root without a user namespace, under
# seccomp, holding only CAP_SETUID/CAP_SETGID): drop to the slot's uid, which clears every
# capability, then become the bot. -I -S: no environment, no site packages, nothing the bot
# controls.
_DROP_STUB = (
    "import os,sys\n"
    "u=int(sys.argv[1])\n"
    "os.setgroups([]);os.setresgid(u,u,u);os.setresuid(u,u,u)\n"
    "assert os.getresuid()==(u,u,u) and os.getresgid()==(u,u,u)\n"
    "os.execv(sys.argv[2],sys.argv[2:])\n"
)



# ---------------------------------------------------------------------------- status


def _bwrap_path() -> str | None:
    """bubblewrap's path: ``$TACOCAT_BWRAP`` where set (another build; empty: none), else
    ``bwrap`` on ``PATH`` or the system's."""
    configured = os.environ.get("TACOCAT_BWRAP")
    if configured is not None:
        return configured if configured and os.access(configured, os.X_OK) else None
    return shutil.which("bwrap") or (
        "/usr/bin/bwrap" if os.access("/usr/bin/bwrap", os.X_OK) else None)


def _use_cgroup(policy: SandboxPolicy) -> bool:
    """Whether this bot gets a pids cgroup; raises when no process bound can be had."""
    why = "the policy asks for RLIMIT_NPROC alone"
    if policy.process_bound != "nproc":
        base, why = pids_base()
        if base is not None:
            return True
        if policy.process_bound == "cgroup":
            raise SandboxUnavailableError(f"no pids cgroup: {why}")
    if os.geteuid() != 0:
        raise SandboxUnavailableError(
            f"no process-count bound: {why}; the RLIMIT_NPROC fallback needs a dedicated uid "
            "per bot, which needs root")
    return False


@dataclass(frozen=True)
class SandboxStatus:
    """What :func:`sandbox_status` found: whether bots can be sandboxed here, and why not."""

    available: bool
    bwrap: str | None
    bwrap_version: str
    process_bound: str
    """``"cgroup+nproc"``, ``"cgroup"`` or ``"nproc"`` (see :class:`SandboxPolicy`)."""
    identity: str
    """Who a bot runs as: a dedicated uid per slot (root) or the worker's uid (userns)."""
    problems: tuple[str, ...]
    cgroups: str = ""
    """The host's cgroup layout: ``v1``, ``hybrid``, ``v2`` or ``none``."""

    def describe(self) -> str:
        if self.available:
            return (f"sandbox: {self.bwrap_version or 'bwrap'}, seccomp, rlimits, cgroup "
                    f"{self.cgroups} tree bounds, process bound {self.process_bound}, bots run "
                    f"as {self.identity}")
        return "sandbox unavailable: " + "; ".join(self.problems)


_MIN_BWRAP = (0, 8)  # --size, --perms for --tmpfs/--dir, --disable-userns


@lru_cache(maxsize=1)
def sandbox_status() -> SandboxStatus:
    """Probe (once per process) whether the sandbox works here: bwrap installed and recent
    enough, the machine's ABI known to the seccomp filter, a process bound available, and a
    real sandboxed ``python -c pass`` exiting cleanly."""
    problems: list[str] = []
    bwrap = _bwrap_path()
    version = ""
    if bwrap is None:
        problems.append("bubblewrap (bwrap) is not installed: apt-get install bubblewrap")
    else:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            version = subprocess.run([bwrap, "--version"], capture_output=True, text=True,
                                     timeout=10, check=False).stdout.strip()
        numbers = tuple(int(x) for x in version.rpartition(" ")[2].split(".")[:2]
                        if x.isdigit())
        if numbers and numbers < _MIN_BWRAP:
            problems.append(f"{version} is too old: bubblewrap 0.8 or newer is needed")
    if platform.machine() not in _ABIS:
        problems.append(f"no seccomp filter for {platform.machine()} (x86_64, aarch64 only)")
    policy = SandboxPolicy()
    bound = ""
    try:
        bound = "+".join(n for n, on in (("cgroup", _use_cgroup(policy)),
                                         ("nproc", os.geteuid() == 0)) if on)
    except SandboxUnavailableError as exc:
        problems.append(str(exc))
    if not tree_bases()[0]:
        problems.append("no bound on a bot's whole process tree: " + tree_bases()[1])
    problems = list(dict.fromkeys(problems))  # on v2 one cgroup answers for both bounds
    if not problems:
        problems += _probe(policy)
    identity = (f"uids {policy.uid_base}.. (one per bot slot)" if os.geteuid() == 0
                else f"uid {os.geteuid()} (the worker's, in a user namespace)")
    return SandboxStatus(not problems, bwrap, version, bound if not problems else "",
                         identity, tuple(problems), cgroup_mode())


def _probe(policy: SandboxPolicy) -> list[str]:
    with tempfile.TemporaryDirectory(prefix="tacocat-sandbox-probe-") as bot:
        os.chmod(bot, 0o755)
        try:
            cmd = sandboxed_command(policy, bot, [sys.executable, "-S", "-c", "pass"])
        except (SandboxUnavailableError, ValueError, OSError) as exc:
            return [str(exc)]
        with cmd:
            try:
                done = subprocess.run(stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=30, check=False, **cmd.popen_kwargs())
            except (OSError, subprocess.SubprocessError) as exc:
                return [f"bwrap did not run: {exc}"]
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return [f"a sandboxed test process failed (exit {done.returncode}): "
                + (err[-1] if err else "no message")]
    return []


def sandbox_available() -> bool:
    """Whether untrusted bots can be run sandboxed here (see :func:`sandbox_status`)."""
    return sandbox_status().available


def log_insecure_warning(logger: logging.Logger | None = None) -> None:
    """Log :data:`INSECURE_WARNING` at CRITICAL level (call at start and per bot started)."""
    (logger or log).critical(INSECURE_WARNING)


def use_sandbox(*, insecure_no_sandbox: bool = False,
                logger: logging.Logger | None = None) -> bool:
    """The worker's start-up decision for submitted bots: ``True`` means sandbox them all.

    ``insecure_no_sandbox`` (the worker's ``--insecure-no-sandbox``) runs them without it,
    logged loudly; ``False`` is returned. Otherwise, if the sandbox does not work here this
    raises :class:`SandboxUnavailableError` with the reasons: the worker must then refuse to
    run submitted bots (house bots may still run, e.g. with :func:`unsandboxed_command`).
    """
    if insecure_no_sandbox:
        log_insecure_warning(logger)
        return False
    status = sandbox_status()
    if not status.available:
        raise SandboxUnavailableError(
            status.describe() + ". Submitted bots will not run; fix the above or start the "
            "worker with --insecure-no-sandbox (only if every bot is trusted)")
    (logger or log).info(status.describe())
    return True
