"""``house:random``: a random legal player. The baseline, and a fuzzer for the tests."""

from __future__ import annotations

import random
from collections.abc import Sequence

from .._bot import Bot
from .._types import Observation
from . import _random_play as play


class RandomBot(Bot):
    """Chooses among legal actions at random (own RNG, so the deal never depends on it).

    The choices themselves are :mod:`._random_play`'s (compiled with the engine)."""

    name = "random"

    def __init__(self, seed: int | str | None = 0) -> None:
        self.rng = random.Random(seed)

    def replace(self, obs: Observation) -> Sequence[int]:
        return play.replace(self.rng, obs)

    def duel(self, obs: Observation) -> int:
        return play.duel(self.rng, obs)

    def attack(self, obs: Observation) -> Sequence[int]:
        return play.attack(self.rng, obs)

    def defend(self, obs: Observation) -> Sequence[int]:
        return play.defend(self.rng, obs)
