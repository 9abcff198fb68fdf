"""Start-up cost: ``tacocat.sdk`` imports its grpc and referee-side names lazily (PEP 562).

Every sandboxed bot is a fresh ``python -m tacocat.sdk.host`` process, so whatever the host
imports is paid on every bot start. grpc alone was most of the ~195 ms ``import tacocat.sdk``
cost. These tests fail if the host picks grpc (or the live client, the arena client, the
referee) back up, and check that every public name still resolves.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat import sdk
from tacocat.worker.sandbox._mounts import _pythonpath

SDK_INIT = Path(sdk.__file__)

# What a bot host must never load: grpc and the modules only other users of the SDK need.
NOT_IN_HOST = (
    "grpc",
    "hashlib",  # OpenSSL: 3-5 ms of every start
    "logging",  # with traceback: a failing bot imports them, a host need not
    "traceback",
    "tacocat.sdk._arena_client",
    "tacocat.sdk._arena_types",
    "tacocat.models",
    "tacocat.sdk._live",
    "tacocat.sdk._tls",
    "tacocat.sdk._local",
    "tacocat.referee",
    "tacocat.protocol.arena",
    "tacocat.sdk.arena",
    "tacocat.protocol.proto.v1.arena_pb2",
    "tacocat.protocol.proto.v1.game_pb2_grpc",
    "tacocat.worker",
    "tacocat.server",
    "tacocat.arena",
    "asyncio",
    "subprocess",
    # Standard library a bot never needs at start: 8 ms of every start (importlib.abc brings
    # importlib.resources and tempfile; tomllib is only for ruleset files).
    "importlib.abc",
    "importlib.resources",
    "tomllib",
)

# Runs the host's real entry path (runpy, as ``python -m`` does: the package first, then
# host.py as __main__) with a house bot and empty input: load, Hello, end of input, exit 0.
# The loaded modules go to the file named by argv[1], since fd 1 carries the frames.
HOST_RUN = """
import json, runpy, sys
out = sys.argv[1]
sys.argv = ["tacocat.sdk.host", "house:random"]
try:
    runpy.run_module("tacocat.sdk.host", run_name="__main__", alter_sys=True)
except SystemExit as exc:
    code = exc.code
files = {}
for name, module in list(sys.modules.items()):
    path = getattr(module, "__file__", None)
    if path and name.startswith("tacocat"):
        files.setdefault(path, []).append(name)
with open(out, "w") as f:
    json.dump({"code": code, "modules": sorted(sys.modules), "files": files}, f)
"""


def loaded(module: str, modules: list[str]) -> bool:
    return any(m == module or m.startswith(module + ".") for m in modules)


def test_the_host_entry_path_imports_neither_grpc_nor_what_it_does_not_need(
        tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    done = subprocess.run([sys.executable, "-c", HOST_RUN, str(out)], input=b"",
                          capture_output=True, timeout=60, check=False)
    assert out.exists(), done.stderr.decode(errors="replace")
    got = json.loads(out.read_text())
    assert got["code"] == 0, done.stderr.decode(errors="replace")
    assert done.stdout, "the host sent no Hello"
    modules = got["modules"]
    assert not [m for m in NOT_IN_HOST if loaded(m, modules)]
    # What it does need is there: the engine, the codec and the game's messages.
    for needed in ("tacocat.engine", "tacocat.sdk._session", "tacocat.protocol.proto.v1.game_pb2"):
        assert needed in modules
    # No tacocat file is loaded twice under two names (the engine, the host as itself).
    twice = {path: names for path, names in got["files"].items() if len(names) > 1}
    assert not twice


# Without ``site``, as a worker starts its bots (``python -S``, the site-packages folders on
# PYTHONPATH: worker/sandbox/_mounts.py): then nothing at all imports these either.
NOT_IN_HOST_WITHOUT_SITE = (
    "pathlib",  # with urllib.parse, fnmatch, ipaddress: 5 ms of every start
    "gzip",  # only the arena's stored records are gzipped
)


def test_a_worker_started_host_imports_not_even_pathlib(tmp_path: Path) -> None:
    out = tmp_path / "modules.json"
    argv = [sys.executable, "-S", "-c", HOST_RUN, str(out)]
    done = subprocess.run(argv, input=b"", capture_output=True, timeout=60, check=False,
                          env={**os.environ, **_pythonpath(argv)}, cwd=tmp_path)
    assert out.exists(), done.stderr.decode(errors="replace")
    got = json.loads(out.read_text())
    assert got["code"] == 0, done.stderr.decode(errors="replace")
    assert done.stdout, "the host sent no Hello"
    assert "site" not in got["modules"]
    assert not [m for m in (*NOT_IN_HOST, *NOT_IN_HOST_WITHOUT_SITE)
                if loaded(m, got["modules"])]


def test_importing_the_host_module_does_not_import_grpc() -> None:
    done = subprocess.run(
        [sys.executable, "-c", "import sys, tacocat.sdk.host; print('grpc' in sys.modules)"],
        capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "False"


def test_python_m_host_starts_without_runpy_warnings() -> None:
    # If the package imported tacocat.sdk.host itself, runpy would warn (and run it twice).
    done = subprocess.run([sys.executable, "-W", "error", "-m", "tacocat.sdk.host", "--help"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr.startswith("usage:"), done.stderr


def test_the_lazy_names_import_in_a_fresh_interpreter() -> None:
    script = """
import sys
import tacocat.sdk
assert "grpc" not in sys.modules, "import tacocat.sdk loaded grpc"
from tacocat.sdk import connect, connect_async, ArenaClient, Tls, LIVE, ArenaApiError
from tacocat.sdk import play_local, load_bot
assert "grpc" in sys.modules
from tacocat.sdk import _live, _arena_client, _tls
assert connect is _live.connect and connect_async is _live.connect_async
assert LIVE is _live.LIVE and Tls is _tls.Tls
assert ArenaClient is _arena_client.ArenaClient
assert issubclass(ArenaApiError, tacocat.sdk.SdkError)
print("ok")
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.stdout.strip() == "ok", done.stderr


@pytest.mark.parametrize("name", sdk.__all__)
def test_every_public_name_resolves(name: str) -> None:
    value = getattr(sdk, name)
    assert value is not None
    assert name in dir(sdk)


def test_star_import_gives_every_public_name() -> None:
    namespace: dict[str, object] = {}
    exec("from tacocat.sdk import *", namespace)
    assert set(sdk.__all__) <= set(namespace)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no_such_name"):
        _ = sdk.no_such_name  # type: ignore[attr-defined]
    with pytest.raises(ImportError):
        exec("from tacocat.sdk import no_such_name", {})


def test_the_type_checking_imports_match_the_lazy_table() -> None:
    # mypy sees the TYPE_CHECKING imports, the interpreter the _LAZY table: they must agree.
    tree = ast.parse(SDK_INIT.read_text(encoding="utf-8"))
    block = next(node for node in tree.body if isinstance(node, ast.If)
                 and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING")
    typed = {alias.name: "." * node.level + node.module for node in block.body
             if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
    lazy = sdk._LAZY
    assert typed == lazy
    eager = {alias.name for node in tree.body if isinstance(node, ast.ImportFrom)
             and node.module not in ("__future__", "typing") for alias in node.names}
    assert not eager & set(lazy)
    assert eager | set(lazy) == set(sdk.__all__)
