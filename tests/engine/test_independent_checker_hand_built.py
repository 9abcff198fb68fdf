"""Tests of the independent replay checker (tests/independent_checker.py) on hand-built rounds.

A forfeited game of one round, dealt from chosen hands, pins each rule of a round (replace,
duels, tricks, showdown, truncation at the forfeit) to one exact position and problem.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest

from tests.engine.checker_games import (
    STANDARD_RULESET,
    Record,
    assert_flagged,
    full_deck,
    trick,
    variant,
)
from tests.independent_checker import check_record

# ------------------------------------------------------- hand-built round of a forfeited game

S0 = [12, 10, 9, 8, 7, 6, 5]
S1 = [1, 2, 3, 4, 5, 6, 11]


def forfeit_record(
    seat0: list[int] = S0,
    seat1: list[int] = S1,
    pile_top: list[int] | None = None,
    rules: dict[str, Any] = STANDARD_RULESET,
    **fields: Any,
) -> Record:
    """A forfeited game of one round on the start space, dealt from the given hands."""
    pile_top = pile_top or []
    assert len(seat0) == len(seat1) == rules["hand_sizes"][rules["start_space"]]
    rest = Counter(full_deck(rules)) - Counter(seat0) - Counter(seat1) - Counter(pile_top)
    deck = [c for pair in zip(seat0, seat1, strict=True) for c in pair]
    deck += pile_top + sorted(rest.elements())
    assert Counter(deck) == Counter(full_deck(rules))
    rnd = {"space": rules["start_space"], "deck": deck, "replace": [[], []], **fields}
    return {
        "format": "tacocat-replay/1",
        "ruleset": copy.deepcopy(rules),
        "seed": "hand-built",
        "players": ["a", "b"],
        "rounds": [rnd],
        "result": {"winner": 1, "reason": "forfeit", "detail": "timeout"},
    }


# After duel [12, 1]: seat 0 holds 5..10 and attacks; seat 1 holds 2, 3, 4, 5, 6, 11.
GOOD_TRICKS = [trick(0, [10], [2]), trick(0, [9, 7, 8], [11, 3, 4]), trick(0, [6], [6])]


def test_hand_built_complete_round_is_valid() -> None:
    record = forfeit_record(duels=[[12, 1]], tricks=GOOD_TRICKS, showdown=[5, 5], winner=None)
    assert check_record(record) == []


@pytest.mark.parametrize("cut", [0, 1, 2])
def test_truncated_last_round_of_a_forfeit_is_accepted(cut: int) -> None:
    assert check_record(forfeit_record(duels=[[12, 1]], tricks=GOOD_TRICKS[:cut])) == []
    unanswered = trick(0, [[10], [9], [6]][cut], None)
    record = forfeit_record(duels=[[12, 1]], tricks=[*GOOD_TRICKS[:cut], unanswered])
    assert check_record(record) == []
    assert check_record(forfeit_record(duels=[[5, 5]])) == []  # a tie, then the forfeit
    assert check_record(forfeit_record(duels=None, showdown=None, winner=None)) == []
    assert check_record(forfeit_record(replace=None)) == []


def test_truncated_round_may_not_skip_a_stage() -> None:
    record = forfeit_record(duels=[[12, 1]], tricks=GOOD_TRICKS[:1], showdown=[5, 5])
    assert_flagged(record, "round 0", "'showdown' is recorded although")


def test_truncated_round_must_still_be_legal() -> None:
    assert_flagged(
        forfeit_record(duels=[[12, 1]], tricks=[trick(0, [10], [3])]), "round 0 trick 0", "lowest"
    )


@pytest.mark.parametrize(
    ("tricks", "fragments"),
    [
        ([trick(0, [10], [3])], ("round 0 trick 0", "sacrificed [3]", "lowest card(s) [2]")),
        ([trick(0, [9, 7, 8], [11, 4, 3])], ("trick 0", "sacrificed [3, 4]", "[2, 3]")),
        ([trick(0, [6, 5], [6, 11])], ("trick 0", "sequence of only 2")),
        ([trick(0, [5, 7, 9], [2, 3, 4])], ("trick 0", "neither a single card")),
        ([trick(0, [5, 6, 7, 8, 9, 10], [2, 3, 4, 5, 6, 11])], ("trick 0", "would empty")),
        ([trick(1, [11], [5])], ("round 0 trick 0", "attacker is 1", "seat 0 should attack")),
        ([trick(0, [11], [11])], ("trick 0", "attack [11]", "not in seat 0's hand")),
        ([trick(0, [10], [12])], ("trick 0", "response [12]", "not in seat 1's hand")),
        ([trick(0, [10, 10], [11, 2])], ("trick 0", "attack [10, 10]", "not in seat 0's")),
        ([trick(0, [10], [11, 2])], ("trick 0", "has 2 cards for the 1-card attack")),
        ([trick(0, [5], [6]), trick(0, [10], [2])], ("round 0 trick 1", "seat 1 should attack")),
        ([trick(0, [10], [2]), trick(1, [11], [5])], ("round 0 trick 1", "seat 0 should attack")),
    ],
)
def test_illegal_tricks_are_flagged(tricks: list[Record], fragments: tuple[str, ...]) -> None:
    assert_flagged(forfeit_record(duels=[[12, 1]], tricks=tricks), *fragments)


def test_defended_trick_passes_the_attack() -> None:
    tricks = [trick(0, [5], [6]), trick(1, [11], [6]), trick(1, [2, 3, 4], [7, 8, 9])]
    assert check_record(forfeit_record(duels=[[12, 1]], tricks=tricks)) == []


def test_extra_trick_and_wrong_showdown_are_flagged() -> None:
    extra = [*GOOD_TRICKS, trick(1, [5], [5])]
    assert_flagged(
        forfeit_record(duels=[[12, 1]], tricks=extra, showdown=[5, 5], winner=None),
        "round 0 trick 3",
        "extra trick",
    )
    assert_flagged(
        forfeit_record(duels=[[12, 1]], tricks=GOOD_TRICKS, showdown=[5, 6], winner=0),
        "round 0",
        "showdown is [5, 6]",
        "[5, 5]",
    )
    assert_flagged(
        forfeit_record(duels=[[12, 1]], tricks=GOOD_TRICKS, showdown=[5, 5], winner=0),
        "round 0",
        "winner is 0",
        "gives None",
    )


@pytest.mark.parametrize(
    ("duels", "attack", "fragments"),
    [
        ([[12, 12]], [10], ("round 0", "duel 0 seat 1 card [12]", "not in seat 1's hand")),
        ([[1, 12]], [10], ("duel 0 seat 0 card [1]", "not in seat 0's hand")),
        ([[5, 11]], [10], ("round 0 trick 0", "seat 1 should attack")),
        ([[12, 1], [10, 2]], [9], ("round 0", "extra duel 1", "already decided")),
        ([[6, 6], [12, 1]], [6], ("round 0 trick 0", "attack [6]", "not in seat 0's hand")),
    ],
)
def test_illegal_duels_are_flagged(
    duels: list[list[int]], attack: list[int], fragments: tuple[str, ...]
) -> None:
    assert_flagged(forfeit_record(duels=duels, tricks=[trick(0, attack, [2])]), *fragments)


def test_tied_duels_repeat_until_decided() -> None:
    record = forfeit_record(duels=[[6, 6], [5, 5], [12, 1]], tricks=[trick(0, [9], [2])])
    assert check_record(record) == []


def test_no_duel_when_both_hold_one_card() -> None:
    rules = variant(hand_sizes=[4, 6, 9, 2, 9, 6, 4])
    fields = {"tricks": [], "showdown": [9, 3], "winner": 1}
    record = forfeit_record([5, 9], [5, 3], rules=rules, duels=[[5, 5]], **fields)
    assert check_record(record) == []
    record["rounds"][0]["duels"].append([9, 3])
    assert_flagged(record, "round 0", "extra duel 1", "both seats hold one card")
    rules = variant(hand_sizes=[4, 6, 9, 1, 9, 6, 4])
    record = forfeit_record([4], [4], rules=rules, duels=[], tricks=[], showdown=[4, 4])
    record["rounds"][0]["winner"] = None
    assert check_record(record) == []
    record["rounds"][0]["duels"] = [[4, 4]]
    assert_flagged(record, "round 0", "extra duel 0", "both seats hold one card")


# ----------------------------------------------------------------------------------- replace


def test_replace_draws_seat_0_first_from_the_pile_top() -> None:
    hands = {"seat0": [2, 3, 4, 5, 6, 7, 8], "seat1": [6, 7, 8, 9, 10, 11, 3]}
    good = forfeit_record(**hands, pile_top=[1, 12], replace=[[2], [3]], duels=[[1, 12]])
    assert check_record(good) == []
    bad = forfeit_record(**hands, pile_top=[1, 12], replace=[[2], [3]], duels=[[12, 1]])
    assert_flagged(bad, "duel 0 seat 0 card [12]", "not in seat 0's hand")


def test_replace_must_discard_cards_in_hand() -> None:
    assert_flagged(
        forfeit_record(replace=[[1], []]), "round 0", "replace[0] [1]", "not in seat 0's hand"
    )
    assert_flagged(forfeit_record(replace=[[5, 5], []]), "replace[0] [5, 5]", "uses [5]")
