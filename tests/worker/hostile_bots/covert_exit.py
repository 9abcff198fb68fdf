"""Covert channel: an exit code of the bot's choosing, for the record to quote."""

import os

from tacocat.engine.bots import GreedyBot


class Hostile(GreedyBot):
    name = "covert-exit"

    def duel(self, obs):  # type: ignore[no-untyped-def]
        os._exit(173)
