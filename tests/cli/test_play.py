"""``tacocat play``: local matches through the one match loop, as a user runs them."""

from __future__ import annotations

from pathlib import Path

from .helpers import tacocat

BOTS = Path(__file__).resolve().parents[1] / "referee" / "bots"


def test_the_games_are_the_same_for_every_batch_size(tmp_path: Path) -> None:
    files = []
    for batch in ("1", "7", None):
        out = tmp_path / f"k{batch}.jsonl"
        args = ["play", "house:random", "house:greedy", "--games", "30", "--seed", "k",
                "--replay", str(out)] + (["--batch", batch] if batch else [])
        done = tacocat(*args, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "30 games (15 duplicate pairs)" in done.stdout
        files.append(out.read_bytes())
    assert files[0] == files[1] == files[2]
    assert files[0].count(b"\n") == 30


def test_forfeits_are_listed_by_reason_with_the_first_message(tmp_path: Path) -> None:
    done = tacocat("play", str(BOTS / "crashing_bot.py"), "house:greedy", "--games", "4",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # As on the arena: the record says only that it raised; the class, message and traceback
    # are the bot's own words, in what it printed (quoted, or kept with --logs).
    assert ("forfeited 4 games by crash; first: crash: seat 0: the bot raised an exception\n"
            in done.stdout), done.stdout
    assert "crashing_bot.py printed " in done.stdout and "Traceback" in done.stdout
    assert "Traceback" not in done.stderr  # not on the terminal


def test_a_slow_bot_forfeits_on_time_and_gives_up_after_three(tmp_path: Path) -> None:
    slow = tmp_path / "slow.py"
    slow.write_text("import time\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
                    "class Slow(GreedyBot):\n    def duel(self, obs):\n"
                    "        time.sleep(0.3)\n        return super().duel(obs)\n")
    done = tacocat("play", str(slow), "house:greedy", "--games", "8", "--batch", "1",
                   "--time-limit", "0.1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # Late but answered (0.3 s is within the 5-limit backstop): the game forfeits, the
    # process plays on; the record says the limit, not the time the bot's host reported.
    assert "forfeited 8 games by timeout; first: timeout: seat 0: answered after the limit " \
           "of 0.1 s" in done.stdout
    assert "gave up after 3 faults in a row; last: timeout" in done.stdout


def test_bad_settings_say_what_to_do(tmp_path: Path) -> None:
    done = tacocat("play", "house:random", "house:greedy", "--batch", "0", cwd=tmp_path)
    assert done.returncode == 2 and "--batch must be from 1 to 256, got 0" in done.stderr
    done = tacocat("play", "house:random", "house:greedy", "--time-limit", "0", cwd=tmp_path)
    assert done.returncode == 2 and "--no-time-limit turns the limit off" in done.stderr


def test_jobs_give_byte_identical_records_and_summary(tmp_path: Path) -> None:
    runs = []
    for jobs in ("1", "3"):
        out = tmp_path / f"j{jobs}.jsonl"
        done = tacocat("play", "house:random", "house:greedy", "--games", "31", "--seed", "j",
                       "--batch", "4", "--jobs", jobs, "--replay", str(out), cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        runs.append((out.read_bytes(), done.stdout.replace(str(out), "FILE")))
    assert runs[0] == runs[1]
    assert runs[0][0].count(b"\n") == 31


def test_sprt_accepts_h1_for_the_stronger_bot_with_the_same_verdict_for_every_jobs(
        tmp_path: Path) -> None:
    outputs = []
    for jobs in ("1", "2"):
        done = tacocat("play", "house:greedy", "house:random", "--sprt", "--elo1", "50",
                       "--jobs", jobs, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert "SPRT H1 accepted: A is stronger than B" in done.stdout, done.stdout
        assert "sprt: games 64 (32 pairs)" in done.stderr  # the live line
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]


def test_sprt_accepts_h0_for_the_weaker_bot_and_says_when_games_run_out(tmp_path: Path) -> None:
    done = tacocat("play", "house:random", "house:greedy", "--sprt", "--elo1", "50", "--jobs", "1",
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "SPRT H0 accepted: A is not stronger than B" in done.stdout, done.stdout
    done = tacocat("play", "house:greedy", "house:greedy", "--sprt", "--games", "10",
                   "--jobs", "1", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "SPRT no verdict: --games ran out with LLR" in done.stdout, done.stdout


def test_bad_sprt_and_jobs_settings_say_what_to_do(tmp_path: Path) -> None:
    done = tacocat("play", "house:random", "house:greedy", "--sprt", "--elo0", "5", "--elo1",
                   "0", cwd=tmp_path)
    assert done.returncode == 2 and "elo0 must be below elo1" in done.stderr
    done = tacocat("play", "house:random", "house:greedy", "--jobs", "0", cwd=tmp_path)
    assert done.returncode == 2 and "--jobs must be at least 1, got 0" in done.stderr


def _play_logged(tmp_path: Path, source: str, opponent: str, games: int, jobs: int,
                 logs: str) -> str:
    """``tacocat play`` of the bot in ``source`` with ``--logs logs``; its stdout."""
    bot = tmp_path / f"{logs}_bot.py"
    bot.write_text("import sys\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n" + source)
    done = tacocat("play", str(bot), opponent, "--games", str(games), "--jobs", str(jobs),
                   "--logs", logs, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_logs_keep_what_each_bot_printed_per_game_capped_with_tracebacks(tmp_path: Path) -> None:
    out = _play_logged(tmp_path, (
        "class Chatty(GreedyBot):\n"
        "    def on_game_start(self, seat, ruleset, opponent):\n"
        "        print(f'hello from seat {seat} against {opponent}')\n"
        "        self.seat = seat\n"
        "    def duel(self, obs):\n"
        "        print('x' * 1000, file=sys.stderr)\n"
        "        if self.seat == 1 and obs.round == 1:\n"
        "            raise RuntimeError('seat 1 gives up in round 2')\n"
        "        return super().duel(obs)\n"), "house:greedy", 4, 2, "logs")
    logs = tmp_path / "logs"
    assert sorted(p.name for p in logs.iterdir()) == [
        f"game-0000{i}-A.log" for i in range(1, 5)]  # from 1; house:greedy prints nothing
    assert "logs: 4 files in logs" in out
    for game in range(4):
        text = (logs / f"game-0000{game + 1}-A.log").read_text()
        seat = game % 2
        assert text.startswith(f"hello from seat {seat} against house:greedy\n")
        assert "x" * 1000 in text
        assert ("Traceback (most recent call last)" in text) == (seat == 1), text[-300:]
        if seat == 1:
            assert "RuntimeError: seat 1 gives up in round 2" in text
    assert "hello from" not in out  # the bots' output went to the logs only
    # Capped: a bot printing without end keeps 64 KiB and says so.
    _play_logged(tmp_path, (
        "class Flood(GreedyBot):\n"
        "    def attack(self, obs):\n"
        "        print('y' * 10_000)\n"
        "        return super().attack(obs)\n"), "house:random", 1, 1, "flood")
    data = (tmp_path / "flood" / "game-00001-A.log").read_bytes()
    assert data.endswith(b"[log cut at 64 KiB]\n") and len(data) < 64 * 1024 + 30
