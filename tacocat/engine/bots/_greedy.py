"""``house:greedy``: plays each decision for its immediate good, with no look-ahead.

The showdown goes to the lower card, and a defender who cannot cover an attack must give up
its lowest cards; so low cards win rounds and high cards protect them. Greedy keeps both ends
of its hand, throws away the middle, attacks with high cards and always defends when it can.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._bot import Bot
from .._cards import best_defence, legal_attacks, lowest_response
from .._types import Observation

_MIDDLE = range(5, 10)


class GreedyBot(Bot):
    name = "greedy"

    def replace(self, obs: Observation) -> Sequence[int]:
        middle = [c for c in obs.hand[1:] if c in _MIDDLE]
        return middle[: obs.replace_cap]

    def duel(self, obs: Observation) -> int:
        # Spend a card from the middle: the extremes are worth more later.
        return obs.hand[len(obs.hand) // 2]

    def attack(self, obs: Observation) -> Sequence[int]:
        keep = obs.hand[0]
        options = [a for a in legal_attacks(obs.hand) if keep not in a or obs.hand.count(keep) > 1]
        if not options:
            options = list(legal_attacks(obs.hand))
        # The hardest attack to cover: most cards at the highest floor.
        return max(options, key=lambda a: (min(a) + 2 * (len(a) - 1), -len(a)))

    def defend(self, obs: Observation) -> Sequence[int]:
        return best_defence(obs.hand, obs.attack) or lowest_response(obs.hand, obs.attack)
