"""Fork bomb: every child forks on and holds its slot; the parent reports where it stopped."""

import os
import time

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    forks = 0
    while True:
        try:
            pid = os.fork()
        except OSError as exc:
            if forks > 10_000:
                raise RuntimeError(f"ESCAPED: {forks} processes and counting") from exc
            raise RuntimeError(f"blocked: {type(exc).__name__} after {forks} forks") from exc
        if pid == 0:  # a child: fork on, then hold the slot forever
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(1)
        forks += 1
        if forks > 10_000:
            raise RuntimeError(f"ESCAPED: {forks} processes and counting")


class Hostile(GreedyBot):
    name = "fork-bomb"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
