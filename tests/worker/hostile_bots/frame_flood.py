"""1 GB on the real protocol pipe (the host's private duplicate of stdout): a frame header
announcing 1 GB, then the bytes."""

import fcntl
import os
import stat
import struct
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
    os.write(fd, struct.pack(">I", 1 << 30))
    chunk = b"\0" * (1 << 20)
    for _ in range(1024):
        os.write(fd, chunk)
    time.sleep(3600)


class Hostile(GreedyBot):
    name = "frame-flood"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
