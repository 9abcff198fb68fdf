"""Helpers for the worker tests: bot sources (good and hostile), an arena with users and
ladders, and real ``tacocat worker`` process trees to start, watch, kill and stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

import redis as redis_py

from tacocat.arena import Arena, MatchStatus, User, VersionStatus
from tacocat.worker import BotSpec
from tacocat.worker.sandbox import sandbox_available
from tacocat_lab.chaos.procs import alive, children_of, parent, wait_for

SANDBOX = sandbox_available()
"""Real workers sandbox their bots when bwrap works here (CI installs it)."""

_T = TypeVar("_T")


def source(body: str) -> bytes:
    return textwrap.dedent(body).lstrip().encode()


def bot_folder(folder: Path, name: str, data: bytes) -> BotSpec:
    """A bot's folder as a worker makes it (``folder/bot.py``, readable by the sandbox's
    uids), for a :class:`~tacocat.worker.MatchPlayer`."""
    folder.mkdir(mode=0o755)
    path = folder / "bot.py"
    path.write_bytes(data)
    path.chmod(0o644)
    return BotSpec(name, folder)


def good_bot(tag: str, base: str = "GreedyBot") -> bytes:
    """A distinct (by ``tag``) valid bot subclassing a house bot."""
    return source(f"""
        from tacocat.engine.bots import {base}


        class Bot_{tag.replace('-', '_')}({base}):
            name = {tag!r}
    """)


def slow_bot(tag: str, delay: float) -> bytes:
    """A greedy bot that takes ``delay`` seconds per decision: stretches a match in time."""
    return source(f"""
        import time

        from tacocat.engine.bots import GreedyBot


        class Slow(GreedyBot):
            label = {tag!r}

            def replace(self, obs):
                time.sleep({delay})
                return super().replace(obs)

            def attack(self, obs):
                time.sleep({delay})
                return super().attack(obs)

            def defend(self, obs):
                time.sleep({delay})
                return super().defend(obs)
    """)


# Hostile behaviours, each the body of a ``misbehave(self)`` method called from a decision.
HOSTILE: dict[str, str] = {
    "loop": "while True:\n    pass",
    "sleep": "time.sleep(60)",
    "hog": "hoard = []\nwhile True:\n    hoard.append(bytearray(32 << 20))",
    # print() reaches stderr (the host keeps the real stdout for frames): harmless. Raw bytes
    # on the protocol pipe itself, found among the open descriptors, are garbage.
    "garbage": textwrap.dedent("""\
        print("garbage " * 1000)
        for fd in map(int, os.listdir("/proc/self/fd")):
            if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode) \\
                    and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                os.write(fd, b"\\xff\\xff\\xff\\x7fnot a frame at all")
        time.sleep(60)"""),
    "exit": "os._exit(9)",
}


def hostile_bot(kind: str, *, only_against: str | None = None) -> bytes:
    """A bot that misbehaves (``HOSTILE[kind]``) on its first duel, always or only against
    opponents whose name contains ``only_against`` (so it passes its smoke test)."""
    body = textwrap.indent(HOSTILE[kind], " " * 16)  # the template is dedented by 8
    condition = "True" if only_against is None else f"{only_against!r} in self.opponent"
    return source(f"""
        import fcntl
        import os
        import stat
        import time

        from tacocat.engine.bots import GreedyBot


        class Hostile(GreedyBot):
            name = {kind!r}
            opponent = ""

            def on_game_start(self, seat, ruleset, opponent):
                self.opponent = opponent

            def duel(self, obs):
                if {condition}:
                    self.misbehave()
                return super().duel(obs)

            def misbehave(self):
{body}
    """)


def exits_at_import() -> bytes:
    return source("""
        import os

        os._exit(3)
    """)


@dataclass
class ArenaField:
    arena: Arena
    admin: User
    users: dict[str, User] = field(default_factory=dict)

    def user(self, name: str) -> User:
        if name not in self.users:
            self.arena.users.create(self.admin, name)
            token = self.arena.users.create_token(self.admin, name)
            self.users[name] = self.arena.users.authenticate(token)
        return self.users[name]

    def submit(self, owner: str, bot: str, data: bytes) -> str:
        return self.arena.bots.submit(self.user(owner), bot, "bot.py", data).id

    def join(self, owner: str, bot: str, ladder: str) -> None:
        self.arena.ladders.join(self.user(owner), bot, ladder)


def make_field(redis: redis_py.Redis) -> ArenaField:
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    assert token is not None
    return ArenaField(arena, arena.users.authenticate(token))


def wait_decided(arena: Arena, versions: list[str], timeout: float = 60) -> dict[str, str]:
    """Wait until every version is active or rejected; version -> reason ('' if active)."""
    def decided() -> dict[str, str] | None:
        found = {v: arena.bots.version(v) for v in versions}
        if any(v.status is VersionStatus.PENDING for v in found.values()):
            return None
        return {k: (v.reason if v.status is VersionStatus.REJECTED else "")
                for k, v in found.items()}

    return wait_for(decided, timeout, f"smoke tests of {versions}")


def wait_ladder_done(arena: Arena, ladder: str, timeout: float = 90) -> None:
    def done() -> bool:
        status = arena.ladders.status(ladder)
        return status.matches_scheduled > 0 and status.matches_pending == 0 \
            and status.games_played >= status.games_target
    wait_for(done, timeout, f"ladder {ladder} to finish", interval=0.1)


def recorded(arena: Arena, ladder: str) -> list[str]:
    return [m.id for m in arena.matches.of_ladder(ladder, status=MatchStatus.RECORDED, count=1000)]


# -- processes ---------------------------------------------------------------------------------


class WorkerTree:
    """A real ``tacocat worker`` process (with its RQ workers), logging to a file."""

    def __init__(self, url: str, log: Path, *args: str, workers: int = 2,
                 env: dict[str, str] | None = None) -> None:
        self.log_path = log
        command = [sys.executable, "-m", "tacocat.cli", "worker", "--redis-url", url,
                   "--workers", str(workers), "--wait", "1", "--lease", "3",
                   "--smoke-decision-seconds", "0.5", "--grace", "3", *args]
        if not SANDBOX:
            command.append("--insecure-no-sandbox")
        self._log = log.open("wb")
        self.proc = subprocess.Popen(command, stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True,
                                     env={**os.environ, **(env or {})})
        self.workers = workers

    @property
    def text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def worker_pids(self) -> list[int]:
        """The RQ worker processes (the supervisor's direct children)."""
        return [p for p in children_of(self.proc.pid) if parent(p) == self.proc.pid]

    def wait_ready(self, timeout: float = 30) -> None:
        wait_for(lambda: len(self.worker_pids()) >= self.workers or self.proc.poll() is not None,
                 timeout, "the worker processes")
        assert self.proc.poll() is None, self.text

    def stop(self, timeout: float = 20) -> int:
        """SIGTERM, as an operator would; returns the exit status."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            self.kill()

    def kill(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self._log.close()


@dataclass
class Trees:
    """Worker trees a test started; all are stopped at teardown."""

    url: str
    folder: Path
    started: list[WorkerTree] = field(default_factory=list)

    def __call__(self, *args: str, workers: int = 2,
                 env: dict[str, str] | None = None) -> WorkerTree:
        tree = WorkerTree(self.url, self.folder / f"worker-{len(self.started)}.log", *args,
                          workers=workers, env=env)
        self.started.append(tree)
        tree.wait_ready()
        return tree

    def close(self) -> Iterator[str]:
        """Stop every tree; yields the pids of bot/worker processes left behind."""
        for tree in self.started:
            family = children_of(tree.proc.pid)
            tree.stop()
            yield from (str(p) for p in family if alive(p))
