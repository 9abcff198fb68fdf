"""``house:strong``'s card counting and hand sampling, as functions of the observation.

Apart from :class:`~tacocat.engine.bots.StrongBot` because they are compiled with the engine
(``engine/_compiled.py``): drawing the sampled hands through ``random.sample`` cost strong
as much as a third of its solver's time. The class stays Python: bot authors subclass house
bots, and a compiled class cannot have interpreted subclasses.
"""

from __future__ import annotations

import math
import random

from .._types import Observation
from ._random_play import _sample


def unseen(obs: Observation) -> list[int]:
    """The cards this seat has not seen (the deck minus its hand, the face-up discards and
    the attack on the table), without those below a card the opponent sacrificed: nothing
    it still holds is lower (sacrifices are the lowest cards)."""
    counts: dict[int, int] = {}
    for card in obs.ruleset.cards:
        counts[card] = counts.get(card, 0) + 1
    for card in obs.hand:
        counts[card] -= 1
    for card in obs.discards:
        counts[card] -= 1
    for card in obs.attack:
        counts[card] -= 1
    floor = 0
    for trick in obs.tricks:
        if trick.attacker == obs.seat:
            for r, a in zip(trick.response, trick.attack, strict=True):
                if floor < r < a:
                    floor = r
    pool: list[int] = []
    for card, n in counts.items():
        if card >= floor:
            pool.extend([card] * n)
    if len(pool) < obs.opponent_cards:  # cannot happen with a consistent history
        pool = []
        for card, n in counts.items():
            pool.extend([card] * n)
    return pool


def sample_hands(rng: random.Random, pool: list[int], size: int, count: int) -> list[bytes]:
    """``count`` draws of ``bytes(sorted(rng.sample(pool, size)))``: the very draws CPython's
    ``random.sample`` makes (both of its branches, chosen as it chooses them), without its
    per-call checks (tests/engine/test_random_bot.py compares them)."""
    n = len(pool)
    if not 0 <= size <= n:
        raise ValueError(f"sample of {size} from a population of {n}")
    getrandbits = rng.getrandbits
    bits = n.bit_length()
    setsize = 21
    if size > 5:
        setsize += 4 ** math.ceil(math.log(size * 3, 4))
    hands: list[bytes] = []
    for _ in range(count):
        if n <= setsize:
            drawn = _sample(rng, pool, size)  # random.sample's pool branch
        else:
            # Its set branch: distinct positions by rejection.
            drawn = []
            taken: set[int] = set()
            for _ in range(size):
                j = getrandbits(bits)
                while j >= n or j in taken:
                    j = getrandbits(bits)
                taken.add(j)
                drawn.append(pool[j])
        drawn.sort()
        hands.append(bytes(drawn))
    return hands
