"""Forked memory: four children each touch 100 MB, within each one's own address space.

Per-process limits let every child have its own; the bot tree's memory cgroup bounds them
together (the corpus runs with 128 MB per bot), so the kernel kills a child (or the bot).
"""

import os
import select

from tacocat.engine.bots import GreedyBot

CHILDREN, MB = 4, 100


def misbehave() -> None:
    read, write = os.pipe()
    kids = []
    for _ in range(CHILDREN):
        pid = os.fork()
        if pid == 0:  # a child: touch every page, report, then hold the memory
            os.close(read)
            block = bytearray(b"\x01") * (MB << 20)
            os.write(write, b"+")
            select.select([], [], [], 30)
            del block
            os._exit(0)
        kids.append(pid)
    os.close(write)
    held, ended = b"", []
    for _ in range(100):  # up to 10 s, far below the bot's time: the kernel acts first
        ready, _, _ = select.select([read], [], [], 0.1)
        if ready:
            held += os.read(read, CHILDREN)
        if len(held) == CHILDREN:
            raise RuntimeError(f"ESCAPED: {CHILDREN} children hold {CHILDREN * MB} MB")
        for pid in kids:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                ended.append(f"killed by signal {os.WTERMSIG(status)}"
                             if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}")
        if ended:
            raise RuntimeError(f"blocked: {len(held)} of {CHILDREN} children got {MB} MB, "
                               f"then a child was {', '.join(ended)}")
    raise RuntimeError("blocked? nothing happened within 10 s")


class Hostile(GreedyBot):
    name = "forked-memory"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
