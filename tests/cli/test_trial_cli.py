"""``tacocat test`` end to end, as a user types it: ``tacocat serve`` and ``tacocat worker``
(real Valkey, RQ workers, sandboxed bots) in subprocesses, every command a subprocess."""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from unittest import mock

import pytest

from tacocat.cli import main
from tacocat.sdk.arena import ArenaClient

from .helpers import ArenaProcesses, as_foreground_job, clean_env, tacocat

pytestmark = pytest.mark.timeout(240)

GREEDY = "from tacocat.engine.bots import GreedyBot\n\n\nclass Mine(GreedyBot):\n    pass\n"
RANDOM = "from tacocat.engine.bots import RandomBot\n\n\nclass Theirs(RandomBot):\n    pass\n"
SLOW = ("import time\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
        "class Slow(GreedyBot):\n    def duel(self, obs):\n        time.sleep(0.05)\n"
        "        return super().duel(obs)\n")


@dataclass
class Users:
    arena: ArenaProcesses
    tokens: dict[str, str]

    def run(self, user: str, *args: str) -> subprocess.CompletedProcess[str]:
        """``tacocat ARGS`` as ``user``, in a new process."""
        env = clean_env(TACOCAT_ADDRESS=self.arena.address, TACOCAT_TOKEN=self.tokens[user])
        return tacocat(*args, cwd=self.arena.home, env=env, timeout=150)

    def call(self, user: str, *args: str) -> subprocess.CompletedProcess[str]:
        """The same through ``tacocat.cli.main`` in this process (no interpreter start:
        seconds less per command on a loaded machine)."""
        out, err = io.StringIO(), io.StringIO()
        env = {"TACOCAT_ADDRESS": self.arena.address, "TACOCAT_TOKEN": self.tokens[user]}
        with mock.patch.dict(os.environ, env), contextlib.chdir(self.arena.home), \
                contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="module")
def users(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Users]:
    home = tmp_path_factory.mktemp("trial-cli")
    arena = ArenaProcesses(home)
    try:
        arena.start()
        admin_token = (home / ".tacocat" / "data" / "admin.token").read_text().strip()
        tokens = {}
        with ArenaClient(arena.address, admin_token) as admin:
            for name in ("alice", "bob"):
                admin.create_user(name)
                tokens[name] = admin.create_token(name).token
        found = Users(arena, tokens)
        (home / "greedy.py").write_text(GREEDY)
        for bot, source in (("rando", RANDOM), ("slow", SLOW)):
            (home / f"{bot}.py").write_text(source)
            done = found.call("bob", "submit", f"{bot}.py", "--wait")
            assert done.returncode == 0, done.stdout + done.stderr
        yield found
    finally:
        arena.stop()


def test_a_test_streams_the_live_report_and_ends_with_the_verdict(users: Users) -> None:
    done = users.run("alice", "test", "greedy.py", "--against", "bob/rando@1", "--sprt",
                     "--elo0", "0", "--elo1", "300", "--games", "400",
                     "--games-per-match", "10")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "submitted alice/greedy@1" in done.stdout
    assert re.search(r"test T\d+: alice/greedy@1 \(A\) against bob/rando@1 \(B\), unrated",
                     done.stdout)
    assert "waiting for the smoke game of alice/greedy@1" in done.stderr
    # The live line after each match: the local SPRT's words.
    lines = re.findall(r"test T\d+: games (\d+) \(\d+ pairs\), score \S+, Elo [+-]\S+ ± \S+, "
                       r"LLR [+-]\S+ \(-2.94, \+2.94\)", done.stderr)
    assert lines and [int(g) for g in lines] == sorted(int(g) for g in lines)
    assert "SPRT H1 accepted: A is stronger than B" in done.stdout

    listed = users.call("alice", "test", "--list")
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"T\d+ +alice +alice/greedy@1 +bob/rando@1 +H1 ", listed.stdout)
    # Bob's own list does not show alice's test; everyone's does.
    assert "alice/greedy@1" not in users.call("bob", "test", "--list").stdout
    assert "alice/greedy@1" in users.call("bob", "test", "--list", "--all").stdout
    # Running the same file again finds its version instead of failing.
    again = users.call("alice", "test", "greedy.py", "--against", "bob/rando@1",
                      "--elo1", "300", "--games", "40", "--no-follow")
    assert again.returncode == 0, again.stderr
    assert "greedy.py is already alice/greedy@1: testing that version" in again.stdout


def test_cancel_is_the_owners_and_bad_input_says_what_to_do(users: Users) -> None:
    started = users.call("alice", "test", "greedy@1", "--against", "bob/slow@1",
                        "--games", "4000", "--games-per-match", "4", "--no-follow")
    assert started.returncode == 0, started.stderr
    trial = re.search(r"test (T\d+):", started.stdout)
    assert trial is not None
    # Ctrl-C stops following, not the test, and says how to come back.
    env = clean_env(TACOCAT_ADDRESS=users.arena.address, TACOCAT_TOKEN=users.tokens["bob"])
    follow = subprocess.Popen([sys.executable, "-m", "tacocat.cli", "test", "--show",
                               trial.group(1)], cwd=users.arena.home, env=env, text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              # A Ctrl-C must reach it even when the test runner was started
                              # with SIGINT ignored (a background job's children inherit that).
                              preexec_fn=as_foreground_job)  # noqa: PLW1509
    try:
        assert follow.stderr is not None
        first = follow.stderr.readline()
        assert first.startswith(f"test {trial.group(1)}: "), first
        follow.send_signal(signal.SIGINT)
        _, err = follow.communicate(timeout=20)
    finally:
        follow.kill()
        follow.wait()
    assert follow.returncode == 130
    assert f"the test goes on on the arena: `tacocat test --show {trial.group(1)}`" in err
    listed = users.call("alice", "test", "--list")
    assert re.search(rf"{trial.group(1)} +alice +alice/greedy@1 +bob/slow@1 +running ",
                     listed.stdout), listed.stdout
    refused = users.call("bob", "test", "--cancel", trial.group(1))
    assert refused.returncode == 1
    assert f"test {trial.group(1)} belongs to 'alice'; only its owner" in refused.stderr
    cancelled = users.call("alice", "test", "--cancel", trial.group(1))
    assert cancelled.returncode == 0, cancelled.stderr
    assert "cancelled (by alice): no verdict" in cancelled.stdout
    shown = users.call("bob", "test", "--show", trial.group(1))  # anyone may look
    assert shown.returncode == 1 and "cancelled (by alice)" in shown.stdout

    cases = {
        ("greedy@9", "bob/rando@1"): "no version alice/greedy@9 (the candidate): "
                                     "alice/greedy has 1 version",
        ("bob/rando@1", "greedy@1"): "bob/rando@1 belongs to 'bob'; only its owner may test",
        ("greedy@1", "bob/nobot@1"): "no bot 'bob/nobot'",
        ("greedy@1", "greedy@1"): "a test needs two different versions",
    }
    for (candidate, baseline), words in cases.items():
        done = users.call("alice", "test", candidate, "--against", baseline, "--no-follow")
        assert done.returncode == 1 and words in done.stderr, (candidate, done.stderr)
    bounds = users.call("alice", "test", "greedy@1", "--against", "bob/rando@1", "--elo0", "5",
                       "--elo1", "0")
    assert bounds.returncode == 2
    assert "bad SPRT bounds: elo0 must be below elo1, got elo0=5.0, elo1=0.0" in bounds.stderr
    odd = users.call("alice", "test", "greedy@1", "--against", "bob/rando@1", "--games", "7")
    assert odd.returncode == 1 and "an even number from 2 to 100,000, got 7" in odd.stderr
    missing = users.call("alice", "test", "greedy.py")
    assert missing.returncode == 2 and "--against mybot@3" in missing.stderr


def test_help() -> None:
    done = subprocess.run([sys.executable, "-m", "tacocat.cli", "test", "--help"],
                          capture_output=True, text=True, env=clean_env(), check=False)
    assert done.returncode == 0 and "tacocat test mybot.py --against mybot@3" in done.stdout
