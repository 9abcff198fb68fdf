"""How a worker starts bot processes: the sandbox policy plus where the process runs.

A :class:`Launcher` turns "run this bot's host for one match" into a ready command for
:class:`tacocat.referee.HostProcess`. The isolation itself (bubblewrap, seccomp, rlimits, a pids
bound, the parent-death signal) is :mod:`tacocat.worker.sandbox`'s; the launcher only picks
sandboxed or not (house bots are our own code and skip the namespaces, but keep the limits)
and adds CPU placement:

**Pinning.** On these machines a pipe round trip between processes on different cores costs
about 100 µs and about 15 µs on the same core, and a match is ~50 round trips per game. So a
worker pins itself, its work horses and both bots of its match to one core (each worker its
own core), and the whole conversation stays in one core's caches; measured in
``tacocat bench ladder`` (see docs/WORKER.md). Affinity is set in the child between fork
and exec, so everything the bot starts inherits it.

The parent-death signal and process-group kill keep bots from outliving a dead worker; a
forking worker must therefore start bots from its main thread (the signal follows the
*thread* that forked), which the RQ work horse does.
"""

from __future__ import annotations

import compileall
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal

import tacocat
from tacocat.protocol.manifest import program_argv

from .sandbox import (
    BOT_DIR,
    SandboxedCommand,
    SandboxPolicy,
    sandboxed_command,
    unsandboxed_command,
)

log = logging.getLogger(__name__)

Pinning = Literal["all", "bots", "none"]
"""``all``: the worker process, its work horses and its bots share one core; ``bots``: only
the two bots of a match share the worker's core, the referee floats; ``none``: no affinity."""
PINNINGS: Final[tuple[str, ...]] = ("all", "bots", "none")

HOST_MODULE: Final = "tacocat.sdk.host"

_PR_SET_PDEATHSIG: Final = 1
_libc = ctypes.CDLL(None, use_errno=True)


def set_parent_death_signal(sig: int = signal.SIGKILL) -> None:
    """Ask the kernel to send ``sig`` to this process when its parent (thread) dies.

    Used for the worker processes a supervisor starts and for RQ's work horses, so that
    killing any level (supervisor, worker, horse) takes everything below it along: the bots
    get the same signal from their own launch (see :mod:`tacocat.worker.sandbox`).
    Exits at once if the parent is already gone (the signal would never come).
    """
    parent = os.getppid()
    if _libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_PDEATHSIG): {os.strerror(err)}")
    if os.getppid() != parent or parent == 1:
        os._exit(1)


def worker_cpu(index: int) -> int:
    """The core worker number ``index`` is pinned to: the allowed CPUs, round robin."""
    allowed = sorted(os.sched_getaffinity(0))
    return allowed[index % len(allowed)]


def pin_to(cpu: int | None) -> None:
    """Pin the calling process to ``cpu`` (None: leave it)."""
    if cpu is not None:
        os.sched_setaffinity(0, {cpu})


@dataclass(frozen=True)
class BotSpec:
    """One bot to start: ``spec`` is the host's argument, relative to ``bot_dir``
    (``bot.py`` for an upload, ``house:NAME`` for a house bot). ``trusted`` (house bots,
    our own code) skips the sandbox's namespaces but keeps its limits. ``command`` (a bot
    in another language: its manifest's, :mod:`tacocat.protocol.manifest`) is run in
    ``bot_dir`` instead of the Python host."""

    name: str
    bot_dir: Path
    spec: str = "bot.py"
    trusted: bool = False
    command: tuple[str, ...] = ()


@dataclass(frozen=True)
class Launcher:
    """The policy for starting bot processes on this worker.

    ``sandbox`` False runs submitted bots unsandboxed (``--insecure-no-sandbox``; the worker
    logs that loudly). ``cpu`` pins every bot started here to that core. ``python`` is the
    interpreter bots run under (it must be visible inside the sandbox).
    """

    limits: SandboxPolicy = field(default_factory=SandboxPolicy)
    sandbox: bool = True
    cpu: int | None = None
    python: str = sys.executable

    def command(self, bot: BotSpec) -> SandboxedCommand:
        """The command for ``bot``'s host process; close it when the bot is done."""
        # -S: no site, whose .pth files cost every start up to 15 ms; the sandbox puts the
        # site-packages folders on PYTHONPATH instead (worker/_mounts.py, _pythonpath). Those
        # are this interpreter's, so another one keeps its site.
        ours = os.path.realpath(self.python) == os.path.realpath(sys.executable)
        sandboxed = self.sandbox and not bot.trusted
        if bot.command:
            argv = program_argv(bot.command, BOT_DIR if sandboxed else bot.bot_dir)
        else:
            argv = [self.python, *(["-S"] if ours else []), "-m", HOST_MODULE, bot.spec]
        make = sandboxed_command if sandboxed else unsandboxed_command
        command = make(self.limits, bot.bot_dir, argv)
        if self.cpu is not None:
            command.preexec_fn = _pinned(command.preexec_fn, self.cpu)
            command.pin(self.cpu)
        return command


def _pinned(inner: Callable[[], None], cpu: int) -> Callable[[], None]:
    def preexec() -> None:
        # Before the sandbox's own hook: its parent-death check must stay the last step.
        os.sched_setaffinity(0, {cpu})
        inner()

    return preexec


def warm_bytecode() -> None:
    """Compile the ``tacocat`` package's bytecode once, where the package is writable.

    Bots start with ``PYTHONDONTWRITEBYTECODE`` (the sandbox is read-only), so without
    ``__pycache__`` every bot process of every match would compile the engine and the SDK
    from source: ~30 ms more CPU per bot start. A wheel install has the bytecode already;
    this covers a source checkout.
    """
    package = Path(tacocat.__file__).parent
    if not os.access(package, os.W_OK):
        return
    try:
        compileall.compile_dir(package, quiet=1, workers=1)
    except OSError as exc:
        log.debug("could not precompile %s: %s", package, exc)
