"""``house:greedy``'s choices, as functions of the observation.

Apart from :class:`~tacocat.engine.bots.GreedyBot` because they are compiled with the engine
(``engine/_compiled.py``: the live referee plays house:greedy on every decision of a practice
match), while the class stays Python: bot authors subclass house bots, and a compiled class
cannot have interpreted subclasses.
"""

from __future__ import annotations

from collections.abc import Sequence

from .._cards import best_defence, legal_attacks, lowest_response
from .._types import Observation

_MIDDLE_LOW = 5
_MIDDLE_HIGH = 9
"""The middle ranks (5 to 9) are the ones greedy gives away."""


def replace(obs: Observation) -> Sequence[int]:
    hand = obs.hand
    middle = [c for c in hand[1:] if _MIDDLE_LOW <= c <= _MIDDLE_HIGH]
    return middle[: obs.replace_cap]


def duel(obs: Observation) -> int:
    # Spend a card from the middle: the extremes are worth more later.
    hand = obs.hand
    return hand[len(hand) // 2]


def attack(obs: Observation) -> Sequence[int]:
    hand = obs.hand
    keep = hand[0]
    spare = hand.count(keep) > 1
    attacks = legal_attacks(hand)
    options = [a for a in attacks if spare or keep not in a] or list(attacks)
    # The hardest attack to cover: most cards at the highest floor (the first such, as
    # max() picks it).
    best = options[0]
    floor, size = min(best) + 2 * (len(best) - 1), len(best)
    for option in options[1:]:
        option_floor, option_size = min(option) + 2 * (len(option) - 1), len(option)
        if option_floor > floor or (option_floor == floor and option_size < size):
            best, floor, size = option, option_floor, option_size
    return best


def defend(obs: Observation) -> Sequence[int]:
    return best_defence(obs.hand, obs.attack) or lowest_response(obs.hand, obs.attack)
