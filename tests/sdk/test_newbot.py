"""``tacocat new-bot``: the starter bot plays, and its own test passes."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tacocat.cli import main
from tacocat.cli._newbot import class_name, inside_checkout, write_bot
from tacocat.sdk import load_bot_file, play_local


def test_the_starter_bot_and_its_test(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["new-bot", "my_bot", "--dir", str(tmp_path)]) == 0
    bot_path = tmp_path / "my_bot" / "my_bot.py"
    out = capsys.readouterr().out
    assert f"into {(tmp_path / 'my_bot').resolve()}/" in out  # says where the folder went
    assert "inside the Tacocat checkout" not in out
    assert f"{shlex.quote(sys.executable)} my_bot.py" in out
    text = bot_path.read_text()
    assert "class MyBot(Bot):" in text and 'if __name__ == "__main__":' in text
    assert "connect(" in text
    bot = load_bot_file(bot_path)
    assert not [r for r in play_local(bot, "house:greedy", 10, "starter") if r.forfeited]
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "test_my_bot.py"], check=False, cwd=bot_path.parent,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout
    # A second time would overwrite the author's work: refused unless forced.
    assert main(["new-bot", "my_bot", "--dir", str(tmp_path)]) == 2
    assert "already exist" in capsys.readouterr().err
    assert main(["new-bot", "my_bot", "--dir", str(tmp_path), "--force"]) == 0


@pytest.mark.parametrize("name", ["My-Bot", "1bot", "", "bot.py", "a b"])
def test_bad_names_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="lower case"):
        write_bot(name, tmp_path)


def test_class_names() -> None:
    assert class_name("my_bot") == "MyBot"
    assert class_name("greedy2") == "Greedy2Bot"


def test_the_printed_next_steps_work_as_shown_without_a_venv(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A shell whose PATH has no venv: the printed commands must still run as printed.
    assert main(["new-bot", "starter", "--dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.split("\n\nnext", 1)[1].splitlines()[1:]]
    steps = [line for line in lines if line and "serve" not in line][:3]  # cd, test, play
    assert steps[0].startswith("cd ") and len(steps) == 3, steps
    steps[-1] = steps[-1].replace("--games 200", "--games 20")
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env["PATH"] = "/usr/bin:/bin"
    done = subprocess.run(["/bin/sh", "-ec", "\n".join(steps)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout and "20 games" in done.stdout


def test_it_knows_when_the_bot_lands_inside_the_checkout() -> None:
    root = Path(__file__).resolve().parents[2]
    assert inside_checkout(root / "some" / "folder") == root
    assert inside_checkout(Path("/")) is None
