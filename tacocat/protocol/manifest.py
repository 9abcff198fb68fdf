"""A bot folder's manifest, ``bot.toml``: which language it is in, how to build and run it.

A bot is any process that speaks the stdio protocol (docs/PROTOCOL.md). A folder with a
``bot.toml`` says how to make that process::

    language = "c"                                   # python | javascript | c
    build = ["cc", "-O2", "-o", "bot", "bot.c"]      # optional: run once, in the folder
    command = ["./bot"]                              # optional: the bot process's argv

Each known language gives the defaults (:data:`LANGUAGES`); ``command`` alone (no
``language``) runs anything the host has, which is how a language without a starter joins.
``command[0]`` is a program found on the system's ``PATH`` (``node``) or a file of the
folder (``./bot``); paths never leave the folder. Python bots need no manifest (a folder
or zip with ``bot.py`` plays through the SDK's host).

The one parser: the CLI (local play, ``new-bot``, ``submit``), the arena (an upload's
checks) and the worker (builds, commands) all read manifests here. Standard library only.
"""

from __future__ import annotations

import os
import platform
import shutil
import struct
import tomllib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from ._errors import ProtocolError

MANIFEST: Final = "bot.toml"
"""The manifest's file name, at the root of a bot folder or zip."""
PYTHON_ENTRY: Final = "bot.py"
"""A Python bot's file, run by the SDK's host (``python -m tacocat.sdk.host bot.py``)."""


class ManifestError(ProtocolError):
    """A bot folder's ``bot.toml`` is missing, unreadable or says something impossible; the
    message names the file, the field and the value, and what would be accepted."""


@dataclass(frozen=True)
class Language:
    """What the project knows of one language: its default commands and the programs a
    host needs to build and run its bots."""

    name: str
    source: str
    """The starter's main file (what a submission must hold when the defaults are used)."""
    command: tuple[str, ...]
    """The bot process's argv (empty for Python: the SDK's host runs :data:`PYTHON_ENTRY`)."""
    build: tuple[str, ...] = ()
    runtime: tuple[str, ...] = ()
    """Programs the bot process needs on the host (``node``)."""
    toolchain: tuple[str, ...] = ()
    """Programs its build needs on the host (``cc``); only builds may use them."""


LANGUAGES: Final[dict[str, Language]] = {
    "python": Language("python", PYTHON_ENTRY, ()),
    "javascript": Language("javascript", "bot.js", ("node", "bot.js"), runtime=("node",)),
    "c": Language("c", "bot.c", ("./bot",),
                  build=("cc", "-std=c99", "-O2", "-Wall", "-o", "bot", "bot.c"),
                  toolchain=("cc",)),
}
CUSTOM: Final = "custom"
"""The language of a manifest that names only a ``command``."""


@dataclass(frozen=True)
class BotManifest:
    """A parsed ``bot.toml``: defaults filled in from the language."""

    language: str
    command: tuple[str, ...]
    """The bot process's argv, run in the bot folder (empty: a Python bot, run by the host)."""
    build: tuple[str, ...] = ()
    """The build's argv, run once in the bot folder (empty: nothing to build)."""

    @property
    def is_python(self) -> bool:
        return not self.command

    def programs(self) -> tuple[str, ...]:
        """The system programs the bot process runs (not its own files)."""
        return tuple(p for p in self.command[:1] if "/" not in p)

    def build_programs(self) -> tuple[str, ...]:
        return tuple(p for p in self.build[:1] if "/" not in p)

    def missing_programs(self, *, build: bool = True) -> list[str]:
        """The programs this host lacks to build (with ``build``) and run the bot."""
        wanted = (*self.programs(), *(self.build_programs() if build else ()))
        return [p for p in dict.fromkeys(wanted) if shutil.which(p) is None]


def parse_manifest(text: str, where: str = MANIFEST) -> BotManifest:
    """Parse a manifest's text (``where`` names it in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{where} is not valid TOML: {exc}") from None
    unknown = sorted(set(data) - {"language", "command", "build"})
    if unknown:
        raise ManifestError(f"{where}: unknown field {unknown[0]!r}; a manifest has "
                            "language, command and build")
    language = data.get("language")
    if language is not None and not isinstance(language, str):
        raise ManifestError(f"{where}: language must be a string such as \"c\", got "
                            f"{language!r}")
    command = _argv(data, "command", where)
    build = _argv(data, "build", where)
    if language is None:
        if command is None:
            raise ManifestError(f"{where} names neither a language ({known_languages()}) nor "
                                "a command: add language = \"c\", say")
        return BotManifest(CUSTOM, command, build or ())
    known = LANGUAGES.get(language.lower())
    if known is None:
        raise ManifestError(f"{where}: unknown language {language!r}; known: "
                            f"{known_languages()} (or give a command instead)")
    if known.name == "python" and (command or build):
        raise ManifestError(f"{where}: a Python bot runs through the SDK's host from "
                            f"{PYTHON_ENTRY}; drop command and build")
    return BotManifest(known.name, known.command if command is None else command,
                       known.build if build is None else build)


def load_manifest(folder: str | Path) -> BotManifest:
    """The manifest of bot folder ``folder``; a folder with only ``bot.py`` is a Python bot.

    Raises :class:`ManifestError` when there is neither.
    """
    path = Path(folder) / MANIFEST
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        if (Path(folder) / PYTHON_ENTRY).is_file():
            return BotManifest("python", ())
        raise ManifestError(f"{folder} has no {MANIFEST} (and no {PYTHON_ENTRY}): a bot "
                            f"folder needs a {MANIFEST} naming its language "
                            f"({known_languages()}); `tacocat new-bot NAME --language L` "
                            "writes one") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ManifestError(f"{path} cannot be read: {exc}") from None
    return parse_manifest(text, str(path))


def known_languages() -> str:
    return ", ".join(LANGUAGES)


def _argv(data: dict[str, object], field: str, where: str) -> tuple[str, ...] | None:
    value = data.get(field)
    if value is None:
        return None
    if isinstance(value, str):
        raise ManifestError(f"{where}: {field} must be a list of strings (argv), got the "
                            f"string {value!r}: write {field} = {value.split()!r}")
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ManifestError(f"{where}: {field} must be a list of non-empty strings, got "
                            f"{value!r}")
    if field == "command" and not value:
        raise ManifestError(f"{where}: command is empty; give the bot process's argv, such "
                            "as [\"./bot\"]")
    if value:
        program = value[0]
        path = PurePosixPath(program)
        if path.is_absolute() or ".." in path.parts or "\\" in program or (
                "/" in program and not program.startswith("./")):
            raise ManifestError(f"{where}: {field}[0] is {program!r}; name a program on the "
                                "system's PATH (\"node\") or a file of the bot folder "
                                "(\"./bot\")")
    return tuple(value)


# ---------------------------------------------------------------------------- executables


def program_argv(command: tuple[str, ...], folder: str | Path) -> list[str]:
    """A manifest's argv with its program made absolute: a file of the bot (``./bot``) under
    ``folder`` (the bot's folder as the process sees it: ``/bot`` inside the sandbox), a
    program name as found on this host's ``PATH`` (the system's, which the sandbox binds
    read-only). Raises :class:`ManifestError` for a program the host lacks."""
    program = command[0]
    if program.startswith("./"):
        return [os.path.join(os.fspath(folder), program[2:]), *command[1:]]
    found = shutil.which(program)
    if found is None:
        raise ManifestError(f"{program!r} is not installed on this host (the bot's command "
                            f"{list(command)!r} needs it); `tacocat worker --check` lists "
                            "the languages a host runs")
    return [os.path.realpath(found), *command[1:]]

_ELF_MACHINES: Final = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
_HOST_MACHINE: Final = {"amd64": "x86_64", "arm64": "aarch64"}


def check_executable(folder: str | Path, manifest: BotManifest) -> None:
    """Refuse a command that is a file of the folder the host cannot run: missing, or an
    ELF binary for another machine (``Exec format error`` would say much less)."""
    program = manifest.command[0] if manifest.command else ""
    if not program.startswith("./"):
        return
    path = Path(folder) / program
    if not path.is_file():
        built = " (the build did not make it)" if manifest.build else ""
        raise ManifestError(f"the command's {program!r} is not a file of the bot{built}")
    with open(path, "rb") as stream:
        head = stream.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return  # a script: its #! line says what runs it
    order = "<" if head[5] == 1 else ">"
    machine = _ELF_MACHINES.get(struct.unpack(order + "H", head[18:20])[0], "another machine")
    host = platform.machine().lower()
    host = _HOST_MACHINE.get(host, host)
    if machine != host:
        raise ManifestError(f"{program} is a binary for {machine}, and this host runs {host}: "
                            "ship the source with a build step instead of a binary")
