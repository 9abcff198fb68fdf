"""The house bots: they only play legal moves, they are ranked random < greedy < strong, and
``house:strong`` is deterministic for a given seed.

Strength is measured the way ``tacocat play`` does it: duplicate pairs (both games of a pair
share their shuffles, seats swapped), a 95% interval from the spread of the pair means. The
seeds are fixed, so these matches are reproducible; the game counts leave a wide margin (the
measured scores, over thousands of games, are about 0.998 for greedy against random and 0.8
for strong against greedy).
"""

from __future__ import annotations

import math
import random
import statistics
from itertools import permutations

import pytest

from tacocat.engine import (
    BOTH,
    HOUSE_BOTS,
    STANDARD,
    Bot,
    Reason,
    Ruleset,
    _solver,
    duplicate_pairs,
    house_bot,
    legal_attacks,
    legal_defences,
)
from tacocat.engine.bots import GreedyBot, RandomBot, StrongBot
from tacocat.referee import play_in_process

Z95 = 1.959964


def match_score(bot_a: Bot, bot_b: Bot, games: int, seed: str,
                rules: Ruleset = STANDARD) -> tuple[float, float, float]:
    """A's mean score and its 95% interval, from the pair means; no game may be forfeited."""
    pairs: dict[int, list[float]] = {}
    for game in play_in_process(bot_a, bot_b, duplicate_pairs(games, seed), rules=rules).games:
        result = game.record.result
        assert result.reason is not Reason.FORFEIT, result.detail
        pairs.setdefault(game.index // 2, []).append(game.a_score)
    means = [sum(scores) / len(scores) for scores in pairs.values()]
    mean = statistics.fmean(means)
    half = Z95 * statistics.stdev(means) / math.sqrt(len(means))
    return mean, mean - half, mean + half


# ------------------------------------------------------------------------------ legality


VARIANTS = {
    "standard": STANDARD,
    "small-hands-arrow-ties": Ruleset.from_dict({
        **STANDARD.to_dict(), "name": "small", "hand_sizes": [1, 2, 3, 4, 3, 2, 1],
        "tie_rule": "arrow"}),
    "wide-ranks": Ruleset.from_dict({
        "name": "wide", "deck": {str(r): 2 for r in range(1, 25)},
        "hand_sizes": [5, 7, 9, 8, 9, 7, 5], "arrows": [1, 1, BOTH, BOTH, 0, 0, 0],
        "start_space": 3, "tie_rule": "no_move", "max_rounds": 30}),
    "sparse-deck": Ruleset.from_dict({
        "name": "sparse", "deck": {"1": 1, "2": 4, "5": 4, "6": 1, "7": 4, "9": 1, "12": 4},
        "hand_sizes": [2, 3, 4, 4, 4, 3, 2], "arrows": [1, BOTH, 1, BOTH, 0, BOTH, 0],
        "start_space": 3, "tie_rule": "arrow", "max_rounds": 20}),
}


@pytest.mark.parametrize("name", sorted(HOUSE_BOTS))
def test_every_house_bot_plays_only_legal_actions(name: str) -> None:
    # Against the random bot, which walks into odd positions; the match loop turns any illegal
    # action or crash into a recorded forfeit, which match_score refuses.
    match_score(house_bot(name), RandomBot(11), 100, "legal")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_strong_plays_legally_under_other_rulesets(variant: str) -> None:
    rules = VARIANTS[variant]
    match_score(StrongBot(3), RandomBot(5), 20, f"variant-{variant}", rules)
    match_score(StrongBot(4), GreedyBot(), 20, f"variant-{variant}", rules)


def test_the_house_bots_are_registered() -> None:
    assert {"random", "greedy", "strong"} <= set(HOUSE_BOTS)
    assert isinstance(house_bot("strong"), StrongBot)


# ------------------------------------------------------------------------------ strength


def test_greedy_beats_random() -> None:
    score, low, _ = match_score(house_bot("greedy"), house_bot("random"), 40, "rank-greedy")
    assert low > 0.5, f"greedy scored {score:.3f} against random (interval from {low:.3f})"


def test_strong_beats_greedy() -> None:
    score, low, _ = match_score(house_bot("strong"), house_bot("greedy"), 100, "rank-strong")
    assert low > 0.5, f"strong scored {score:.3f} against greedy (interval from {low:.3f})"


# ------------------------------------------------------------------------------ determinism


def _records(bot: Bot, games: int = 6) -> list[str]:
    return [g.record.dumps() for g in
            play_in_process(bot, GreedyBot(), duplicate_pairs(games, "same-seed")).games]


def test_strong_is_deterministic_given_its_seed() -> None:
    first = _records(StrongBot(42))
    assert _records(StrongBot(42)) == first
    # Each game depends only on the seed and the game, not on the games played before it.
    bot = StrongBot(42)
    _records(bot, 4)
    assert _records(bot) == first


def test_strong_leaves_the_global_random_alone() -> None:
    state = random.getstate()
    _records(StrongBot(1), 2)
    assert random.getstate() == state


# ------------------------------------------------------------------------------ the solver


def _reference_value(att: tuple[int, ...], dfn: tuple[int, ...]) -> int:
    """Plain minimax over the engine's own move lists: 1 attacker wins, 0 tie, -1 loss."""
    if len(att) == 1:
        return (att[0] < dfn[0]) - (att[0] > dfn[0])
    best = -1
    for attack in legal_attacks(att):
        rest = list(att)
        for card in attack:
            rest.remove(card)
        worst = 1
        for response in legal_defences(dfn, attack):
            left = list(dfn)
            for card in response:
                left.remove(card)
            if all(r >= a for r, a in zip(response, attack, strict=True)):
                value = -_reference_value(tuple(left), tuple(rest))
            else:
                value = _reference_value(tuple(rest), tuple(left))
            worst = min(worst, value)
        best = max(best, worst)
    return best


def test_the_endgame_solver_agrees_with_plain_minimax() -> None:
    rng = random.Random(2024)
    deck = list(STANDARD.cards)
    for size, count in ((2, 40), (3, 40), (4, 60), (5, 8)):
        for _ in range(count):
            cards = rng.sample(deck, 2 * size)
            att, dfn = tuple(sorted(cards[:size])), tuple(sorted(cards[size:]))
            assert _solver.value(bytes(att), bytes(dfn)) == _reference_value(att, dfn), (att, dfn)


def test_the_solver_realises_every_answer_class_as_a_legal_response() -> None:
    rng = random.Random(7)
    deck = list(STANDARD.cards)
    for _ in range(200):
        hand = tuple(sorted(rng.sample(deck, 6)))
        attacks = legal_attacks(tuple(sorted(rng.sample(deck, 6))))
        attack = attacks[rng.randrange(len(attacks))]
        for order in {attack, *list(permutations(attack))[:3]}:
            legal = set(legal_defences(hand, order))
            for left, full in _solver.responses(bytes(hand), bytes(order)):
                response = _solver.realize(hand, order, left, full)
                assert response is not None
                assert response in legal or any(
                    sorted(zip(order, response, strict=True))
                    == sorted(zip(order, r, strict=True)) for r in legal)
                defended = all(r >= a for r, a in zip(response, order, strict=True))
                assert defended == full
