"""Which form of the rules engine runs: the source, or its mypyc build.

``./dev setup`` compiles the hottest module, ``_state.py``, with mypyc into an extension
module next to it (see ``scripts/compile_engine.py``); Python then imports that in place of
the source, and a game takes about a fifth fewer instructions. The build records the digest
of the source it came from. Whenever the source no longer matches (edited since), or
``TACOCAT_PURE_PYTHON=1`` is set, the package loads the ``.py`` file instead, so an edit is
never silently ignored and the pure form stays one variable away. Both forms play
byte-identical games (tested).

This module is standalone (standard library, no sibling imports) so the build script can
load it by path without importing the engine it is about to replace; the package calls
:func:`select` before it imports anything else.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

MODULES = ("_state",)
"""The engine modules that are compiled when a build exists."""
PACKAGE_DIR = Path(__file__).resolve().parent
BUILD_RECORD = PACKAGE_DIR / ".compiled.json"
"""``{module: sha256 of the source it was built from}``, written by the build."""
PURE_VARIABLE = "TACOCAT_PURE_PYTHON"


def source_digests(directory: Path = PACKAGE_DIR) -> dict[str, str]:
    return {name: hashlib.sha256((directory / f"{name}.py").read_bytes()).hexdigest()
            for name in MODULES}


def extension_files(directory: Path = PACKAGE_DIR) -> list[Path]:
    """The built extension modules (and mypyc's helper libraries) for this interpreter."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    return [path for name in MODULES
            for path in (directory / f"{name}{suffix}", directory / f"{name}__mypyc{suffix}")
            if path.exists()]


def build_is_current(directory: Path = PACKAGE_DIR) -> bool:
    """Whether every compiled module exists and was built from the current source."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    if not all((directory / f"{name}{suffix}").exists() for name in MODULES):
        return False
    try:
        recorded = json.loads((directory / BUILD_RECORD.name).read_text())
    except (OSError, ValueError):
        return False
    return bool(recorded == source_digests(directory))


def clean(directory: Path = PACKAGE_DIR) -> None:
    """Remove the build: the engine in ``directory`` runs as source."""
    # Unlink rather than overwrite: a running worker keeps the old file mapped, and writing
    # into it would crash that process.
    for path in extension_files(directory):
        path.unlink()
    (directory / BUILD_RECORD.name).unlink(missing_ok=True)


def build(directory: Path = PACKAGE_DIR) -> str:
    """Compile the engine in ``directory`` (a ``tacocat/engine`` folder: this checkout's, or
    a wheel's being built) with mypyc; '' when done, else why not (its output's end).

    Needs mypy (mypyc) and a C compiler. A failed build leaves no trace: the engine there
    runs as source, which plays identical games, only slower.
    """
    # Imported here: every bot host imports this module, and starts faster without these.
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import tempfile  # noqa: PLC0415

    clean(directory)
    digests = source_digests(directory)
    with tempfile.TemporaryDirectory(prefix="tacocat-mypyc-") as work:
        # Build in a copy, so that neither mypyc's ./build nor a half-written module ever
        # appears in the package. An empty --config-file: the project's mypy settings are
        # for checking, not for compiling.
        package = Path(work) / "tacocat" / "engine"
        shutil.copytree(directory, package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", ".compiled.json"))
        (package.parent / "__init__.py").write_text("")
        for name in MODULES:
            # One module per run: mypyc puts the shared library of a multi-module build at
            # the top level (a module of its own), where the package could not import it.
            result = subprocess.run(
                [sys.executable, "-m", "mypyc", "--config-file=",
                 f"tacocat/engine/{name}.py"],
                cwd=work, capture_output=True, text=True, check=False,
            )
            if result.returncode != 0:
                return (result.stdout[-3000:] + result.stderr[-3000:]).strip() or \
                    f"mypyc exited with {result.returncode}"
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        for path in package.glob(f"*{suffix}"):
            shutil.copy2(path, directory / path.name)
    if source_digests(directory) != digests:
        clean(directory)
        return "the source changed during the build; run it again"
    (directory / BUILD_RECORD.name).write_text(json.dumps(digests, indent=1) + "\n")
    return "" if build_is_current(directory) else "the build is not current after building"


def select() -> str:
    """Make the imports below use the build only when it is current; say which form runs."""
    if not extension_files():
        return "pure Python (no compiled build; ./dev setup makes one)"
    if os.environ.get(PURE_VARIABLE, "") not in ("", "0"):
        reason = f"{PURE_VARIABLE} is set"
    elif not build_is_current():
        reason = "the compiled build is older than the source; ./dev setup rebuilds it"
    else:
        return "compiled (mypyc)"
    for name in MODULES:
        _import_source(f"{__package__}.{name}", PACKAGE_DIR / f"{name}.py")
    return f"pure Python ({reason})"


def _import_source(fullname: str, path: Path) -> None:
    if fullname in sys.modules:
        return
    loader = importlib.machinery.SourceFileLoader(fullname, str(path))
    spec = importlib.util.spec_from_loader(fullname, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[fullname] = module
    try:
        loader.exec_module(module)
    except BaseException:
        del sys.modules[fullname]
        raise
    parent, _, name = fullname.rpartition(".")
    setattr(sys.modules[parent], name, module)  # as the import system does for submodules
