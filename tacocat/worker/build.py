"""Building a bot in another language: once per version, inside the sandbox, with limits.

A version whose ``bot.toml`` has a ``build`` (:mod:`tacocat.protocol.manifest`) is built by
the first worker that needs it (its smoke test), and the result is kept with the version
(:meth:`~tacocat.arena.BotArea.store_build`): every later match unpacks the built files
instead of building again.

The build runs as a bot does (:func:`~tacocat.worker.sandbox.sandboxed_command`: no network,
no host files but the read-only system, its own uid, seccomp, a pids and memory bound) with
its folder a writable, size-capped copy, and a shell script around it: the build's output
goes to stderr (its log), then ``tar`` writes the folder to stdout. The worker reads both
under caps and a wall-clock limit: a build that runs forever or prints without end is
stopped and refused, and the folder comes back only as bytes, unpacked here with
``tarfile``'s ``data`` filter (no links out, no devices, no absolute paths). The build log
is its owner's (the bot's own words, like its manifest's build command); what the version's
public status says is only which limit was hit or the exit code.
"""

from __future__ import annotations

import dataclasses
import io
import os
import selectors
import subprocess
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tacocat.protocol.logs import LogCap
from tacocat.protocol.manifest import BotManifest, program_argv

from .errors import WorkerError
from .launch import Launcher
from .sandbox import BOT_DIR, sandboxed_command, unsandboxed_command

_SCRIPT: Final = '"$@" 1>&2 && exec tar -cf - .'
"""Run the build (its stdout into the log), then send the folder as a tar on stdout."""
SHELL: Final = "/bin/sh"
MAX_FILES: Final = 1000


class BuildFailedError(WorkerError):
    """A bot's build failed or broke a limit: ``reason`` is public-safe (no word the build
    printed), ``log`` the build's output for its owner."""

    def __init__(self, reason: str, log: bytes = b"") -> None:
        super().__init__(reason)
        self.reason = reason
        self.log = log


@dataclass(frozen=True)
class BuildLimits:
    """What one build may take."""

    seconds: float = 120.0
    """Wall-clock time, the whole build (CPU time is bounded by the sandbox's rlimit too)."""
    folder_bytes: int = 16 << 20
    """The folder's size after the build (sources and what it made), as sent back."""
    log_bytes: int = 1 << 20
    """What the build may print; more stops it (the owner's copy keeps the first 64 KiB)."""


@dataclass(frozen=True)
class Built:
    """A successful build: the folder as a tar, and what the build printed."""

    files: bytes
    log: bytes


def build_bot(launcher: Launcher, folder: Path, manifest: BotManifest, *, trusted: bool = False,
              limits: BuildLimits = BuildLimits()) -> Built:
    """Build the bot in ``folder`` (sandboxed unless ``trusted`` or the launcher runs
    unsandboxed) and unpack what the build made into ``folder``; raises
    :class:`BuildFailedError` saying why not."""
    sandboxed = launcher.sandbox and not trusted
    inside = BOT_DIR if sandboxed else folder
    argv = [SHELL, "-c", _SCRIPT, "build", *program_argv(manifest.build, inside)]
    policy = dataclasses.replace(launcher.limits,
                                 cpu_seconds=max(1, int(limits.seconds)),
                                 file_size=max(launcher.limits.file_size, limits.folder_bytes))
    command = (sandboxed_command(policy, folder, argv, writable=limits.folder_bytes)
               if sandboxed else unsandboxed_command(policy, folder, argv))
    with command:
        proc = subprocess.Popen(stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, **command.popen_kwargs())
        try:
            files, log, broke = _collect(proc, limits)
        finally:
            if proc.poll() is None:
                command.kill()
            code = proc.wait()
    kept = LogCap().take(log)
    if broke:
        raise BuildFailedError(f"the build {broke}", kept)
    if code != 0:
        raise BuildFailedError(f"the build failed: exit code {code}", kept)
    unpack_built(files, folder, limits)
    return Built(files, kept)


def _collect(proc: subprocess.Popen[bytes], limits: BuildLimits) -> tuple[bytes, bytes, str]:
    """Read the build's stdout and stderr to their end under the limits; returns them and
    which limit it broke (``""``: none)."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = bytearray(), bytearray()
    deadline = time.monotonic() + limits.seconds
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ, out)
        selector.register(proc.stderr, selectors.EVENT_READ, err)
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                return bytes(out), bytes(err), f"took more than {limits.seconds:g} s"
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                key.data.extend(chunk)
                if len(out) > limits.folder_bytes:
                    return bytes(out), bytes(err), (f"made more than {limits.folder_bytes:,} "
                                                     "bytes of files")
                if len(err) > limits.log_bytes:
                    return bytes(out), bytes(err), (f"printed more than {limits.log_bytes:,} "
                                                     "bytes")
    return bytes(out), bytes(err), ""


def unpack_built(files: bytes, folder: Path, limits: BuildLimits = BuildLimits()) -> None:
    """Write a build's files (:attr:`Built.files`, a stored one too) into the version's
    unpacked ``folder``."""
    try:
        with tarfile.open(fileobj=io.BytesIO(files), mode="r:") as archive:
            members = archive.getmembers()
            if len(members) > MAX_FILES:
                raise BuildFailedError(f"the build made more than {MAX_FILES} files")
            size = sum(m.size for m in members)
            if size > limits.folder_bytes:
                raise BuildFailedError(f"the build made more than {limits.folder_bytes:,} bytes")
            kept = [m for m in members if m.isfile() or m.isdir()]
            archive.extractall(folder, members=kept, filter="data")
    except (tarfile.TarError, OSError) as exc:
        raise BuildFailedError(f"the build's files cannot be unpacked ({type(exc).__name__})") \
            from None
    for path in folder.rglob("*"):  # readable by the bot's own uid, as the upload is
        mode = path.stat().st_mode
        path.chmod(0o755 if path.is_dir() or mode & 0o100 else 0o644)
