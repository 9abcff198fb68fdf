"""Garbage on the real protocol pipe: bytes that are no frame at all."""

import fcntl
import os
import stat
import time

from tacocat.engine.bots import GreedyBot


def frames_fd() -> int:
    for fd in sorted(map(int, os.listdir("/proc/self/fd"))):
        try:
            if fd > 2 and stat.S_ISFIFO(os.fstat(fd).st_mode) \
                    and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY:
                return fd
        except OSError:
            continue
    raise RuntimeError("no protocol pipe found")


def misbehave() -> None:
    fd = frames_fd()
    os.write(fd, b"\xff\xff\xff\x7fnot a frame at all" * 64)
    time.sleep(3600)


class Hostile(GreedyBot):
    name = "garbage-frames"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
