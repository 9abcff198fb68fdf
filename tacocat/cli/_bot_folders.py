"""A bot folder in local play: its manifest read, its build run, before the match starts.

``tacocat play mybot/ house:random`` takes a folder with a ``bot.toml``
(:mod:`tacocat.protocol.manifest`): a Python folder plays its ``bot.py`` as a file would,
any other language is built once here (the author's own machine and code: a plain process,
with a time limit) and then played as a process of its own, through the sandbox with
``--sandbox``, as the arena's workers run it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from tacocat.engine import Bot
from tacocat.protocol.manifest import (
    PYTHON_ENTRY,
    ManifestError,
    check_executable,
    load_manifest,
    program_argv,
)

from ._play_seats import SeatError

BUILD_SECONDS: Final = 300
"""The longest a local build may take."""
_SHOWN_LINES: Final = 20


@dataclass(frozen=True)
class LocalBot:
    """One side of a local match as given on the command line."""

    spec: str
    """What a Python bot is loaded from (``house:NAME``, ``path/bot.py[:Class]``), or the
    absolute folder of a bot in another language."""
    command: tuple[str, ...] = ()
    """The bot process's argv (its manifest's), empty for a Python or house bot."""

    @property
    def folder(self) -> Path:
        return Path(self.spec)


def local_bot(spec: str) -> LocalBot:
    """``spec`` resolved: a folder's manifest read and its build run. Raises
    :class:`ManifestError` for a folder without a usable manifest and :class:`SeatError`
    for a failed build."""
    path = Path(spec)
    if spec.startswith("house:") or not path.is_dir():
        return LocalBot(spec)
    manifest = load_manifest(path)
    if manifest.is_python:
        return LocalBot(str(path / PYTHON_ENTRY))
    missing = manifest.missing_programs()
    if missing:
        raise ManifestError(f"{spec} is a {manifest.language} bot and needs "
                            f"{', '.join(missing)}, which this machine does not have on PATH")
    folder = path.resolve()
    build(folder, manifest.build)
    check_executable(folder, manifest)
    return LocalBot(str(folder), manifest.command)


def build(folder: Path, argv: tuple[str, ...]) -> None:
    """Run a manifest's build in ``folder``; a failure raises :class:`SeatError` quoting the
    end of its output (the author's own, on the author's own terminal)."""
    if not argv:
        return
    shown = " ".join(argv)
    try:
        done = subprocess.run(program_argv(argv, folder), cwd=folder, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              timeout=BUILD_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise SeatError(f"building {folder} ({shown}) took more than {BUILD_SECONDS} s; "
                        "stopped") from None
    except OSError as exc:
        raise SeatError(f"building {folder}: cannot run {shown}: {exc}") from None
    if done.returncode != 0:
        lines = done.stdout.decode("utf-8", "replace").splitlines()[-_SHOWN_LINES:]
        raise SeatError(f"building {folder} failed: {shown} exited with code "
                        f"{done.returncode}" + "".join(f"\n  {line}" for line in lines))


def process_only(bot: LocalBot) -> type[Bot]:
    """The in-process stand-in of a bot in another language: never played (such a bot is
    always a process of its own), its factory refuses clearly if it ever is."""

    class ProcessOnly(Bot):
        name = bot.folder.name

        def __init__(self) -> None:
            raise SeatError(f"{bot.spec} runs only as a process of its own (it is not Python): "
                            "play it with a time limit")

    return ProcessOnly
