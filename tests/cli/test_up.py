"""``tacocat up`` for real: embedded Redis, server and workers as child processes, the house
bots through smoke games in the sandbox, a (tiny) round robin, the leaderboard; Ctrl-C
leaves no process behind; a second run reuses everything."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tacocat.engine import HOUSE_BOTS

from .helpers import alive, as_foreground_job, clean_env, descendants, tacocat

pytestmark = pytest.mark.slow

TINY = ["--port", "0", "--web-port", "0", "--games-per-pairing", "4", "--games-per-match", "2"]


def test_up_plays_the_demo_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    up = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "up", *TINY],
        cwd=tmp_path, env=clean_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, preexec_fn=as_foreground_job)  # noqa: PLW1509
    assert up.stdout is not None
    lines: list[str] = []
    try:
        deadline = time.monotonic() + 120
        for line in up.stdout:
            lines.append(line)
            if "keeps running" in line or time.monotonic() > deadline:
                break
        text = "".join(lines)
        assert "keeps running" in text, text
        for line in up.stdout:  # the commands to submit a bot follow
            lines.append(line)
            if "tacocat leaderboard demo --watch" in line:
                break
        text = "".join(lines)
        banner = text[text.index("Enter a bot of your own"):].splitlines()[1:]
        commands = "\n".join(line.strip() for line in banner if line.startswith("  "))
        assert "tacocat submit mybot/mybot.py --ladder demo --wait" in commands, text
        # Pasted as printed (but the endless --watch), they submit the bot as a user.
        pasted = subprocess.run(
            ["bash", "-ec", commands.replace("--watch", "")], cwd=tmp_path,
            env=clean_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}"
                               f"{os.environ['PATH']}"),
            capture_output=True, text=True, timeout=180, check=False)
        assert pasted.returncode == 0, pasted.stdout + pasted.stderr
        assert "alice/mybot@1 is active" in pasted.stdout, pasted.stdout
        children = descendants(up.pid)
        assert len(children) >= 4, text  # Redis, server, worker supervisor, workers
        up.send_signal(signal.SIGINT)
        rest, _ = up.communicate(timeout=60)
    finally:
        if up.poll() is None:
            up.kill()
            up.wait()
    text += rest
    assert up.returncode == 130, text
    assert "interrupted" in text
    time.sleep(0.2)
    assert not [pid for pid in children if alive(pid)], "processes left behind"

    demo = [n for n in ("random", "greedy", "strong") if n in HOUSE_BOTS]
    assert "the admin token (shown once" in text
    assert re.search(r"tct_\S{43}", text)
    assert f"smoke games: {len(demo)}/{len(demo)} decided" in text
    assert "ladder demo · " in text and "complete" in text
    assert re.search(r"web leaderboard: http://127\.0\.0\.1:\d+/ladders/demo", text), text
    for name in demo:
        assert re.search(rf"\d\s+{name}\s+@1\s+house\s+\d+", text), text
    data = tmp_path / ".tacocat" / "data"
    assert (data / "admin.token").is_file() and (data / "house.token").is_file()
    assert (tmp_path / ".tacocat" / "logs" / "worker.log").is_file()

    # Again, --once: the same ladder, the same versions, nothing new to play, no token
    # shown, and it exits by itself.
    again = tacocat("up", *TINY, "--once", cwd=tmp_path, timeout=120)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "ladder demo exists" in again.stdout
    assert "tct_" not in again.stdout
    assert ", ".join(f"house/{n}@1" for n in demo) in again.stdout
    assert not (data / "valkey.pid").exists()  # Redis stopped cleanly


def test_up_reports_a_taken_port(tmp_path: Path) -> None:
    import socket  # noqa: PLC0415

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = tacocat("up", "--port", str(port), "--web-port", "0", "--once", cwd=tmp_path,
                       timeout=60)
    assert done.returncode == 1
    assert "tacocat serve exited" in done.stderr and "try --port 0" in done.stderr
    assert not (tmp_path / ".tacocat" / "data" / "valkey.pid").exists()
    assert os.listdir(tmp_path / ".tacocat" / "logs")


def test_up_on_a_host_without_a_sandbox_still_plays_the_demo_and_says_what_to_install(
        tmp_path: Path) -> None:
    """A bare machine (no bubblewrap, no root to install it): the house bots play outside the
    sandbox, and the output says exactly what submitted bots need."""
    done = tacocat("up", *TINY, "--once", cwd=tmp_path, timeout=180,
                   env=clean_env(TACOCAT_BWRAP="/nonexistent/bwrap"))
    text = done.stdout + done.stderr
    assert done.returncode == 0, text
    assert "this machine cannot sandbox submitted bots" in text
    assert "bubblewrap: not installed" in text and "fix: apt-get install bubblewrap" in text
    assert "ladder demo · " in text and "complete" in text, text
    worker_log = (tmp_path / ".tacocat" / "logs" / "worker.log").read_text()
    assert "playing only the bots of house" in worker_log
