"""``tacocat replay show|check`` on files ``tacocat play --replay`` wrote."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from .helpers import clean_env, tacocat

BOTS = Path(__file__).resolve().parents[1] / "referee" / "bots"


def test_check_matches_its_own_games_and_reports_a_crash(tmp_path: Path) -> None:
    seeded = str(BOTS / "seeded_random.py")
    done = tacocat("play", seeded, "house:greedy", "--games", "4", "--jobs", "1",
                   "--replay", "g.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = tacocat("replay", "check", "g.jsonl", "--bot", seeded, cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 games" in done.stdout and "every answer matched the record" in done.stdout
    # The other seat's player: every game, by name; a wrong seat differs (exit status 1).
    done = tacocat("replay", "check", "g.jsonl", "--bot", "house:random", "--seat", "0",
                   "--game", "1", cwd=tmp_path)
    assert done.returncode == 1
    assert "game 1, seat 0" in done.stdout and "different: recorded" in done.stdout
    assert "hand [" in done.stdout

    crashing = str(BOTS / "crashing_bot.py")
    done = tacocat("play", crashing, "house:greedy", "--games", "2", "--jobs", "1",
                   "--replay", "c.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = tacocat("replay", "check", "c.jsonl", "--bot", crashing, "--game", "2",
                   cwd=tmp_path)
    assert done.returncode == 1
    assert "raised: RuntimeError: boom in attack at crashing_bot.py:" in done.stdout
    assert "recorded no answer (the game ended: crash: seat 1" in done.stdout


def test_show_prints_a_game_round_by_round_and_bad_input_says_why(tmp_path: Path) -> None:
    done = tacocat("play", "house:greedy", "house:random", "--games", "2", "--jobs", "1",
                   "--replay", "g.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    done = tacocat("replay", "show", "g.jsonl", "--game", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.startswith("game 2 of g.jsonl: seat 0 house:random, seat 1 house:greedy")
    assert "round 1, space 3\n  hands: seat 0 [" in out
    assert "  duel      Duel: seat 0 shows" in out and "Game over" in out
    done = tacocat("replay", "show", "g.jsonl", "--game", "5", cwd=tmp_path)
    assert done.returncode == 2 and "--game 5 is not in g.jsonl: it holds games 1 to 2" \
        in done.stderr
    done = tacocat("replay", "show", "g.jsonl", "--game", "0", cwd=tmp_path)
    assert done.returncode == 2 and "games 1 to 2" in done.stderr  # numbered from 1
    (tmp_path / "bad.jsonl").write_text("{}\n")
    done = tacocat("replay", "check", "bad.jsonl", "--bot", "house:greedy", cwd=tmp_path)
    assert done.returncode == 2 and "bad.jsonl:1: format None" in done.stderr


def test_show_into_a_closed_pipe_says_one_line(tmp_path: Path) -> None:
    done = tacocat("play", "house:greedy", "house:random", "--games", "1", "--jobs", "1",
                   "--replay", "g.jsonl", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # The reader goes away before the command writes (as `| head` does after its lines).
    show = subprocess.Popen([sys.executable, "-m", "tacocat.cli", "replay", "show", "g.jsonl"],
                            cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert show.stdout is not None and show.stderr is not None
    show.stdout.close()
    try:
        stderr = show.stderr.read()
        code = show.wait(timeout=60)
    finally:
        if show.poll() is None:
            show.kill()
            show.wait()
    assert code == 141, stderr
    assert "Traceback" not in stderr and "BrokenPipeError" not in stderr
    assert stderr.strip().splitlines() == [
        "tacocat replay show: the output was closed before it ended (the rest is not shown)"]
