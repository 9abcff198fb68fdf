"""Followers across a server restart: ``tacocat leaderboard --watch`` and ``tacocat test``'s
follow keep going when ``tacocat serve`` is SIGKILLed and started again on the same port,
saying on stderr that they reconnect (a real server, a real Valkey, the CLI as a user runs
it)."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest
import redis as redis_py

from tacocat.arena import Arena, User

from ..arena.helpers import HOUSE, play
from .helpers import as_foreground_job, clean_env

pytestmark = pytest.mark.timeout(180)


class Lines:
    """A process's output lines, read by a thread, waited for with a timeout."""

    def __init__(self, stream: IO[str]) -> None:
        self.seen: list[str] = []
        self._new: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.seen.append(line)
            self._new.put(line)

    def wait(self, pattern: str, timeout: float = 60) -> str:
        """The next line matching ``pattern`` (lines before it are skipped)."""
        while True:
            try:
                line = self._new.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no line matching {pattern!r} within {timeout} s; "
                                     f"saw {''.join(self.seen)!r}") from None
            if re.search(pattern, line):
                return line


class Serve:
    """``tacocat serve`` on a fixed port against the test's Valkey, restartable."""

    def __init__(self, redis_url: str, home: Path) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.address = f"127.0.0.1:{self.port}"
        self.redis_url = redis_url
        self.home = home
        self.process: subprocess.Popen[str] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tacocat.cli", "serve", "--port", str(self.port),
             "--no-web", "--redis-url", self.redis_url, "--log-level", "WARNING"],
            cwd=self.home, env=clean_env(), stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, text=True)
        assert self.process.stdout is not None
        Lines(self.process.stdout).wait(r"referee listening on", timeout=60)

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)


@pytest.fixture
def serve(redis: redis_py.Redis, redis_url: str, tmp_path: Path) -> Iterator[Serve]:
    server = Serve(redis_url, tmp_path)
    try:
        yield server
    finally:
        server.kill()


def _follower(serve: Serve, *args: str) -> tuple[subprocess.Popen[str], Lines, Lines]:
    process = subprocess.Popen([sys.executable, "-m", "tacocat.cli", *args], cwd=serve.home,
                               env=clean_env(TACOCAT_ADDRESS=serve.address),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=as_foreground_job)  # noqa: PLW1509
    assert process.stdout is not None and process.stderr is not None
    return process, Lines(process.stdout), Lines(process.stderr)


def _stop(process: subprocess.Popen[str]) -> int:
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        return process.wait(60)
    except subprocess.TimeoutExpired:
        # Whether it ignores or blocks SIGINT, or is stuck.
        status = Path(f"/proc/{process.pid}/status").read_text().splitlines()
        signals = [line for line in status if line.startswith(("SigBlk", "SigIgn", "State"))]
        pytest.fail(f"{process.args} still ran 60 s after SIGINT (Ctrl-C): {signals}",
                    pytrace=False)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def _ladder(arena: Arena, admin: User) -> tuple[list[str], list[str]]:
    """Ladder ``main`` of two house bots: its first matches' ids and the versions."""
    arena.ladders.create(admin, "main", games_per_pairing=4, games_per_match=2)
    versions = []
    for name in ("greedy", "random"):
        version = arena.bots.submit(admin, name, "bot.py", f"# {name}\n".encode())
        arena.bots.activate(version.id)
        arena.ladders.join(admin, name, "main")
        versions.append(version.id)
    queued: list[str] = []
    arena.matches.schedule("main", queued.append, rounds_ahead=2)
    return queued, versions


def test_leaderboard_watch_reconnects_across_a_server_restart(
        serve: Serve, redis: redis_py.Redis) -> None:
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    first, second = _ladder(arena, arena.users.authenticate(token))[0][:2]
    factories = {"admin/greedy": HOUSE["greedy"], "admin/random": HOUSE["random"]}
    arena.matches.record(first, play(arena, arena.matches.get(first), factories))
    serve.start()
    watch, out, err = _follower(serve, "leaderboard", "main", "--watch", "--json")
    try:
        assert json.loads(out.wait(r"^\{"))["leaderboard"]["version"] == 1

        serve.kill()
        lost = err.wait(r"lost the server")
        assert f"tacocat leaderboard: lost the server at {serve.address}" in lost
        assert "reconnecting in 0.5 s (attempt 1; Ctrl-C to stop)" in lost
        err.wait(r"attempt 2")  # it keeps trying while the server is down
        assert watch.poll() is None, "the follower died with its server"

        serve.start()
        err.wait(rf"reconnected to {re.escape(serve.address)}")
        assert json.loads(out.wait(r"^\{"))["leaderboard"]["version"] == 1  # whole again
        arena.matches.record(second, play(arena, arena.matches.get(second), factories))
        assert json.loads(out.wait(r"^\{"))["leaderboard"]["version"] == 2
    finally:
        assert _stop(watch) in (0, 130, -signal.SIGINT), "".join(err.seen)


def test_a_followed_test_reconnects_across_a_server_restart(
        serve: Serve, redis: redis_py.Redis) -> None:
    from tacocat.arena.trials import Trials  # noqa: PLC0415 - only this test needs it

    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    admin = arena.users.authenticate(token)
    _, versions = _ladder(arena, admin)
    trial = Trials(arena).create(admin, versions[0], versions[1])
    serve.start()
    follow, out, err = _follower(serve, "test", "--show", trial.id)
    try:
        err.wait(rf"test {trial.id}: ")
        serve.kill()
        err.wait(r"tacocat test: lost the server at .*reconnecting in 0\.5 s")
        serve.start()
        err.wait(r"tacocat test: reconnected to")
        Trials(arena).cancel(admin, trial.id)
        out.wait(r"cancelled")
        assert follow.wait(30) == 1  # a cancelled test is not a verdict
    finally:
        _stop(follow)


def test_a_list_of_tests_cut_at_its_count_says_so(serve: Serve, redis: redis_py.Redis) -> None:
    from tacocat.arena.trials import Trials  # noqa: PLC0415 - only this test needs it

    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    admin = arena.users.authenticate(token)
    _, versions = _ladder(arena, admin)
    trials = Trials(arena)
    for _ in range(101):  # each cancelled at once: a user may have a few open at a time
        trials.cancel(admin, trials.create(admin, versions[0], versions[1]).id)
    serve.start()
    env = clean_env(TACOCAT_ADDRESS=serve.address, TACOCAT_TOKEN=token)
    listed = subprocess.run([sys.executable, "-m", "tacocat.cli", "test", "--list", "--all"],
                            cwd=serve.home, env=env, capture_output=True, text=True,
                            timeout=60, check=False)
    assert listed.returncode == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 2 + 100
    assert "tacocat test: the newest 100 tests; there are more" in listed.stderr
