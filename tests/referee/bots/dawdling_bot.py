"""Answers every decision legally after spinning 0.1 s of CPU (a fifth of a 0.5 s limit):
never over the limit, but too slow for its time bank (issue 30, item 4)."""

import time

from tacocat.engine.bots import GreedyBot

SPIN = 0.1


def _spun(decide):
    def slowly(self, obs):
        until = time.process_time() + SPIN
        while time.process_time() < until:
            pass
        return decide(self, obs)

    return slowly


class DawdlingBot(GreedyBot):
    name = "dawdler"
    replace = _spun(GreedyBot.replace)
    duel = _spun(GreedyBot.duel)
    attack = _spun(GreedyBot.attack)
    defend = _spun(GreedyBot.defend)
