"""Endless sleep: never answers, uses nothing."""

import time

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    while True:
        time.sleep(3600)


class Hostile(GreedyBot):
    name = "endless-sleep"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
