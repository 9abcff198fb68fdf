"""What a sandboxed bot sees: its mounts, the Python it runs on, and its environment.

Part of the bot sandbox (:mod:`tacocat.worker.sandbox` has the threat model). Everything of
the host a bot can read is bound here, read-only: the system under ``/usr`` (and the ``/lib``,
``/bin`` links), ``/etc/ld.so.cache`` and ``/etc/localtime``, the Python installation(s) and
the ``tacocat`` package at their host paths, and its own directory at :data:`BOT_DIR`; besides
them only a fresh ``/proc``, a minimal ``/dev`` and a private tmpfs at :data:`SANDBOX_TMP`.
The parents of a bound path exist as otherwise empty directories (``/root`` and
``/root/.pyenv`` when the interpreter is a pyenv build): nothing else of them is there. The
environment is rebuilt from nothing, so no secret of the worker's reaches the bot.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

import tacocat

from ._policy import SandboxPolicy
from .errors import SandboxUnavailableError

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


def _mount_args(policy: SandboxPolicy, bot: Path) -> list[str]:
    """Read-only system and Python, private /tmp, the bot at /bot, /proc, minimal /dev."""
    args = ["--perms", "1777", "--size", str(policy.tmp_size), "--tmpfs", SANDBOX_TMP,
            "--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = f"/{name}"
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            args += ["--ro-bind", path, path]
    # /etc readable (bwrap would make it 0700 as root): the loader's cache and the time zone
    # are public, and without them every bot starts slower and runs on UTC.
    args += ["--perms", "0755", "--dir", "/etc"]
    for path in ("/etc/ld.so.cache", "/etc/localtime"):
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
    args += ["--ro-bind", str(bot), BOT_DIR, "--proc", "/proc", "--dev", "/dev",
             "--remount-ro", "/dev", "--remount-ro", "/"]
    # PID 1 of the bot's namespace is bwrap's reaper, whose command line is this whole
    # list (host paths, the interpreter): the bot reads an innocuous one instead.
    init = _init_cmdline()
    args += ["--ro-bind", init, "/proc/1/cmdline", "--ro-bind", init, "/proc/1/task/1/cmdline"]
    return args


INIT_CMDLINE = b"init\0"
"""What ``/proc/1/cmdline`` shows a bot."""


def _init_cmdline() -> str:
    """A host file holding :data:`INIT_CMDLINE`, made once (root: under /run)."""
    for folder in (Path("/run/tacocat-sandbox"), Path(tempfile.gettempdir()) / "tacocat-sandbox"):
        path = folder / "init-cmdline"
        try:
            if not path.is_file() or path.read_bytes() != INIT_CMDLINE:
                folder.mkdir(mode=0o755, exist_ok=True)
                fresh = folder / f".init-cmdline-{os.getpid()}"
                fresh.write_bytes(INIT_CMDLINE)
                fresh.chmod(0o444)
                fresh.replace(path)  # atomic: concurrent workers never see half a file
            return str(path)
        except OSError:
            continue
    raise SandboxUnavailableError("cannot write the bot's /proc/1/cmdline stand-in under "
                                  "/run or the temporary directory")


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
        raise ValueError("python_argv must start with the absolute path of the interpreter")
    if policy is not None:
        real = os.path.realpath(argv[0])
        roots = (*_SYSTEM_ROOTS, *_visible_python_paths(policy))
        if not any(_under(p, r) for p in (argv[0], real) for r in roots):
            raise ValueError(f"{argv[0]!r} is not visible inside the sandbox; add its "
                             "installation to SandboxPolicy.extra_ro_paths")
    return argv
