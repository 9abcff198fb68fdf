"""Background spinner: answers every decision in time, but leaves children and threads
spinning in between, taking the core from the opponent and the referee."""

import os
import threading

from tacocat.engine.bots import GreedyBot

_started = False


def _spin() -> None:
    n = 0
    while True:
        n += 1


def misbehave() -> None:
    global _started
    if _started:
        return
    _started = True
    for _ in range(3):
        if os.fork() == 0:
            _spin()
    for _ in range(2):
        threading.Thread(target=_spin, daemon=True).start()


class Hostile(GreedyBot):
    name = "background-spinner"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
