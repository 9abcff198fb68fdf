"""``house:random``'s own draw equals ``random.sample``'s, so its games are what they were."""

from __future__ import annotations

import random

from tacocat.engine.bots import _random


def test_the_random_bots_sample_makes_the_draws_random_sample_makes() -> None:
    for seed in range(300):
        size = 2 + seed % 8
        hand = sorted(random.Random(-seed).choices(range(1, 13), k=size))
        k = 1 + seed % size
        ours, theirs = random.Random(seed), random.Random(seed)
        assert _random._sample(ours, hand, k) == theirs.sample(hand, k)
        assert ours.random() == theirs.random()  # and leaves the generator in the same state


def test_the_random_bots_sample_refuses_more_than_the_population() -> None:
    try:
        _random._sample(random.Random(1), [1, 2], 3)
    except ValueError as exc:
        assert str(exc) == "sample of 3 from a population of 2"
    else:
        raise AssertionError("a sample larger than the hand was drawn")
