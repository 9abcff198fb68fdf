"""Tests of the independent replay checker (tests/independent_checker.py).

Valid records come from a small random-game generator written here from RULES.md (it does not
use the engine) and from hand-built rounds; mutated copies must be flagged with the right problem.
"""

from __future__ import annotations

import copy
import json
import random
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.independent_checker import check_file, check_record, check_ruleset, main

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


# ------------------------------------------------------------------------- valid records pass


@settings(max_examples=60, deadline=None, database=None)
@given(st.integers(0, 2**32))
def test_random_standard_games_are_valid(seed: int) -> None:
    record = random_game(seed)
    assert check_record(record) == []
    assert check_record(json.loads(json.dumps(record))) == []


@settings(max_examples=40, deadline=None, database=None)
@given(st.integers(0, 2**32), st.sampled_from(["no_move", "arrow"]), st.integers(1, 4))
def test_random_variant_games_are_valid(seed: int, tie_rule: str, max_rounds: int) -> None:
    record = random_game(
        seed, variant(tie_rule=tie_rule, max_rounds=max_rounds, hand_sizes=[2, 3, 9, 5, 1, 4, 9])
    )
    assert check_record(record) == []


def test_generator_covers_the_interesting_cases() -> None:
    games = [random_game(seed) for seed in range(150)]
    rounds = [rnd for game in games for rnd in game["rounds"]]
    assert {g["result"]["reason"] for g in games} == {"goal"}
    assert any(len(rnd["duels"]) > 1 for rnd in rounds)  # tied duels
    assert any(rnd["winner"] is None for rnd in rounds)  # tied showdowns
    attacks = [t["attack"] for rnd in rounds for t in rnd["tricks"]]
    assert any(len(set(a)) == 1 and len(a) > 1 for a in attacks)  # sets
    assert any(len(set(a)) > 2 for a in attacks)  # sequences


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


def trick(attacker: int, attack: list[int], response: list[int]) -> Record:
    return {"attacker": attacker, "attack": attack, "response": response}


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


def one_arrow_round(record: Record) -> int | None:
    for i, rnd in enumerate(record["rounds"]):
        arrow = STANDARD_RULESET["arrows"][rnd["space"]]
        if arrow != "both" and len(rnd["replace"][arrow]) < 4:
            return i
    return None


def test_replace_over_the_cap_on_a_one_arrow_space() -> None:
    record = find_game(one_arrow_round)
    i = one_arrow_round(record)
    assert i is not None
    rnd = record["rounds"][i]
    arrow = STANDARD_RULESET["arrows"][rnd["space"]]
    k = len(rnd["replace"][arrow])
    rnd["replace"][1 - arrow] = dealt(rnd)[1 - arrow][: k + 1]
    assert_flagged(
        record,
        f"round {i}",
        f"seat {1 - arrow} discarded {k + 1} cards",
        f"the {k} discarded by seat {arrow}",
    )


def test_both_seats_discard_freely_on_the_two_arrow_space() -> None:
    record = find_game(lambda r: len(r["rounds"]) > 1)
    rnd = record["rounds"][0]
    rnd["replace"] = [dealt(rnd)[0][:1], dealt(rnd)[1][:]]  # 1 and 7 discards
    rnd["duels"], rnd["tricks"], rnd["showdown"], rnd["winner"] = [], [], None, None
    record["rounds"] = [rnd]
    record["result"] = {"winner": 0, "reason": "forfeit", "detail": "crash"}
    assert check_record(record) == []


# ----------------------------------------------------------------- rounds, moves and results


def test_deck_must_be_a_permutation_of_the_full_deck() -> None:
    record = random_game(3)
    record["rounds"][0]["deck"][-1] = 13
    assert_flagged(record, "round 0", "deck is not a permutation", "extra [13]")


def test_wrong_space_after_a_move_is_flagged() -> None:
    record = find_game(lambda r: r["rounds"][0]["winner"] is not None)
    record["rounds"][1]["space"] = 3
    assert_flagged(record, "round 1", "space is 3", "(a covered space)")
    record["rounds"][1]["space"] = 2 if record["rounds"][0]["winner"] == 1 else 4
    assert_flagged(record, "round 1", "Tacocat should be on space")


def skipped_round(record: Record) -> int | None:
    rounds = record["rounds"]
    for i in range(1, len(rounds)):
        if abs(rounds[i]["space"] - rounds[i - 1]["space"]) > 1:
            return i
    return None


def test_covered_space_entered_is_flagged() -> None:
    record = find_game(skipped_round)
    i = skipped_round(record)
    assert i is not None
    before, after = record["rounds"][i - 1]["space"], record["rounds"][i]["space"]
    record["rounds"][i]["space"] = before + (1 if after > before else -1)
    assert_flagged(record, f"round {i}", "(a covered space)", f"should be on space {after}")


def test_wrong_round_winner_is_flagged() -> None:
    record = find_game(lambda r: r["rounds"][0]["winner"] is not None)
    record["rounds"][0]["winner"] = 1 - record["rounds"][0]["winner"]
    assert_flagged(record, "round 0", "winner is")


def test_tie_rule_arrow_gives_the_tie_to_the_arrow_seat() -> None:
    rules = variant(tie_rule="arrow")

    def tie_on_one_arrow(r: Record) -> bool:
        return any(x["showdown"][0] == x["showdown"][1] and x["space"] != 3 for x in r["rounds"])

    record = find_game(tie_on_one_arrow, rules)
    assert check_record(record) == []
    i = next(
        i
        for i, x in enumerate(record["rounds"])
        if x["showdown"][0] == x["showdown"][1] and x["space"] != 3
    )
    record["rounds"][i]["winner"] = None
    assert_flagged(record, f"round {i}", "winner is None", "tie_rule 'arrow'")


def test_missing_and_extra_tricks_are_flagged() -> None:
    record = find_game(lambda r: len(r["rounds"][0]["tricks"]) >= 2)
    missing = copy.deepcopy(record)
    missing["rounds"][0]["tricks"].pop()
    assert_flagged(missing, "round 0", "trick(s) recorded, but play continues")
    record["rounds"][0]["tricks"].append(trick(0, [1], [1]))
    assert_flagged(record, "round 0 trick", "extra trick")


def test_missing_fields_of_a_complete_game_are_flagged() -> None:
    record = random_game(5)
    del record["rounds"][0]["showdown"]
    assert_flagged(record, "round 0", "missing 'showdown'")


def test_game_result_must_match_the_goal() -> None:
    record = random_game(7)
    goal = record["result"]["winner"]
    record["result"]["winner"] = 1 - goal
    assert_flagged(record, "result", f"entered seat {goal}'s goal")
    record["result"] = {"winner": None, "reason": "round_limit", "detail": ""}
    assert_flagged(record, "result", f"entered seat {goal}'s goal", "'round_limit'")
    record["result"] = {"winner": goal, "reason": "forfeit", "detail": "timeout"}
    assert_flagged(record, "result", "must be winner")


def test_records_may_not_end_early_or_continue() -> None:
    record = random_game(8)
    early = copy.deepcopy(record)
    early["rounds"].pop()
    assert_flagged(early, "result", "never entered a goal", "ends early")
    late = copy.deepcopy(record)
    late["rounds"].append(copy.deepcopy(late["rounds"][-1]))
    assert_flagged(late, f"round {len(record['rounds'])}", "after the game ended")


def test_round_limit_results() -> None:
    rules = variant(max_rounds=2)
    record = find_game(lambda r: r["result"]["reason"] == "round_limit", rules)
    assert check_record(record) == []
    wrong = copy.deepcopy(record)
    wrong["result"]["winner"] = 0
    assert_flagged(wrong, "result", "'round_limit' must have winner null")
    wrong["result"] = {"winner": 0, "reason": "goal", "detail": ""}
    assert_flagged(wrong, "result", "must be 'round_limit'")
    wrong["result"] = {"winner": 0, "reason": "forfeit", "detail": "timeout"}
    assert_flagged(wrong, "result", "must be 'round_limit'")
    longer = copy.deepcopy(record)
    longer["rounds"].append(copy.deepcopy(longer["rounds"][-1]))
    assert_flagged(longer, "round 2", "after the round limit")
    short = copy.deepcopy(record)
    short["rounds"].pop()
    assert_flagged(short, "result", "'round_limit' after only 1 rounds")


def test_forfeit_and_aborted_results() -> None:
    record = find_game(lambda r: len(r["rounds"]) >= 3)
    record["rounds"] = record["rounds"][:2]
    record["rounds"][1]["tricks"] = record["rounds"][1]["tricks"][:1]
    del record["rounds"][1]["showdown"]
    record["rounds"][1]["winner"] = None
    record["result"] = {"winner": 0, "reason": "forfeit", "detail": "illegal action"}
    assert check_record(record) == []
    record["result"]["detail"] = ""
    assert_flagged(record, "result", "forfeit needs a detail")
    record["result"] = {"winner": None, "reason": "aborted", "detail": "shutdown"}
    assert check_record(record) == []
    record["result"]["winner"] = 1
    assert_flagged(record, "result", "'aborted' must have winner null")
    record["result"] = {"winner": 1, "reason": "goal", "detail": ""}
    assert_flagged(record, "round 1", "trick(s) recorded, but play continues")
    record["result"] = {"winner": None, "reason": "draw", "detail": ""}
    assert_flagged(record, "result", "reason must be one of")


def test_a_truncated_round_is_only_allowed_last() -> None:
    record = find_game(lambda r: len(r["rounds"]) >= 3)
    del record["rounds"][0]["winner"]
    record["result"] = {"winner": 0, "reason": "forfeit", "detail": "timeout"}
    assert_flagged(record, "round 0", "missing 'winner'")


def test_header_fields_are_checked() -> None:
    record = random_game(9)
    record["format"] = "tacocat-replay/0"
    record["players"] = ["solo"]
    problems = check_record(record)
    assert any("format must be" in p for p in problems)
    assert any("players must be" in p for p in problems)
    assert check_record([]) == ["record must be a JSON object, got list"]


# ------------------------------------------------------------------------------------ ruleset


def test_standard_ruleset_is_valid() -> None:
    rules, problems = check_ruleset(STANDARD_RULESET)
    assert problems == []
    assert rules is not None and rules.deck.total() == 38 and rules.arrow_seat(0) == 1


@pytest.mark.parametrize(
    ("changes", "fragments"),
    [
        ({"hand_sizes": [4, 6, 9, 7, 9, 6]}, ("ruleset.hand_sizes", "7 positive integers")),
        ({"hand_sizes": [4, 6, 10, 7, 9, 6, 4]}, ("ruleset.hand_sizes", "run the draw pile out")),
        ({"deck": {**STANDARD_RULESET["deck"], "13": 1}}, ("ruleset.deck", "unknown rank '13'")),
        ({"deck": {**STANDARD_RULESET["deck"], "x": 1}}, ("ruleset.deck", "unknown rank 'x'")),
        ({"deck": {**STANDARD_RULESET["deck"], "5": 0}}, ("ruleset.deck", "positive integer")),
        ({"arrows": [1, 1, 1, "both", 0, 0, 2]}, ("ruleset.arrows",)),
        ({"arrows": [1, 1, 1, "both", 0, 0]}, ("ruleset.arrows",)),
        ({"start_space": 2}, ("ruleset.start_space", "single arrow")),
        ({"start_space": 7}, ("ruleset.start_space",)),
        ({"tie_rule": "coin"}, ("ruleset.tie_rule",)),
        ({"max_rounds": 0}, ("ruleset.max_rounds",)),
        ({"max_rounds": True}, ("ruleset.max_rounds",)),
        ({"name": "standard", "max_rounds": 40}, ("ruleset.max_rounds", "'standard' ruleset")),
    ],
)
def test_bad_rulesets_are_flagged(changes: dict[str, Any], fragments: tuple[str, ...]) -> None:
    rules, problems = check_ruleset(variant(**changes))
    assert rules is None
    assert any(all(f in p for f in fragments) for p in problems), problems
    record = random_game(2)
    record["ruleset"] = variant(**changes)
    assert_flagged(record, *fragments)


# ------------------------------------------------------------------------- files and the CLI


def test_check_file_and_main(tmp_path: Path) -> None:
    bad = random_game(11)
    bad["rounds"][0]["duels"].append([1, 1])
    good = [json.dumps(random_game(seed)) for seed in (10, 12)]
    lines = [good[0], "", json.dumps(bad), "{not json", good[1]]
    path = tmp_path / "records.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    count, problems = check_file(path)
    assert count == 4
    assert sorted(problems) == [1, 2]
    assert any("extra duel" in p for p in problems[1])
    assert "not valid JSON" in problems[2][0]
    assert main([str(path)]) == 1
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps(random_game(13)) + "\n", encoding="utf-8")
    assert main([str(good)]) == 0
    script = Path(__file__).resolve().parents[1] / "independent_checker.py"
    run = subprocess.run(
        [sys.executable, str(script), str(path)], capture_output=True, text=True, check=False
    )
    assert run.returncode == 1
    assert "4 record(s) checked, 2 with problems" in run.stdout
    assert "record 1: round 0: extra duel" in run.stdout


# ----------------------------------------------------------------------- robustness (fuzzing)

JUNK: list[Any] = [None, -1, 0, 1, 13, True, "x", "both", [], [1, "a"], [[1]], {}, {"a": 1}, 2.5]


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every path to a value inside a JSON-like structure."""
    found = [prefix] if prefix else []
    if isinstance(node, dict):
        for key, value in node.items():
            found += paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += paths(value, (*prefix, i))
    return found


@settings(max_examples=300, deadline=None, database=None)
@given(st.integers(0, 50), st.data())
def test_checker_never_crashes_on_corrupt_records(seed: int, data: st.DataObject) -> None:
    record = random_game(seed, variant(max_rounds=3))
    path = data.draw(st.sampled_from(paths(record)))
    junk = data.draw(st.sampled_from(JUNK))
    node = record
    for key in path[:-1]:
        node = node[key]
    if data.draw(st.booleans()) and isinstance(node, dict):
        del node[path[-1]]
    else:
        node[path[-1]] = junk
    problems = check_record(record)
    assert isinstance(problems, list)
    assert all(isinstance(p, str) for p in problems)
