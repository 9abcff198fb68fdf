"""The runtime's two forms: the mypyc build of its hot modules (what ./dev sets up: the engine's
state machine and the referee loop, one group) and the pure-Python source.

They must play byte-identical games, a stale build must never be used, and the benchmark says
which form it measured.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tacocat import engine
from tacocat.engine import _compiled

ROOT = Path(__file__).resolve().parents[2]
GAMES = """
import hashlib, sys
import tacocat.engine as engine
from tacocat.engine import HOUSE_BOTS, duplicate_pairs
from tacocat.referee import play_in_process
digest = hashlib.sha256()
for bots in [("random", "random"), ("greedy", "random"), ("strong", "greedy")]:
    for game in play_in_process(HOUSE_BOTS[bots[0]], HOUSE_BOTS[bots[1]],
                                duplicate_pairs(40, "forms")).games:
        digest.update(game.record.dumps().encode())
print(engine.ENGINE_FORM)
print(engine._state.__file__)
print(digest.hexdigest())
import tacocat.referee._loop as loop
print(loop.__file__)
"""


def run_python(code: str, *, cwd: Path = ROOT, **env: str) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if k != _compiled.PURE_VARIABLE}
    result = subprocess.run([sys.executable, "-c", code], cwd=cwd, env={**environment, **env},
                            capture_output=True, text=True, check=False, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout.split("\n")


def test_this_checkout_runs_the_compiled_engine() -> None:
    # ./dev (and so .ci/run) builds it; a failure here means that build step broke.
    assert engine.ENGINE_FORM == "compiled (mypyc)", engine.ENGINE_FORM
    for name in _compiled.MODULES:
        module = importlib.import_module(f"tacocat.{name}")
        assert module.__file__ is not None and module.__file__.endswith(".so"), name
    assert not hasattr(engine.Bot, "__mypyc_attrs__")  # bot authors subclass it
    assert _compiled.build_is_current()


def test_compiled_and_pure_engines_play_identical_games() -> None:
    compiled = run_python(GAMES)
    pure = run_python(GAMES, TACOCAT_PURE_PYTHON="1")
    assert compiled[0] == "compiled (mypyc)" and compiled[1].endswith(".so")
    assert compiled[3].endswith(".so")
    assert pure[0] == "pure Python (TACOCAT_PURE_PYTHON is set)" and pure[1].endswith(".py")
    assert pure[3].endswith(".py")
    assert compiled[2] == pure[2]


def test_pure_python_variable_set_to_0_keeps_the_build() -> None:
    code = "import tacocat.engine as e; print(e.ENGINE_FORM)"
    assert run_python(code, TACOCAT_PURE_PYTHON="0")[0] == "compiled (mypyc)"


def test_a_build_older_than_its_source_is_never_used(tmp_path: Path) -> None:
    package = tmp_path / "tacocat"
    shutil.copytree(ROOT / "tacocat", package, ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import tacocat.referee._loop as loop, tacocat.engine as e; print(e.ENGINE_FORM); "
            "print(e._state.__file__); print(loop.__file__)")
    assert run_python(code, cwd=tmp_path)[0] == "compiled (mypyc)"
    stale = ("pure Python (the compiled build is older than the source; "
             "./dev setup rebuilds it)")
    # An edit to any module of the group, the engine's or the referee's, loads every one of
    # them from source: a group's modules call each other natively, so none is kept.
    for edited in (package / "referee" / "_loop.py", package / "engine" / "_state.py"):
        original = edited.read_text()
        # Appended to, or changed in place at the same size (the digest decides, not the size).
        for change in (original + "\n# edited after the build\n", original[:-1] + " "):
            edited.write_text(change)
            form, state, loop = run_python(code, cwd=tmp_path)[:3]
            assert form == stale
            assert state == str(package / "engine" / "_state.py")
            assert loop == str(package / "referee" / "_loop.py")
        edited.write_text(original)
    assert run_python(code, cwd=tmp_path)[0] == "compiled (mypyc)"
    (package / "engine" / ".compiled.json").unlink()
    assert run_python(code, cwd=tmp_path)[0].startswith("pure Python (the compiled build")


def test_the_build_record_names_the_source_digests() -> None:
    recorded = json.loads(Path(_compiled.BUILD_RECORD).read_text())["digests"]
    assert list(recorded) == list(_compiled.MODULES)
    for name, digest in recorded.items():
        source = (ROOT / "tacocat" / (name.replace(".", "/") + ".py")).read_bytes()
        assert digest == hashlib.sha256(source).hexdigest(), name


def test_bench_engine_prints_one_json_line_naming_the_engine_form() -> None:
    result = subprocess.run([sys.executable, "-m", "tacocat.cli", "bench", "engine",
                             "--games", "50", "--repeat", "1"],
                            cwd=ROOT, capture_output=True, text=True, check=True, timeout=120)
    lines = result.stdout.strip().split("\n")
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert line["games"] == 50 and line["seconds"] > 0
    assert abs(line["games_per_second"] * line["seconds"] / 50 - 1) < 0.01  # seconds is rounded
    assert line["engine"] == "compiled (mypyc)"
    # The plain baseline of the same invocation: games of the same length, a ratio of both.
    assert line["plain_games_per_second"] > 0 and line["ratio"] > 0
    assert abs(line["decisions_per_game"] / line["plain_decisions_per_game"] - 1) < 0.15


def test_a_wheel_built_from_the_project_carries_the_compiled_engine(tmp_path: Path) -> None:
    """What `pip install tacocat-arena` gets: setup.py compiles the engine into the wheel."""
    source = tmp_path / "src"
    source.mkdir()
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    shutil.copytree(ROOT / "tacocat", source / "tacocat", ignore=shutil.ignore_patterns(
        "__pycache__", "*.so", ".compiled.json"))
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", str(source), "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(tmp_path / "wheels")],
                           capture_output=True, text=True, check=False, timeout=600)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "wheels").glob("tacocat_arena-*.whl")
    assert "-cp3" in wheel.name and "linux" in wheel.name  # a platform wheel, not py3-none-any
    site = tmp_path / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    # -S: none of this environment's packages (the checkout's editable install included);
    # the engine needs none.
    script = (f"import sys; sys.path.insert(0, {str(site)!r})\n"
              "import tacocat.engine as engine\n"
              "state = engine.GameState(seed='wheel'); state.apply(0, ())\n"
              "print(engine.ENGINE_FORM); print(engine._state.__file__)\n")
    done = subprocess.run([sys.executable, "-S", "-c", script], cwd=tmp_path,
                          capture_output=True, text=True, check=False, timeout=60)
    assert done.returncode == 0, done.stderr
    form, path = done.stdout.split("\n")[:2]
    assert form == "compiled (mypyc)" and path.startswith(str(site)) and path.endswith(".so")


def test_the_pure_solver_plays_the_recorded_strong_games() -> None:
    # The digests of tests/engine/test_strong_games.py, in the form without the build.
    code = ("import tacocat.engine as e\n"
            "from tests.engine.test_strong_games import CASES, VALUES_DIGEST, records_digest, "
            "values_digest\n"
            "print(e._solver.__file__)\n"
            "print([records_digest(*case[:5]) == case[5] for case in CASES], "
            "values_digest() == VALUES_DIGEST)\n")
    path, verdict = run_python(code, TACOCAT_PURE_PYTHON="1")[:2]
    assert path.endswith("_solver.py")
    assert verdict == f"{[True] * 6} True"
