"""``house:greedy``: plays each decision for its immediate good, with no look-ahead.

The showdown goes to the lower card, and a defender who cannot cover an attack must give up
its lowest cards; so low cards win rounds and high cards protect them. Greedy keeps both ends
of its hand, throws away the middle, attacks with high cards and always defends when it can.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._bot import Bot
from .._types import Observation
from . import _greedy_play as play


class GreedyBot(Bot):
    """Greedy (the choices are :mod:`._greedy_play`'s, compiled with the engine)."""

    name = "greedy"

    def replace(self, obs: Observation) -> Sequence[int]:
        return play.replace(obs)

    def duel(self, obs: Observation) -> int:
        return play.duel(obs)

    def attack(self, obs: Observation) -> Sequence[int]:
        return play.attack(obs)

    def defend(self, obs: Observation) -> Sequence[int]:
        return play.defend(obs)
