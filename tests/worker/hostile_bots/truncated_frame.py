"""A truncated frame on the real protocol pipe: a header announcing 64 bytes, then 10,
then silence."""

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
    os.write(fd, struct.pack(">I", 64) + b"0123456789")
    time.sleep(3600)


class Hostile(GreedyBot):
    name = "truncated-frame"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
