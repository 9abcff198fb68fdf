"""Takes 0.15 s over its first duel of each game: honest (within any test's limit), but a
batch of them takes longer than the referee waits for a frame's first answers."""

import time

from tacocat.engine.bots import GreedyBot


class SlowBot(GreedyBot):
    name = "slow"
    slept = False

    def duel(self, obs):
        if not self.slept:
            self.slept = True
            time.sleep(0.15)
        return super().duel(obs)
