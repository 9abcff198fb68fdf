"""``tacocat play`` keeps the arena's clock: bot files in host processes, limits enforced,
one late answer costs one game whatever the batch, a paused referee charges no bot, and a
bot's printing stays off the terminal."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .helpers import (
    alive,
    clean_env,
    descendants,
    processes_running,
    slow_once_source,
    tacocat,
)

pytestmark = pytest.mark.timeout(300)

SPIN = ("from tacocat.engine.bots import GreedyBot\n\n\n"
        "class Spin(GreedyBot):\n    def duel(self, obs):\n        while True:\n"
        "            pass\n")
SLEEP = ("import time\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
         "class Sleep(GreedyBot):\n    def duel(self, obs):\n        time.sleep(30)\n"
         "        return super().duel(obs)\n")


@pytest.mark.parametrize("source", [SPIN, SLEEP], ids=["spinner", "sleeper"])
def test_a_spinning_or_sleeping_bot_forfeits_on_time_and_nothing_is_left_running(
        tmp_path: Path, source: str) -> None:
    bot = tmp_path / "stuck.py"
    bot.write_text(source)
    started = time.monotonic()
    done = tacocat("play", str(bot), "house:random", "--time-limit", "1", "--games", "4",
                   cwd=tmp_path, timeout=120)
    took = time.monotonic() - started
    assert done.returncode == 0, done.stderr
    assert "stuck.py forfeited 4 games by timeout" in done.stdout, done.stdout
    # A hung decision costs 5 limits before the process is killed; three in a row and the
    # bot gives up the rest. Far from the 30 s sleep, let alone forever.
    assert took < 25, took
    assert processes_running(str(bot)) == []


@pytest.mark.parametrize(("sleep", "words"), [
    (0.7, "answered after the limit of 0.5 s"),  # late, but answered: the process goes on
    (30, "no answer within 2.5 s (the limit is 0.5 s)"),  # hung: killed, restarted
], ids=["late", "hung"])
def test_a_bot_slow_on_one_decision_forfeits_that_game_only_for_every_batch_and_jobs(
        tmp_path: Path, sleep: float, words: str) -> None:
    bot = tmp_path / "slow_once.py"
    bot.write_text(slow_once_source("once", 16, sleep))
    tmp_path.chmod(0o755)  # the sandboxed bot runs as a uid of its own: it must read its file
    runs = {"batch 1": ["--batch", "1", "--jobs", "1"],
            "batch 16": ["--batch", "16", "--jobs", "1"],
            "batch 16, jobs 2": ["--batch", "16", "--jobs", "2"],
            "sandbox, batch 16": ["--sandbox", "--batch", "16", "--jobs", "1"]}
    records = {}
    for name, flags in runs.items():
        replay = tmp_path / f"{name}.jsonl"
        done = tacocat("play", str(bot), "house:greedy", "--games", "16", "--seed", "once",
                       "--time-limit", "0.5", "--replay", str(replay), *flags, cwd=tmp_path,
                       timeout=120)
        assert done.returncode == 0, (name, done.stderr)
        assert "slow_once.py forfeited 1 game by timeout; first: timeout: seat" in done.stdout
        assert words in done.stdout, (name, done.stdout)
        assert "gave up" not in done.stdout
        records[name] = replay.read_text()
    assert len(set(records.values())) == 1, "the records differ between runs"
    assert processes_running(str(bot)) == []


PACED = ("import time\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
         "class Paced(GreedyBot):\n"
         "    def replace(self, obs):\n        time.sleep(0.05)\n"
         "        return super().replace(obs)\n"
         "    def duel(self, obs):\n        time.sleep(0.05)\n        return super().duel(obs)\n"
         "    def attack(self, obs):\n        time.sleep(0.05)\n"
         "        return super().attack(obs)\n")


@pytest.mark.parametrize("whom", ["referee", "referee and bots"])
def test_a_paused_referee_charges_no_bot(tmp_path: Path, whom: str) -> None:
    # The match loop's process (and the bots with it) stopped for 6 s, longer than the
    # referee's whole wait for an answer (5 x 0.5 s), mid-match: no game is forfeited.
    bot = tmp_path / "paced.py"
    bot.write_text(PACED)
    play = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "play", str(bot), str(bot), "--games", "16",
         "--batch", "1", "--jobs", "1", "--time-limit", "0.5"], cwd=tmp_path,
        env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(3)  # well into the match: each game takes about a second
        assert play.poll() is None, play.communicate()
        stopped = [play.pid] + (sorted(descendants(play.pid)) if whom != "referee" else [])
        for pid in stopped:
            os.kill(pid, signal.SIGSTOP)
        time.sleep(6)
        for pid in stopped:
            os.kill(pid, signal.SIGCONT)
        out, err = play.communicate(timeout=120)
    finally:
        if play.poll() is None:
            for pid in [play.pid, *descendants(play.pid)]:
                os.kill(pid, signal.SIGCONT)
            play.kill()
            play.communicate()
    assert play.returncode == 0, err
    assert "16 games" in out and "forfeited" not in out, out
    assert not [pid for pid in stopped if alive(pid)]


CHATTY = ("from tacocat.engine.bots import GreedyBot\n\n\n"
          "class Chatty(GreedyBot):\n    def duel(self, obs):\n"
          "        print('pondering', obs.hand)\n        return super().duel(obs)\n")


def test_what_a_bot_prints_stays_off_the_terminal_unless_asked(tmp_path: Path) -> None:
    bot = tmp_path / "chatty.py"
    bot.write_text(CHATTY)
    done = tacocat("play", str(bot), "house:greedy", "--games", "4", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "pondering" not in done.stderr
    said = done.stdout.split("chatty.py printed ", 1)[1]
    assert said.startswith(tuple("123456789")), said
    assert "--logs DIR keeps it per game, --show-output shows it live" in said
    assert "\n    pondering (" in said  # its first lines, quoted
    shown = tacocat("play", str(bot), "house:greedy", "--games", "4", "--show-output",
                    cwd=tmp_path)
    assert "[A] pondering (" in shown.stderr, shown.stderr
    logged = tacocat("play", str(bot), "house:greedy", "--games", "4", "--logs", "logs",
                     cwd=tmp_path)
    assert "chatty.py printed " in logged.stdout and "in logs/game-*" in logged.stdout
    assert "pondering" in (tmp_path / "logs" / "game-00001-A.log").read_text()


def test_sandbox_settings_are_checked(tmp_path: Path) -> None:
    done = tacocat("play", "house:random", "house:greedy", "--sandbox", "--no-time-limit",
                   cwd=tmp_path)
    assert done.returncode == 2 and "drop --no-time-limit" in done.stderr
    done = tacocat("play", "house:random", "house:greedy", "--sandbox", "--bot-memory-mb",
                   "0", cwd=tmp_path)
    assert done.returncode == 2 and "--bot-memory-mb must be at least 1, got 0" in done.stderr
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "bot.py").write_text(CHATTY)
    done = tacocat("play", str(private / "bot.py"), "house:greedy", "--sandbox", cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("tacocat play: --sandbox: bot directory ") \
        and "must be world-readable (o+rx)" in done.stderr and "Traceback" not in done.stderr
