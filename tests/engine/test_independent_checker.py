"""Tests of the independent replay checker (tests/independent_checker.py) on generated games.

Games from the rules-only generator (:mod:`tests.engine.checker_games`) must pass; copies
mutated in one place must be flagged with the right problem.
"""

from __future__ import annotations

import copy
import json

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.checker_games import (
    STANDARD_RULESET,
    Record,
    assert_flagged,
    dealt,
    find_game,
    random_game,
    trick,
    variant,
)
from tests.independent_checker import check_record

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


# ----------------------------------------------------------------------------------- replace


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
