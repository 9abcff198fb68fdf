"""The house bots' own draws equal ``random.sample``'s, so their games are what they were."""

from __future__ import annotations

import random

from tacocat.engine import Bot, house_bot
from tacocat.engine.bots import GreedyBot, RandomBot, StrongBot, _random_play, _strong_play


def test_the_random_bots_sample_makes_the_draws_random_sample_makes() -> None:
    for seed in range(300):
        size = 2 + seed % 8
        hand = sorted(random.Random(-seed).choices(range(1, 13), k=size))
        k = 1 + seed % size
        ours, theirs = random.Random(seed), random.Random(seed)
        assert _random_play._sample(ours, hand, k) == theirs.sample(hand, k)
        assert ours.random() == theirs.random()  # and leaves the generator in the same state


def test_strongs_sampled_hands_are_the_draws_random_sample_makes() -> None:
    # Pools above 21 cards take random.sample's set branch for hands of up to 5, its pool
    # branch above; both are replicated.
    for seed in range(400):
        pool = sorted(random.Random(-seed).choices(range(1, 13), k=1 + seed % 38))
        size = seed % (len(pool) + 1)
        count = 1 + seed % 5
        ours, theirs = random.Random(seed), random.Random(seed)
        expected = [bytes(sorted(theirs.sample(pool, size))) for _ in range(count)]
        assert _strong_play.sample_hands(ours, pool, size, count) == expected, (pool, size)
        assert ours.random() == theirs.random()
    try:
        _strong_play.sample_hands(random.Random(1), [1, 2], 3, 1)
    except ValueError as exc:
        assert str(exc) == "sample of 3 from a population of 2"
    else:
        raise AssertionError("a sample larger than the pool was drawn")


def test_the_random_bots_sample_refuses_more_than_the_population() -> None:
    try:
        _random_play._sample(random.Random(1), [1, 2], 3)
    except ValueError as exc:
        assert str(exc) == "sample of 3 from a population of 2"
    else:
        raise AssertionError("a sample larger than the hand was drawn")


def test_bot_authors_can_subclass_every_house_bot_and_bot() -> None:
    # Compiled classes cannot have interpreted subclasses: none of these may be compiled.
    for base in (Bot, RandomBot, GreedyBot, StrongBot):
        subclass = type(f"Mine{base.__name__}", (base,), {"name": "mine"})
        assert isinstance(subclass(), base)
    assert type(house_bot("random")) is RandomBot
