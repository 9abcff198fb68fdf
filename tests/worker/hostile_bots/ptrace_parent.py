"""ptrace: attach to its parent and to the worker, and PTRACE_TRACEME."""

import ctypes
import os

from tacocat.engine.bots import GreedyBot

PTRACE_TRACEME, PTRACE_ATTACH = 0, 16
_PIDS = "__WORKER_PIDS__"  # filled in by the test
WORKER_PIDS = [int(p) for p in _PIDS.split(",")]


def misbehave() -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
    blocked = []
    for request, pid in [(PTRACE_ATTACH, os.getppid()), (PTRACE_TRACEME, 0),
                         *((PTRACE_ATTACH, p) for p in WORKER_PIDS)]:
        if libc.ptrace(request, pid, None, None) == 0:
            raise RuntimeError(f"ESCAPED: ptrace({request}, {pid}) succeeded")
        blocked.append(f"ptrace({request}, {pid}): {os.strerror(ctypes.get_errno())}")
    raise RuntimeError("blocked: " + "; ".join(blocked))


class Hostile(GreedyBot):
    name = "ptrace-parent"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
