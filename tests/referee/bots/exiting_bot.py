"""Kills its own process at its first duel: the host dies mid-game."""

import os
import sys

from tacocat.engine.bots import GreedyBot


class ExitingBot(GreedyBot):
    name = "exiter"

    def duel(self, obs):
        print("goodbye, cruel world", file=sys.stderr)
        sys.stderr.flush()
        os._exit(3)
