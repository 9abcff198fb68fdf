"""``house:strong`` plays exactly the games it played before it was made faster.

Its solver is exact and its caches only save time, so a faster implementation must not
change one decision. The digests below were taken from the records (and solver values) of
the implementation before the speed work (commit ab420d4); any difference is a behaviour
change, not noise. The same games run in the pure-Python form of the engine in
tests/engine/test_compiled.py.
"""

from __future__ import annotations

import hashlib
import random

import pytest

from tacocat.engine import BOTH, STANDARD, Ruleset, duplicate_pairs
from tacocat.engine._solver import value
from tacocat.engine.bots import GreedyBot, RandomBot, StrongBot
from tacocat.referee import play_in_process

RULES = {
    "standard": STANDARD,
    "wide": Ruleset.from_dict({
        "name": "wide", "deck": {str(r): 2 for r in range(1, 25)},
        "hand_sizes": [5, 7, 9, 8, 9, 7, 5], "arrows": [1, 1, BOTH, BOTH, 0, 0, 0],
        "start_space": 3, "tie_rule": "no_move", "max_rounds": 30}),
    "sparse": Ruleset.from_dict({
        "name": "sparse", "deck": {"1": 1, "2": 4, "5": 4, "6": 1, "7": 4, "9": 1, "12": 4},
        "hand_sizes": [2, 3, 4, 4, 4, 3, 2], "arrows": [1, BOTH, 1, BOTH, 0, BOTH, 0],
        "start_space": 3, "tie_rule": "arrow", "max_rounds": 20}),
}
BOTS = {"strong": lambda: StrongBot(7), "greedy": GreedyBot, "random": lambda: RandomBot(3)}
CASES = [  # seat A, seat B, ruleset, schedule seed, games, digest of the records
    ("strong", "random", "standard", "d1", 8, "ce7337e05adc1744"),
    ("strong", "greedy", "standard", "d2", 8, "e7540c4c09304168"),
    ("greedy", "strong", "standard", "d3", 8, "0e25058dccc2ef3c"),
    ("strong", "strong", "standard", "d4", 8, "6de3f678ad97fa13"),
    ("strong", "greedy", "wide", "d5", 4, "0bf1fd09fe34e2c7"),
    ("strong", "random", "sparse", "d6", 4, "ed5e404414b7e4eb"),
]
VALUES_DIGEST = "523fe10c10c32f89"
"""The solver's value of 60 random positions for each hand size 3-7, one byte each."""


def records_digest(a: str, b: str, rules: str, seed: str, games: int) -> str:
    digest = hashlib.sha256()
    for game in play_in_process(BOTS[a], BOTS[b], duplicate_pairs(games, seed),
                                rules=RULES[rules]).games:
        digest.update(game.record.dumps().encode())
    return digest.hexdigest()[:16]


def values_digest() -> str:
    rng = random.Random(99)
    deck = list(STANDARD.cards)
    digest = hashlib.sha256()
    for size in (3, 4, 5, 6, 7):
        for _ in range(60):
            cards = rng.sample(deck, 2 * size)
            result = value(bytes(sorted(cards[:size])), bytes(sorted(cards[size:])))
            digest.update(bytes((result + 1,)))
    return digest.hexdigest()[:16]


@pytest.mark.parametrize(("a", "b", "rules", "seed", "games", "expected"), CASES)
def test_strong_plays_the_games_it_always_played(a: str, b: str, rules: str, seed: str,
                                                  games: int, expected: str) -> None:
    assert records_digest(a, b, rules, seed, games) == expected


def test_the_solver_values_positions_as_it_always_did() -> None:
    assert values_digest() == VALUES_DIGEST
