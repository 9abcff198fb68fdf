"""Sleeps far past any test's time limit at its first duel."""

import time

from tacocat.engine.bots import GreedyBot


class SleepingBot(GreedyBot):
    name = "sleeper"

    def duel(self, obs):
        time.sleep(30)
        return super().duel(obs)
