"""Compile the match runtime's hot modules (engine, referee loop) with mypyc, beside them.

    python scripts/compile_engine.py             build (again)
    python scripts/compile_engine.py --if-stale  build only when the source changed since
    python scripts/compile_engine.py --clean     remove the build: the engine runs as source

``./dev`` runs it with ``--if-stale`` before every command; ``pip install`` / ``pip wheel``
of the project run the same build on the package they install (setup.py). A failed build
(no C compiler, say) leaves the engine in pure Python, which plays identical games, just
slower; the message says so. See tacocat/engine/_compiled.py for what is compiled, why as
one group, and how the build is picked up.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
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
        compiled.clean()
        return 0
    if args.if_stale and compiled.build_is_current():
        return 0
    print("compile_engine: compiling the engine and the referee loop with mypyc (about 40 s)",
          flush=True)
    failure = compiled.build()
    if not failure:
        return 0
    print(f"{failure}\ncompile_engine: the build failed; the engine runs as pure Python "
          "(same games, slower). A C compiler and the Python headers are needed.",
          file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
