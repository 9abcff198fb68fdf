"""Kills: the worker (found by name, and by its real pid), its parent, pid 1, everyone."""

import os
import signal

from tacocat.engine.bots import GreedyBot

_PIDS = "__WORKER_PIDS__"  # filled in by the test
WORKER_PIDS = [int(p) for p in _PIDS.split(",")]


def by_name(word: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if word.encode() in f.read() and int(entry) != os.getpid():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return found


def misbehave() -> None:
    blocked = [f"no process named tacocat.worker/rq visible: {by_name('tacocat.worker')}"]
    targets = [*by_name("tacocat.worker"), *by_name("rq:"), *WORKER_PIDS, os.getppid(), 1]
    for pid in targets:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError as exc:
            blocked.append(f"kill {pid}: {type(exc).__name__}")
            continue
        raise RuntimeError(f"ESCAPED: SIGKILL to {pid} accepted")
    try:
        os.kill(-1, signal.SIGKILL)  # every process it may signal (not itself)
        blocked.append("kill -1: no error (reaches only its own sandbox)")
    except OSError as exc:
        blocked.append(f"kill -1: {type(exc).__name__}")
    raise RuntimeError("blocked: " + "; ".join(blocked))


class Hostile(GreedyBot):
    name = "kill-others"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
