"""Running the ``tacocat`` command as a subprocess, as a user would."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_AMBIENT = ("TACOCAT_TOKEN", "TACOCAT_TOKEN_FILE", "TACOCAT_ADDRESS", "REDIS_URL")


def as_foreground_job() -> None:
    """A ``preexec_fn`` for a command a test stops with Ctrl-C: a run started in the
    background of a non-interactive shell (``./dev test &``, some CI runners) has SIGINT
    ignored, and a child would inherit that and rightly keep it; a user's command runs as a
    terminal's foreground job, with SIGINT at its default."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without any tacocat setting of whoever runs the tests."""
    env = {k: v for k, v in os.environ.items() if k not in _AMBIENT}
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def tacocat(*args: str, cwd: Path, env: Mapping[str, str] | None = None,
            timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tacocat.cli", *args], cwd=cwd,
                          env=dict(env) if env is not None else clean_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (by parent links in /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


class ArenaProcesses:
    """``tacocat serve`` (embedded Redis, free ports) and one ``tacocat worker`` in ``home``,
    as a user starts them; :meth:`start` returns the gRPC address (``web`` is the web UI's
    URL), :meth:`stop` ends them and checks that nothing they started is left."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.processes: list[subprocess.Popen[str]] = []
        self.logs: list[str] = []
        self.spawned: set[int] = set()
        self.web = ""
        self.address = ""

    def _start(self, *args: str) -> subprocess.Popen[str]:
        process = subprocess.Popen([sys.executable, "-m", "tacocat.cli", *args], cwd=self.home,
                                   env=clean_env(), stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, text=True)
        self.processes.append(process)
        return process

    def start(self) -> str:
        serve = self._start("serve", "--port", "0", "--web-port", "0", "--log-level", "WARNING")
        assert serve.stdout is not None
        address = redis_url = ""
        for line in serve.stdout:
            self.logs.append(line)
            if found := re.search(r"at (redis://\S+)", line):
                redis_url = found.group(1)
            if found := re.search(r"web UI on (\S+)", line):
                self.web = found.group(1).rstrip("/")
            if found := re.search(r"referee listening on (\S+)", line):
                address = found.group(1)
                break
        assert address and redis_url, "".join(self.logs)
        self.address = address
        self._drain(serve)
        worker = self._start("worker", "--workers", "1", "--redis-url", redis_url,
                             "--log-level", "WARNING")
        self._drain(worker)
        return address

    def _drain(self, process: subprocess.Popen[str]) -> None:
        def read() -> None:
            assert process.stdout is not None
            self.logs.extend(process.stdout)

        threading.Thread(target=read, daemon=True).start()

    def stop(self) -> None:
        for process in self.processes:
            self.spawned |= descendants(process.pid)
        for process in reversed(self.processes):
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        left = [pid for pid in self.spawned if alive(pid)]
        for pid in left:
            os.kill(pid, signal.SIGKILL)
        assert not left, f"processes left behind: {left}"


def processes_running(text: str) -> list[int]:
    """The live processes whose command line holds ``text`` (a bot file's path, say)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if text in cmdline and alive(int(entry.name)):
            found.append(int(entry.name))
    return found


def slow_once_source(seed: str, games: int, sleep: float) -> str:
    """A greedy bot that sleeps ``sleep`` s in one decision of one game of the
    ``games``-game match of ``seed`` against ``house:greedy``: its round-0 duel with a hand
    that no other game's round-0 duel has (found by playing the match here), whatever
    the batch, the jobs or the process the game is played in."""
    from tacocat.engine import Decision, duplicate_pairs  # noqa: PLC0415
    from tacocat.engine.bots import GreedyBot  # noqa: PLC0415
    from tacocat.referee import play_in_process  # noqa: PLC0415

    hands: list[tuple[int, ...]] = []

    class Recorder(GreedyBot):
        def duel(self, obs):  # type: ignore[no-untyped-def]
            if obs.round == 0 and obs.decision is Decision.DUEL:
                hands.append(obs.hand)
            return super().duel(obs)

    play_in_process(Recorder, GreedyBot, duplicate_pairs(games, seed))
    unique = [hand for hand in hands if hands.count(hand) == 1]
    assert unique, "no round-0 duel hand of a single game: choose another seed"
    return ("import time\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
            "class SlowOnce(GreedyBot):\n"
            "    def duel(self, obs):\n"
            f"        if obs.round == 0 and obs.hand == {unique[0]!r}:\n"
            f"            time.sleep({sleep})\n"
            "        return super().duel(obs)\n")
