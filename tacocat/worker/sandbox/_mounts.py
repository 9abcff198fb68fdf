"""What a sandboxed bot sees: its mounts, the Python it runs on, and its environment.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). Everything of
the host a bot can read is bound here, read-only: the system under ``/usr`` (and the ``/lib``,
``/bin`` links), ``/etc/ld.so.cache``, ``/etc/localtime`` and ``/etc/alternatives``, the
Python installation(s) and the ``tacocat`` package at their host paths; its own directory is a
read-only copy at :data:`BOT_DIR` (a bind would name the host's match folder in
``/proc/self/mountinfo``); besides them only a fresh ``/proc``, a ``/dev`` of
:data:`DEVICES` (no ptys: they are a host-wide allowance) and a private tmpfs at
:data:`SANDBOX_TMP`.
The parents of a bound path exist as otherwise empty directories (``/root`` and
``/root/.pyenv`` when the interpreter is a pyenv build): nothing else of them is there. The
environment is rebuilt from nothing, so no secret of the worker's reaches the bot.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import tacocat

from ..errors import SandboxUnavailableError
from ._policy import SandboxPolicy

BOT_DIR = "/bot"
"""Where the bot's own directory appears inside the sandbox (read-only; the working dir)."""
SANDBOX_TMP = "/tmp"
"""The bot's private, size-capped, writable tmpfs; also its ``HOME`` and ``TMPDIR``."""


def _clean_env(python: str, extra: dict[str, str] | None = None) -> dict[str, str]:
    """The bot's whole environment: nothing of the worker's (no REDIS_URL, no tokens)."""
    env = {
        "PATH": f"{os.path.dirname(python)}:/usr/local/bin:/usr/bin:/bin",
        "HOME": SANDBOX_TMP,
        "TMPDIR": SANDBOX_TMP,
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONNOUSERSITE": "1",
    }
    env.update(extra or {})
    return env


@dataclass
class Mounts:
    """The bwrap arguments of what the bot sees, and the descriptors they read.

    ``fds`` hold the bot's files and the ``/proc/1/cmdline`` stand-in, which bwrap copies
    into the sandbox at each start: pass them to the process (``pass_fds``), rewind them
    before each start (:func:`rewinding`; the referee restarts crashed bots with the same
    command), and close them with the command.
    """

    args: list[str]
    fds: list[int] = field(default_factory=list)

    def close(self) -> None:
        for fd in self.fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        self.fds.clear()


MAX_BOT_FILES: Final = 1000
"""Most files a bot directory may hold (an upload holds at most 200)."""
DEVICES: Final = ("null", "zero", "full", "random", "urandom")
"""The host's device nodes a bot gets in its ``/dev``: no tty, no pty, nothing else."""


def _mount_args(policy: SandboxPolicy, bot: Path, writable: int = 0) -> Mounts:
    """Read-only system and Python, private /tmp, a copy of the bot at /bot (writable, of at
    most ``writable`` bytes, for a build), /proc, a /dev of a few devices."""
    args = ["--perms", "1777", "--size", str(policy.tmp_size), "--tmpfs", SANDBOX_TMP,
            "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    # /etc readable (bwrap would make it 0700 as root): the loader's cache and the time zone
    # are public, and without them every bot starts slower and runs on UTC; Debian's
    # alternatives are the links that make /usr/bin/cc (or node, java) a program at all.
    args += ["--perms", "0755", "--dir", "/etc"]
    for path in ("/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives"):
        args += ["--ro-bind-try", path, path]
    made: set[str] = set()
    for path in _visible_python_paths(policy):
        # Parents bwrap would make are mode 0700 when it runs as root: make them 0755, so
        # the bot's unprivileged uid can reach what is bound below them.
        for parent in reversed(Path(path).parents[:-1]):
            if str(parent) not in made:
                made.add(str(parent))
                args += ["--perms", "0755", "--dir", str(parent)]
        args += ["--ro-bind", path, path]
    mounts = Mounts(args)
    try:
        _copy_bot(mounts, bot, policy.open_files, writable)
        args += ["--proc", "/proc", *_dev_args(), "--remount-ro", "/"]
        # PID 1 of the bot's namespace is bwrap's reaper, whose command line is this whole
        # list (host paths, the interpreter): the bot reads an innocuous one instead, from a
        # copy (a bind of a host file would name that file in /proc/self/mountinfo).
        for target in ("/proc/1/cmdline", "/proc/1/task/1/cmdline"):
            fd = _data_fd(INIT_CMDLINE, mounts, policy.open_files)
            args += ["--perms", "0444", "--ro-bind-data", str(fd), target]
    except BaseException:
        mounts.close()
        raise
    return mounts


def _dev_args() -> list[str]:
    """A ``/dev`` of :data:`DEVICES` and the ``fd`` links, read-only.

    Not bwrap's ``--dev``: that one mounts a devpts instance, and every pty opened there
    counts against the kernel's one allowance for the whole host (``kernel.pty.max``), which
    bots exhausted for every container on the machine. No tty either (a bot has no
    terminal) and no writable ``/dev/shm`` (a memory hole outside the tmpfs cap).
    """
    args = ["--perms", "0755", "--tmpfs", "/dev"]
    for name in DEVICES:
        args += ["--dev-bind", f"/dev/{name}", f"/dev/{name}"]
    args += ["--symlink", "/proc/self/fd", "/dev/fd"]
    for number, name in enumerate(("stdin", "stdout", "stderr")):
        args += ["--symlink", f"/proc/self/fd/{number}", f"/dev/{name}"]
    return [*args, "--perms", "0755", "--dir", "/dev/shm", "--remount-ro", "/dev"]


def _copy_bot(mounts: Mounts, bot: Path, low: int, writable: int = 0) -> None:
    """Copy the bot's directory into a tmpfs at :data:`BOT_DIR`, read-only; with
    ``writable``, a tmpfs of that many bytes that stays writable (a build's: what it makes
    lives and dies in the sandbox, and leaves only as the bytes its command prints).

    A copy, not a bind: a bind's source path is in ``/proc/self/mountinfo`` (the match
    folder, named after the worker's pid, under the host's temporary directory), and a bot
    must learn nothing of the host from its mounts. Links and special files are left out
    (an unpacked upload has none).
    """
    folder_mode = "1777" if writable else "0755"  # the bot's uid is not the owner as root
    mounts.args += ["--perms", folder_mode, *(["--size", str(writable)] if writable else []),
                    "--tmpfs", BOT_DIR]
    count = 0
    for folder, dirs, files in os.walk(bot):
        dirs.sort()
        relative = os.path.relpath(folder, bot)
        inside = BOT_DIR if relative == "." else f"{BOT_DIR}/{relative}"
        if inside != BOT_DIR:
            mounts.args += ["--perms", folder_mode, "--dir", inside]
        for name in sorted(files):
            path = os.path.join(folder, name)
            try:
                # O_NONBLOCK: a FIFO would block the open; it is skipped below like a link.
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
            except OSError:  # a link (O_NOFOLLOW), or gone: not the bot's file
                continue
            try:
                info = os.fstat(fd)
                if not stat.S_ISREG(info.st_mode):
                    continue
                count += 1
                if count > MAX_BOT_FILES:
                    raise ValueError(f"bot directory {str(bot)!r} holds more than "
                                     f"{MAX_BOT_FILES} files")
                mode = "0555" if info.st_mode & 0o111 else "0444"
                mounts.args += ["--perms", mode, "--file", str(_high(fd, low, mounts)),
                                f"{inside}/{name}"]
            finally:
                os.close(fd)
    if not writable:
        mounts.args += ["--remount-ro", BOT_DIR]


def _data_fd(data: bytes, mounts: Mounts, low: int) -> int:
    """A memfd holding ``data`` for a ``--ro-bind-data`` (kept in ``mounts``)."""
    fd = os.memfd_create("tacocat-sandbox-data", os.MFD_CLOEXEC)
    try:
        os.write(fd, data)
        return _high(fd, low, mounts)
    finally:
        os.close(fd)


def _high(fd: int, low: int, mounts: Mounts) -> int:
    """A copy of ``fd`` numbered at least ``low`` (kept in ``mounts``): the bot's rlimit
    on open files applies to bwrap already, which needs the numbers below it for itself."""
    copy = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
    mounts.fds.append(copy)
    return copy


def rewinding(fds: Sequence[int], preexec: Callable[[], None]) -> Callable[[], None]:
    """``preexec`` after rewinding ``fds`` to their start, so each start of the same command
    copies whole files (bwrap reads them from where the last start left off)."""
    def rewind_then_preexec() -> None:
        for fd in fds:
            os.lseek(fd, 0, os.SEEK_SET)
        preexec()

    return rewind_then_preexec


INIT_CMDLINE = b"init\0"
"""What ``/proc/1/cmdline`` shows a bot."""


_SYSTEM_ROOTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")


def _package_dir() -> str:
    return os.path.dirname(os.path.realpath(tacocat.__file__))


def _visible_python_paths(policy: SandboxPolicy) -> list[str]:
    """Host directories shown read-only at the same path: the Python installation(s) (the
    venv and its base), the ``tacocat`` package (an editable install lives in the checkout:
    only the package directory is shown, never the checkout with its ``.git`` and configs),
    and ``policy.extra_ro_paths``. Paths under ``/usr`` or nested in another are dropped.
    A whole top-level directory (``/``, ``/opt``, ...) or a Git checkout is never shown."""
    wanted = {os.path.realpath(p) for p in (sys.prefix, sys.exec_prefix, sys.base_prefix,
                                            sys.base_exec_prefix)}
    wanted.add(_package_dir())
    wanted.update(os.path.realpath(p) for p in policy.extra_ro_paths)
    kept: list[str] = []
    for path in sorted(wanted, key=len):
        if any(_under(path, root) for root in (*_SYSTEM_ROOTS, *kept)):
            continue
        if path.count("/") < 2 or os.path.exists(os.path.join(path, ".git")):
            raise SandboxUnavailableError(
                f"refusing to show {path!r} inside the sandbox (a top-level directory or a "
                "checkout); install Python and tacocat-arena in a directory of their own")
        if os.path.isdir(path):
            kept.append(path)
    return kept


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _pythonpath(argv: Sequence[str]) -> dict[str, str]:
    """``PYTHONPATH`` for the bot's interpreter (``argv``): the package's parent when it is
    not importable from the installation's own paths (a checkout rather than an install),
    and, for an interpreter started with ``-S``, this one's site-packages folders.

    Bot hosts start with ``-S`` (:mod:`tacocat.worker.launch`): ``site`` runs every ``.pth``
    file, and an editable install's is a finder whose imports cost each start 15 ms. The
    folders it would have added are put on the path instead (import hooks that ``.pth``
    files install are what a bot host goes without).
    """
    entries: list[str] = []
    parent = os.path.dirname(_package_dir())
    if not any(_under(parent, os.path.realpath(prefix))
               for prefix in {sys.prefix, sys.base_prefix}):
        entries.append(parent)
    if "-S" in _interpreter_options(argv):
        entries += [path for path in sys.path
                    if os.path.basename(path) in ("site-packages", "dist-packages")]
    return {"PYTHONPATH": os.pathsep.join(dict.fromkeys(entries))} if entries else {}


def _interpreter_options(argv: Sequence[str]) -> list[str]:
    """The interpreter's own options in ``argv`` (after it, before ``-m``, ``-c`` or the
    script)."""
    options: list[str] = []
    for arg in argv[1:]:
        if not arg.startswith("-") or arg in ("-m", "-c", "-"):
            break
        options.append(arg)
    return options


def _check_argv(python_argv: Sequence[str], policy: SandboxPolicy | None = None) -> list[str]:
    argv = [str(a) for a in python_argv]
    if not argv or not os.path.isabs(argv[0]):
        raise ValueError("python_argv must start with the absolute path of the interpreter "
                         f"or program, got {argv[:1]!r}")
    if policy is not None:
        if _under(argv[0], BOT_DIR):  # the bot's own program (a built binary, a script)
            return argv
        real = os.path.realpath(argv[0])
        roots = (*_SYSTEM_ROOTS, *_visible_python_paths(policy))
        if not any(_under(p, r) for p in (argv[0], real) for r in roots):
            raise ValueError(f"{argv[0]!r} is not visible inside the sandbox; add its "
                             "installation to SandboxPolicy.extra_ro_paths")
    return argv
