"""``house:random``: a random legal player. The baseline, and a fuzzer for the tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .._bot import Bot
from .._cards import legal_attacks, lowest_response, sacrifice_is_lowest
from .._types import Observation


class RandomBot(Bot):
    """Chooses among legal actions at random (own RNG, so the deal never depends on it)."""

    name = "random"

    def __init__(self, seed: int | str | None = 0) -> None:
        self.rng = random.Random(seed)

    def replace(self, obs: Observation) -> Sequence[int]:
        rand = self.rng.random
        count = int(rand() * (obs.replace_cap + 1))
        if not count:
            return ()
        cards = list(obs.hand)
        for i in range(count):  # partial Fisher-Yates: the first ``count`` are a random draw
            j = i + int(rand() * (len(cards) - i))
            cards[i], cards[j] = cards[j], cards[i]
        return cards[:count]

    def duel(self, obs: Observation) -> int:
        return obs.hand[int(self.rng.random() * len(obs.hand))]

    def attack(self, obs: Observation) -> Sequence[int]:
        options = legal_attacks(obs.hand)
        return options[int(self.rng.random() * len(options))]

    def defend(self, obs: Observation) -> Sequence[int]:
        hand, attack = obs.hand, obs.attack
        if len(attack) == 1:
            card = hand[int(self.rng.random() * len(hand))]
            return (card,) if card >= attack[0] or card == hand[0] else (hand[0],)
        # Any legal answer can come out of a random draw; retry a few, then fall back to the
        # always-legal lowest answer.
        for _ in range(4):
            response = self.rng.sample(hand, len(attack))
            if sacrifice_is_lowest(hand, attack, response):
                return response
        return lowest_response(hand, attack)
