"""Raises in its first attack of each game; otherwise plays greedy."""

from tacocat.engine.bots import GreedyBot


class CrashingBot(GreedyBot):
    name = "crasher"

    def attack(self, obs):
        raise RuntimeError("boom in attack")
