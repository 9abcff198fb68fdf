"""CPU spin: never answers, burns its core."""

from tacocat.engine.bots import GreedyBot


def misbehave() -> None:
    n = 0
    while True:
        n += 1


class Hostile(GreedyBot):
    name = "cpu-spin"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        misbehave()
        return super().duel(obs)
