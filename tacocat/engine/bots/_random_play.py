"""``house:random``'s choices, as functions of its generator and the observation.

Apart from :class:`~tacocat.engine.bots.RandomBot` because they are compiled with the engine
(``engine/_compiled.py``), while the class stays Python: bot authors subclass house bots, and
a compiled class cannot have interpreted subclasses.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .._cards import lowest_response, sacrifice_is_lowest
from .._types import Observation


def _sample(rng: random.Random, population: Sequence[int], k: int) -> list[int]:
    """``rng.sample(population, k)`` for the small populations of a hand: the very draws
    CPython's ``random.sample`` makes there (a partial Fisher-Yates over ``getrandbits``
    rejection sampling), without its type checks and set-based branch, which cost more
    than the draw itself on this hot path (tests/engine/test_random_bot.py compares them)."""
    pool = list(population)
    n = len(pool)
    if not 0 <= k <= n:
        raise ValueError(f"sample of {k} from a population of {n}")
    getrandbits = rng.getrandbits
    result: list[int] = []
    for i in range(k):
        left = n - i
        bits = left.bit_length()
        j = getrandbits(bits)
        while j >= left:
            j = getrandbits(bits)
        result.append(pool[j])
        pool[j] = pool[left - 1]
    return result


def replace(rng: random.Random, obs: Observation) -> Sequence[int]:
    rand = rng.random
    count = int(rand() * (obs.replace_cap + 1))
    if not count:
        return ()
    cards = list(obs.hand)
    for i in range(count):  # partial Fisher-Yates: the first ``count`` are a random draw
        j = i + int(rand() * (len(cards) - i))
        cards[i], cards[j] = cards[j], cards[i]
    return cards[:count]


def duel(rng: random.Random, obs: Observation) -> int:
    return obs.hand[int(rng.random() * len(obs.hand))]


def attack(rng: random.Random, obs: Observation) -> Sequence[int]:
    # Pick a card, then half the time a Jumbo through it: every legal attack can come out,
    # without enumerating them all (most hands are new, so a cache rarely helps here).
    hand, rand = obs.hand, rng.random
    card = hand[int(rand() * len(hand))]
    limit = len(hand) - 1
    if limit < 2 or rand() < 0.5:
        return (card,)
    most_of_set = min(hand.count(card), limit)
    low = high = card
    while low - 1 in hand:
        low -= 1
    while high + 1 in hand:
        high += 1
    longest_run = min(high - low + 1, limit)
    can_set, can_run = most_of_set >= 2, longest_run >= 3
    if can_set and (not can_run or rand() < 0.5):
        return (card,) * (2 + int(rand() * (most_of_set - 1)))
    if can_run:
        length = 3 + int(rand() * (longest_run - 2))
        first, last = max(low, card - length + 1), min(card, high - length + 1)
        start = first + int(rand() * (last - first + 1))
        return tuple(range(start, start + length))
    return (card,)


def defend(rng: random.Random, obs: Observation) -> Sequence[int]:
    hand, attack = obs.hand, obs.attack
    if len(attack) == 1:
        card = hand[int(rng.random() * len(hand))]
        return (card,) if card >= attack[0] or card == hand[0] else (hand[0],)
    # Any legal answer can come out of a random draw; retry a few, then fall back to the
    # always-legal lowest answer.
    for _ in range(4):
        response = _sample(rng, hand, len(attack))
        if sacrifice_is_lowest(hand, attack, response):
            return response
    return lowest_response(hand, attack)
