"""Compile the rules engine's hot module with mypyc, next to its source.

    python scripts/compile_engine.py             build (again)
    python scripts/compile_engine.py --if-stale  build only when the source changed since
    python scripts/compile_engine.py --clean     remove the build: the engine runs as source

``./dev`` runs it with ``--if-stale`` before every command. A failed build (no C compiler,
say) leaves the engine in pure Python, which plays identical games, just slower; the
message says so. See tacocat/engine/_compiled.py for how the build is picked up.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent


def load_compiled_module() -> ModuleType:
    # By path: importing the tacocat.engine package would load the build being replaced.
    path = ROOT / "tacocat" / "engine" / "_compiled.py"
    spec = importlib.util.spec_from_file_location("_tacocat_engine_compiled", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def clean(compiled: ModuleType) -> None:
    # Unlink rather than overwrite: a running worker keeps the old file mapped, and writing
    # into it would crash that process.
    for path in compiled.extension_files():
        path.unlink()
    compiled.BUILD_RECORD.unlink(missing_ok=True)


def build(compiled: ModuleType) -> bool:
    clean(compiled)
    digests = compiled.source_digests()
    package = compiled.PACKAGE_DIR.relative_to(ROOT)
    with tempfile.TemporaryDirectory(prefix="tacocat-mypyc-") as work:
        # Build in a copy, so that neither mypyc's ./build nor a half-written module ever
        # appears in the checkout. An empty --config-file: the project's mypy settings are
        # for checking, not for compiling.
        shutil.copy2(ROOT / "tacocat" / "__init__.py", Path(work) / "__init__.py")
        shutil.copytree(compiled.PACKAGE_DIR, Path(work) / package,
                        ignore=shutil.ignore_patterns("__pycache__", "*.so", ".compiled.json"))
        (Path(work) / "__init__.py").rename(Path(work) / "tacocat" / "__init__.py")
        for name in compiled.MODULES:
            # One module per run: mypyc puts the shared library of a multi-module build at
            # the top level (a module of its own), where the package could not import it.
            result = subprocess.run(
                [sys.executable, "-m", "mypyc", "--config-file=", str(package / f"{name}.py")],
                cwd=work, capture_output=True, text=True, check=False,
            )
            if result.returncode != 0:
                print(result.stdout[-3000:] + result.stderr[-3000:], file=sys.stderr)
                return False
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        for path in (Path(work) / package).glob(f"*{suffix}"):
            shutil.copy2(path, compiled.PACKAGE_DIR / path.name)
    if compiled.source_digests() != digests:
        print("compile_engine: the source changed during the build; run it again",
              file=sys.stderr)
        clean(compiled)
        return False
    compiled.BUILD_RECORD.write_text(json.dumps(digests, indent=1) + "\n")
    return compiled.build_is_current()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--if-stale", action="store_true",
                       help="do nothing when the build matches the source")
    group.add_argument("--clean", action="store_true", help="remove the build")
    args = parser.parse_args(argv)
    compiled = load_compiled_module()
    if args.clean:
        clean(compiled)
        return 0
    if args.if_stale and compiled.build_is_current():
        return 0
    print("compile_engine: compiling the rules engine with mypyc (about 15 s)", flush=True)
    if build(compiled):
        return 0
    print("compile_engine: the build failed; the engine runs as pure Python (same games, "
          "slower). A C compiler and the Python headers are needed.", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
