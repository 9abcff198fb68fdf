"""Which form of the match runtime's hot path runs: the source, or its mypyc build.

``./dev setup`` (and ``pip install``, through setup.py) compiles the modules every decision
goes through (the engine's state machine, table, card helpers, bot driver, random bot's
choices and house:strong's solver; the referee's loop, seats, feed and policy) with mypyc
into ONE group of modules next to their sources (:data:`MODULES`; the group's shared
library is ``engine/_native__mypyc``). One group, because modules of a group call each other's
functions and read each other's attributes natively, while separately compiled modules
reach one another through generic Python lookups that cost more than CPython's own (the
reason a ``_table`` compiled on its own was once slower than its source). Python then
imports the builds in place of the sources.

The build records the digest of every source it came from, and its size and modification
time (checking those costs a bot's start 15 stats, where hashing would cost it 8 ms,
mostly the import of OpenSSL: the digests are compared only for a source whose size or
time changed). Whenever one of them no longer matches (edited since), or
``TACOCAT_PURE_PYTHON=1`` is set, every module of the group is loaded from its ``.py`` file
instead (a finder placed first on ``sys.meta_path``), so an edit is never silently ignored
and the pure form stays one variable away. Both forms play byte-identical games (tested).
No class bot authors may subclass is compiled (:class:`~tacocat.engine.Bot`, the house
bots): a compiled class cannot have interpreted subclasses, so ``RandomBot`` calls the
compiled functions of ``bots/_random_play.py``.

This module is standalone (standard library, no sibling imports) so the build script and
setup.py can load it by path without importing the package it is about to replace; the
engine package calls :func:`select` before it imports anything else, and the referee
imports the engine before any module of its own.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Union

# Paths are strings (os.path), not pathlib: every bot host imports this module first, and
# pathlib (with the urllib.parse and fnmatch it imports) would cost each start 5 ms.
StrPath = Union[str, "os.PathLike[str]"]

MODULES = (
    "engine._state", "engine._table", "engine._cards", "engine._driver",
    "engine.bots._random_play", "engine.bots._greedy_play", "engine.bots._strong_play",
    "engine._solver", "protocol._codec",
    "referee._feed", "referee._policy", "referee._seats", "referee._live", "referee._loop",
)
"""The compiled group, as modules of the ``tacocat`` package."""
GROUP = "engine._native"
"""The group's name: its shared library is ``tacocat/engine/_native__mypyc``."""
ROOT_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
"""The ``tacocat`` package folder this module belongs to."""
BUILD_RECORD = os.path.join(ROOT_DIR, "engine", ".compiled.json")
"""``{module: sha256 of the source it was built from}``, written by the build."""
PURE_VARIABLE = "TACOCAT_PURE_PYTHON"
_MYPY_CONFIG = "[mypy]\nfollow_imports = silent\nignore_missing_imports = True\n"
"""Compiling is not checking (``mypy`` does that with the project's settings): imported
packages are read for their types, and one that is not installed (protobuf, in a wheel's
isolated build) is simply ``Any``."""


def _source(root: StrPath, name: str) -> str:
    return os.path.join(root, *name.split(".")) + ".py"


def _extension(root: StrPath, name: str) -> str:
    *package, module = name.split(".")
    return os.path.join(root, *package, module + importlib.machinery.EXTENSION_SUFFIXES[0])


def _record(root: StrPath) -> str:
    return os.path.join(root, os.path.relpath(BUILD_RECORD, ROOT_DIR))


def _library(root: StrPath) -> str:
    return _extension(root, GROUP + "__mypyc")


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def source_digests(root: StrPath = ROOT_DIR) -> dict[str, str]:
    import hashlib  # noqa: PLC0415 - a build needs it, a bot's start does not

    return {name: hashlib.sha256(_read(_source(root, name))).hexdigest() for name in MODULES}


def source_stats(root: StrPath = ROOT_DIR) -> dict[str, list[int]]:
    """Each source's ``[size, mtime_ns]``: unchanged, its digest is taken as unchanged."""
    stats = {}
    for name in MODULES:
        st = os.stat(_source(root, name))
        stats[name] = [st.st_size, st.st_mtime_ns]
    return stats


def extension_files(root: StrPath = ROOT_DIR) -> list[str]:
    """Every extension module in the package for this interpreter: the build's, and those of
    earlier builds whose modules have left the group (which would shadow their sources)."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return sorted(os.path.join(folder, name) for folder, _, names in os.walk(root)
                  for name in names if name.endswith(suffix))


def build_is_current(root: StrPath = ROOT_DIR) -> bool:
    """Whether every compiled module exists and was built from the current sources."""
    if not all(os.path.exists(_extension(root, name)) for name in MODULES) or \
            not os.path.exists(_library(root)):
        return False
    try:
        recorded = json.loads(_read(_record(root)))
        if not isinstance(recorded, dict) or set(recorded) != {"digests", "stats"}:
            return False  # a record of an older build, or none
        if recorded["stats"] == source_stats(root):
            return True
        return bool(recorded["digests"] == source_digests(root))
    except (OSError, ValueError):
        return False


def clean(root: StrPath = ROOT_DIR) -> None:
    """Remove the build: everything in the ``tacocat`` folder ``root`` runs as source."""
    # Unlink rather than overwrite: a running worker keeps the old file mapped, and writing
    # into it would crash that process.
    for path in extension_files(root):
        os.unlink(path)
    if os.path.exists(_record(root)):
        os.unlink(_record(root))


_SETUP = """
import sys
from mypyc.build import mypycify
from setuptools import setup
setup(name="tacocat-native", script_args=["build_ext", "--inplace"],
      ext_modules=mypycify(["--config-file", "mypy.ini", *sys.argv[1:]], group_name=%r))
"""


def build(root: StrPath = ROOT_DIR) -> str:
    """Compile the group in ``root`` (a ``tacocat`` folder: this checkout's, or a wheel's
    being built) with mypyc; '' when done, else why not (its output's end).

    Needs mypy (mypyc), setuptools and a C compiler. A failed build leaves no trace: the code
    there runs as source, which plays identical games, only slower.
    """
    # Imported here: every bot host imports this module, and starts faster without these.
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    clean(root)
    digests = source_digests(root)
    with tempfile.TemporaryDirectory(prefix="tacocat-mypyc-") as work:
        # Build in a copy, so that neither mypyc's ./build nor a half-written module ever
        # appears in the package.
        copy = os.path.join(work, "tacocat")
        shutil.copytree(root, copy, ignore=shutil.ignore_patterns(
            "__pycache__", "*.so", "*.pyd", ".compiled.json"))
        with open(os.path.join(work, "mypy.ini"), "w") as file:
            file.write(_MYPY_CONFIG)
        with open(os.path.join(work, "setup_native.py"), "w") as file:
            file.write(_SETUP % f"tacocat.{GROUP}")
        result = subprocess.run(
            [sys.executable, "setup_native.py", *(_source("tacocat", name) for name in MODULES)],
            cwd=work, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            return (result.stdout[-3000:] + result.stderr[-3000:]).strip() or \
                f"the mypyc build exited with {result.returncode}"
        for name in (*MODULES, GROUP + "__mypyc"):
            # A new file renamed into place, never written into the old one: a process that
            # has the old library mapped (a worker, a test run, another build) keeps it.
            target = _extension(root, name)
            folder, file_name = os.path.split(target)
            partial = os.path.join(folder, f".{file_name}.{os.getpid()}")
            shutil.copy2(_extension(copy, name), partial)
            os.replace(partial, target)
    stats = source_stats(root)
    if source_digests(root) != digests:
        clean(root)
        return "the source changed during the build; run it again"
    with open(_record(root), "w") as file:
        file.write(json.dumps({"digests": digests, "stats": stats}, indent=1) + "\n")
    return "" if build_is_current(root) else "the build is not current after building"


class _SourceFinder:
    """Finds the ``.py`` source of the group's modules, ahead of their builds (a meta path
    finder by its ``find_spec``; not derived from ``importlib.abc``, whose import costs
    every bot process's start 8 ms)."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.sources = sources

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        source = self.sources.get(fullname)
        if source is None:
            return None
        return importlib.util.spec_from_file_location(fullname, source)


def select() -> str:
    """Make the imports of the group use the build only when it is current; say which form
    runs."""
    if not any(os.path.exists(path) for path in (_library(ROOT_DIR), *(
            _extension(ROOT_DIR, name) for name in MODULES))):
        return "pure Python (no compiled build; ./dev setup makes one)"
    if os.environ.get(PURE_VARIABLE, "") not in ("", "0"):
        reason = f"{PURE_VARIABLE} is set"
    elif not build_is_current():
        reason = "the compiled build is older than the source; ./dev setup rebuilds it"
    else:
        return "compiled (mypyc)"
    if not any(isinstance(finder, _SourceFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _SourceFinder(
            {f"tacocat.{name}": _source(ROOT_DIR, name) for name in MODULES}))
    return f"pure Python ({reason})"
