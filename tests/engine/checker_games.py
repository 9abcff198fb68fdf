"""Records for the independent replay checker's tests (tests/independent_checker.py).

Valid records come from a small random-game generator written here from RULES.md: it does not
use the engine, so the checker is never tested against the code it is meant to check.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

from tests.independent_checker import check_record

Record = dict[str, Any]

STANDARD_RULESET: dict[str, Any] = {
    "name": "standard",
    "deck": {**{str(r): 3 for r in range(1, 13)}, "6": 4, "7": 4},
    "hand_sizes": [4, 6, 9, 7, 9, 6, 4],
    "arrows": [1, 1, 1, "both", 0, 0, 0],
    "start_space": 3,
    "tie_rule": "no_move",
    "max_rounds": 50,
}


def variant(**changes: Any) -> dict[str, Any]:
    return {**copy.deepcopy(STANDARD_RULESET), "name": "custom", **changes}


# ---------------------------------------------------------------- a random legal-game generator


def full_deck(rules: dict[str, Any]) -> list[int]:
    return [int(rank) for rank, count in rules["deck"].items() for _ in range(count)]


def legal_attacks(hand: list[int]) -> list[list[int]]:
    counts, limit = Counter(hand), len(hand) - 1
    attacks = [[rank] for rank in counts]
    for rank, count in counts.items():
        attacks += [[rank] * size for size in range(2, min(count, limit) + 1)]
    for low in counts:
        run = 1
        while low + run in counts:
            run += 1
        attacks += [list(range(low, low + size)) for size in range(3, min(run, limit) + 1)]
    return attacks


def is_legal_response(attack: list[int], response: list[int], hand: list[int]) -> bool:
    sacrificed = sorted(r for a, r in zip(attack, response, strict=True) if r < a)
    return sacrificed == sorted(hand)[: len(sacrificed)]


def legal_response(rng: random.Random, attack: list[int], hand: list[int]) -> list[int]:
    for _ in range(30):
        response = rng.sample(hand, len(attack))
        if is_legal_response(attack, response, hand):
            return response
    # Lowest cards against the highest attack cards: the sacrifices are always the lowest.
    response = [0] * len(attack)
    by_strength = sorted(range(len(attack)), key=lambda j: -attack[j])
    for j, card in zip(by_strength, sorted(hand), strict=False):
        response[j] = card
    return response


def remove(hand: list[int], cards: list[int]) -> None:
    for card in cards:
        hand.remove(card)


def play_round(rng: random.Random, rules: dict[str, Any], space: int) -> tuple[Record, int | None]:
    deck = full_deck(rules)
    rng.shuffle(deck)
    h = rules["hand_sizes"][space]
    hands, pile = [deck[0 : 2 * h : 2], deck[1 : 2 * h : 2]], deck[2 * h :]
    arrow = rules["arrows"][space]
    order = (0, 1) if arrow == "both" else (arrow, 1 - arrow)
    discards: list[list[int]] = [[], []]
    cap = h
    for seat in order:
        discards[seat] = rng.sample(hands[seat], rng.randint(0, cap))
        if arrow != "both":
            cap = len(discards[seat])
    for seat in order:
        remove(hands[seat], discards[seat])
        hands[seat] += pile[: len(discards[seat])]
        pile = pile[len(discards[seat]) :]
    duels, attacker = [], None
    while attacker is None and len(hands[0]) > 1:
        pair = [rng.choice(hands[0]), rng.choice(hands[1])]
        remove(hands[0], pair[:1])
        remove(hands[1], pair[1:])
        duels.append(pair)
        if pair[0] != pair[1]:
            attacker = 0 if pair[0] > pair[1] else 1
    tricks = []
    while len(hands[0]) > 1:
        assert attacker is not None
        attack = rng.choice(legal_attacks(hands[attacker]))
        rng.shuffle(attack)
        defender = 1 - attacker
        response = legal_response(rng, attack, hands[defender])
        remove(hands[attacker], attack)
        remove(hands[defender], response)
        tricks.append({"attacker": attacker, "attack": attack, "response": response})
        if all(r >= a for a, r in zip(attack, response, strict=True)):
            attacker = defender
    showdown = [hands[0][0], hands[1][0]]
    winner = 0 if showdown[0] < showdown[1] else 1 if showdown[0] > showdown[1] else None
    if winner is None and rules["tie_rule"] == "arrow" and arrow != "both":
        winner = arrow
    rnd = {
        "space": space,
        "deck": deck,
        "replace": discards,
        "duels": duels,
        "tricks": tricks,
        "showdown": showdown,
        "winner": winner,
    }
    return rnd, winner


def random_game(seed: int, rules: dict[str, Any] | None = None) -> Record:
    rng = random.Random(seed)
    rules = copy.deepcopy(rules or STANDARD_RULESET)
    space, covered, rounds = rules["start_space"], set(), []
    result = {"winner": None, "reason": "round_limit", "detail": ""}
    for _ in range(rules["max_rounds"]):
        rnd, winner = play_round(rng, rules, space)
        rounds.append(rnd)
        if winner is None:
            continue
        covered.add(space)
        step = -1 if winner == 0 else 1
        space += step
        while 0 <= space < 7 and space in covered:
            space += step
        if not 0 <= space < 7:
            result = {"winner": winner, "reason": "goal", "detail": ""}
            break
    return {
        "format": "tacocat-replay/1",
        "ruleset": rules,
        "seed": f"test/{seed}",
        "players": ["alice/random@1", "bob/random@1"],
        "rounds": rounds,
        "result": result,
    }


def find_game(predicate: Callable[[Record], Any], rules: dict[str, Any] | None = None) -> Record:
    """The first generated game (seeds 0, 1, ...) for which `predicate` is truthy."""
    for seed in range(3000):
        record = random_game(seed, rules)
        if predicate(record):
            return record
    raise AssertionError("no generated game has the wanted property")


def assert_flagged(record: Record, *fragments: str) -> None:
    problems = check_record(record)
    assert any(all(f in p for f in fragments) for p in problems), problems


def dealt(rnd: Record, rules: dict[str, Any] = STANDARD_RULESET) -> list[list[int]]:
    h = rules["hand_sizes"][rnd["space"]]
    return [rnd["deck"][0 : 2 * h : 2], rnd["deck"][1 : 2 * h : 2]]


def trick(attacker: int, attack: list[int], response: list[int]) -> Record:
    return {"attacker": attacker, "attack": attack, "response": response}
