"""1 GB to stdout (fd 1, which the host points at stderr), then no answer."""

import os
import time

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    chunk = b"x" * (1 << 20)
    for _ in range(1024):
        os.write(1, chunk)
    time.sleep(3600)


class Hostile(GreedyBot):
    name = "stdout-flood"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
