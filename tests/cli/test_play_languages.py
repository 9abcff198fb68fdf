"""``tacocat new-bot --language`` and ``tacocat play FOLDER``, for real: the JavaScript and C
starters pass their own tests, play 20 games against house:random without a forfeit (in
plain processes and in the sandbox), and a folder that cannot be played says why."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tacocat.worker.sandbox import sandbox_available

from .helpers import tacocat

pytestmark = pytest.mark.timeout(180)

LANGUAGES = ["javascript", "c"]


def _new(tmp_path: Path, language: str, name: str = "mybot") -> Path:
    done = tacocat("new-bot", name, "--language", language, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"wrote a {language} bot into" in done.stdout
    return tmp_path / name


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_starter_passes_its_own_test(tmp_path: Path, language: str) -> None:
    folder = _new(tmp_path, language)
    command = ["node", "--test"] if language == "javascript" else ["make", "test"]
    done = subprocess.run(command, cwd=folder, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "pass 3" in done.stdout if language == "javascript" else \
        "all checks passed" in done.stdout


@pytest.mark.parametrize("sandbox", [False, True], ids=["process", "sandbox"])
@pytest.mark.parametrize("language", LANGUAGES)
def test_a_starter_plays_20_games_without_a_forfeit(tmp_path: Path, language: str,
                                                    sandbox: bool) -> None:
    if sandbox and not sandbox_available():
        pytest.fail("the sandbox is needed here: ./dev setup installs it")
    folder = _new(tmp_path, language)
    done = tacocat("play", "mybot/", "house:random", "--games", "20",
                   *(["--sandbox"] if sandbox else []), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(line for line in done.stdout.splitlines() if line.startswith("mybot/"))
    wins, losses, ties, forfeits = (int(x) for x in row.split()[1:5])
    assert wins + losses + ties == 20 and forfeits == 0, done.stdout
    assert "forfeited" not in done.stdout
    assert wins > losses  # it plays sensibly, not only legally
    if language == "c":
        assert os.access(folder / "bot", os.X_OK)  # built by play


def test_a_folder_without_a_manifest_says_what_it_needs(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = tacocat("play", "empty", "house:random", "--games", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert "has no bot.toml (and no bot.py)" in done.stderr
    assert "tacocat new-bot NAME --language L" in done.stderr


def test_an_unknown_language_names_the_known_ones(tmp_path: Path) -> None:
    folder = tmp_path / "cobol"
    folder.mkdir()
    (folder / "bot.toml").write_text('language = "cobol"\n')
    done = tacocat("play", "cobol", "house:random", "--games", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert "unknown language 'cobol'; known: python, javascript, c" in done.stderr
    refused = tacocat("new-bot", "x", "--language", "cobol", cwd=tmp_path)
    assert refused.returncode == 2 and "invalid choice: 'cobol'" in refused.stderr


def test_a_failed_build_shows_the_compilers_words(tmp_path: Path) -> None:
    folder = _new(tmp_path, "c")
    (folder / "bot.c").write_text("int main(void) { return nope; }\n")
    done = tacocat("play", "mybot", "house:random", "--games", "2", cwd=tmp_path)
    assert done.returncode == 2
    assert "building" in done.stderr and "failed: cc -std=c99" in done.stderr
    assert "nope" in done.stderr  # the author's own terminal: the whole reason


def test_a_bot_in_another_language_needs_a_time_limit(tmp_path: Path) -> None:
    _new(tmp_path, "javascript")
    done = tacocat("play", "mybot", "house:random", "--no-time-limit", cwd=tmp_path)
    assert done.returncode == 2
    assert "drop --no-time-limit" in done.stderr


def test_a_python_folder_plays_its_bot_py(tmp_path: Path) -> None:
    folder = tmp_path / "pyfolder"
    folder.mkdir()
    (folder / "bot.py").write_text("from tacocat.engine.bots import GreedyBot\n\n\n"
                                   "class Mine(GreedyBot):\n    name = 'mine'\n")
    done = tacocat("play", "pyfolder", "house:random", "--games", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pyfolder/" in done.stdout
