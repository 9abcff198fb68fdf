"""RULES.md §1 (components, the standard ruleset) and §7 (the ruleset file and its validation).

Every refusal must be a :class:`RulesetError` whose ``field`` names the offending field and
whose message repeats it.
"""

from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tacocat.engine import (
    BOTH,
    HIGH_GOAL,
    LOW_GOAL,
    STANDARD,
    Decision,
    EngineError,
    GameState,
    Ruleset,
    RulesetError,
    TieRule,
)
from tests.engine.helpers import rules_with

STANDARD_TOML = """\
name = "standard"
hand_sizes = [4, 6, 9, 7, 9, 6, 4]
arrows = [1, 1, 1, "both", 0, 0, 0]
start_space = 3
tie_rule = "no_move"
max_rounds = 50

[deck]
1 = 3
2 = 3
3 = 3
4 = 3
5 = 3
6 = 4
7 = 4
8 = 3
9 = 3
10 = 3
11 = 3
12 = 3
"""


def data(**changes: Any) -> dict[str, Any]:
    """The standard ruleset's dict form with some fields changed."""
    return {**STANDARD.to_dict(), "name": "custom", **changes}


def refused(payload: Any) -> RulesetError:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict(payload)
    return info.value


def assert_names(err: RulesetError, field: str) -> None:
    assert err.field == field
    assert repr(field) in str(err), str(err)


# ------------------------------------------------------------------ §1 the standard ruleset


def test_s1_standard_deck_is_three_of_each_rank_plus_a_fourth_6_and_7() -> None:
    """§1 [assumed]: three of each rank 1..12, plus a fourth 6 and a fourth 7 (38 cards)."""
    counts = Counter(STANDARD.cards)
    assert len(STANDARD.cards) == 38
    assert sorted(counts) == list(range(1, 13))
    assert {r: n for r, n in counts.items() if n != 3} == {6: 4, 7: 4}
    assert list(STANDARD.cards) == sorted(STANDARD.cards)
    assert dict(STANDARD.deck) == dict(counts)


def test_s1_standard_track_arrows_tie_rule_and_round_limit() -> None:
    """§1 [assumed]: hand sizes, arrows (single arrows point at the trailing seat), no_move, 50."""
    assert STANDARD.hand_sizes == (4, 6, 9, 7, 9, 6, 4)
    assert STANDARD.arrows == (1, 1, 1, BOTH, 0, 0, 0)
    assert STANDARD.start_space == 3
    assert STANDARD.hand_sizes[STANDARD.start_space] == 7  # the centre space's number is 7
    assert STANDARD.tie_rule is TieRule.NO_MOVE
    assert STANDARD.max_rounds == 50
    assert STANDARD.name == "standard"
    assert Ruleset.standard() is STANDARD


def test_s1_a_single_arrow_points_at_the_seat_tacocat_is_farther_from() -> None:
    """§1: spaces 0..2 are nearer seat 0's goal (-1), so their arrow points at seat 1."""
    for space, arrow in enumerate(STANDARD.arrows):
        if arrow == BOTH:
            continue
        farther = 1 if abs(space - LOW_GOAL) < abs(space - HIGH_GOAL) else 0
        assert arrow == farther, space


def test_s1_goals_and_start_position() -> None:
    """§1: seat 0 behind the low goal (-1), seat 1 behind the high goal (7); start on 3."""
    state = GameState()
    assert (LOW_GOAL, HIGH_GOAL) == (-1, 7)
    assert state.position == 3
    assert state.covered == (False,) * 7
    assert state.score == (0, 0)
    assert state.observation(0).goal == LOW_GOAL
    assert state.observation(1).goal == HIGH_GOAL
    assert len(state.hand(0)) == len(state.hand(1)) == 7


def test_s1_ruleset_is_immutable() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        STANDARD.max_rounds = 3  # type: ignore[misc]


def test_s7_dict_round_trip_and_equality() -> None:
    """§7/§8: the JSON form (deck keys are strings) reads back to an equal ruleset."""
    form = STANDARD.to_dict()
    assert form["deck"]["6"] == 4 and form["arrows"][3] == "both"
    assert form["tie_rule"] == "no_move"
    again = Ruleset.from_dict(json.loads(json.dumps(form)))
    assert again == STANDARD
    assert hash(again) == hash(STANDARD)
    assert again.cards == STANDARD.cards
    assert Ruleset.from_dict(data(max_rounds=49)) != STANDARD


# ------------------------------------------------------------------------ §7 loading files


def test_s7_load_toml_file(tmp_path: Path) -> None:
    path = tmp_path / "standard.toml"
    path.write_text(STANDARD_TOML)
    assert Ruleset.load(path) == STANDARD
    assert Ruleset.load(str(path)) == STANDARD


def test_s7_load_json_file(tmp_path: Path) -> None:
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(data(tie_rule="arrow", max_rounds=7, hand_sizes=[2] * 7)))
    rules = Ruleset.load(path)
    assert rules.tie_rule is TieRule.ARROW
    assert rules.max_rounds == 7
    assert rules.hand_sizes == (2,) * 7
    assert rules.name == "custom"


def test_s7_loaded_ruleset_drives_the_deal(tmp_path: Path) -> None:
    """§1/§3: a space's number is the hand size dealt there; a file changes that."""
    path = tmp_path / "small.toml"
    path.write_text(STANDARD_TOML.replace("[4, 6, 9, 7, 9, 6, 4]", "[4, 6, 9, 5, 9, 6, 4]"))
    state = GameState(Ruleset.load(path))
    assert len(state.hand(0)) == len(state.hand(1)) == 5
    assert state.observation(0).pile_size == 38 - 10


def test_s7_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.load(tmp_path / "nope.toml")
    assert info.value.field == "<file>"
    assert "nope.toml" in str(info.value)


def test_s7_directory_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.load(tmp_path)
    assert info.value.field == "<file>"


@pytest.mark.parametrize(("name", "content"), [
    ("garbled.toml", b"name = \"x\"\nhand_sizes = [4, 6,\n"),
    ("garbled.json", b"{\"name\": \"x\", \"deck\": "),
    ("latin1.toml", b"name = \"caf\xe9\"\n"),
    ("binary.json", b"\xff\xfe\x00garbage"),
    ("empty.json", b""),
])
def test_s7_garbled_file_is_refused(tmp_path: Path, name: str, content: bytes) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(RulesetError) as info:
        Ruleset.load(path)
    assert info.value.field == "<file>"
    assert name in str(info.value)


def test_s7_file_holding_a_list_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2, 3]")
    with pytest.raises(RulesetError) as info:
        Ruleset.load(path)
    assert info.value.field == "<ruleset>"
    assert "list" in str(info.value)


def test_s7_bad_field_inside_a_file_names_the_field(tmp_path: Path) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(STANDARD_TOML.replace('tie_rule = "no_move"', 'tie_rule = "coin"'))
    with pytest.raises(RulesetError) as info:
        Ruleset.load(path)
    assert_names(info.value, "tie_rule")
    assert "coin" in str(info.value)


# --------------------------------------------------------------- §7 validation, field by field


def test_s7_errors_are_engine_errors_and_value_errors() -> None:
    err = refused(data(max_rounds=0))
    assert isinstance(err, EngineError) and isinstance(err, ValueError)


@pytest.mark.parametrize("field", ["hand_sizes", "arrows"])
@pytest.mark.parametrize("length", [0, 6, 8])
def test_s7_track_fields_need_seven_entries(field: str, length: int) -> None:
    """§7: hand_sizes and arrows have 7 entries; wrong lengths are refused."""
    value = ([5] * length) if field == "hand_sizes" else (["both"] * length)
    err = refused(data(**{field: value}))
    assert_names(err, field)
    assert str(length) in err.problem and "7" in err.problem


@pytest.mark.parametrize("field", ["hand_sizes", "arrows"])
def test_s7_track_fields_must_be_lists(field: str) -> None:
    assert_names(refused(data(**{field: "4,6,9,7,9,6,4"})), field)


@pytest.mark.parametrize("bad", ["7", 7.0, True, None])
def test_s7_hand_size_entries_must_be_integers(bad: Any) -> None:
    sizes: list[Any] = [4, 6, 9, 7, 9, 6, 4]
    sizes[5] = bad
    assert_names(refused(data(hand_sizes=sizes)), "hand_sizes[5]")


@pytest.mark.parametrize("size", [0, -3])
def test_s7_hand_sizes_must_be_at_least_one(size: int) -> None:
    err = refused(data(hand_sizes=[4, size, 9, 7, 9, 6, 4]))
    assert_names(err, "hand_sizes[1]")
    assert str(size) in err.problem


@pytest.mark.parametrize("bad", [
    2, -1, "left", "Both", True, None, 1.0,
])
def test_s7_arrows_are_0_1_or_both(bad: Any) -> None:
    arrows: list[Any] = [1, 1, 1, "both", 0, 0, 0]
    arrows[6] = bad
    assert_names(refused(data(arrows=arrows)), "arrows[6]")


@pytest.mark.parametrize("rank", ["x", "", "1.5", None, "05", " 5"])
def test_s7_deck_ranks_must_be_integers(rank: Any) -> None:
    deck = {**STANDARD.to_dict()["deck"], rank: 1}
    err = refused(data(deck=deck))
    assert_names(err, "deck")
    assert repr(rank) in err.problem


@pytest.mark.parametrize("rank", ["0", "-2", "100"])
def test_s7_deck_ranks_outside_1_to_99_are_unknown(rank: str) -> None:
    err = refused(data(deck={**STANDARD.to_dict()["deck"], rank: 1}))
    assert_names(err, "deck")
    assert str(int(rank)) in err.problem


@pytest.mark.parametrize("count", ["3", 2.5, True, None])
def test_s7_deck_counts_must_be_integers(count: Any) -> None:
    assert_names(refused(data(deck={**STANDARD.to_dict()["deck"], "5": count})), "deck.5")


def test_s7_deck_counts_must_not_be_negative() -> None:
    err = refused(data(deck={**STANDARD.to_dict()["deck"], "5": -1}))
    assert_names(err, "deck.5")


@pytest.mark.parametrize("deck", [{}, [3] * 12, "3x12"])
def test_s7_deck_must_be_a_non_empty_table(deck: Any) -> None:
    assert_names(refused(data(deck=deck)), "deck")


def test_s7_pile_that_could_run_out_is_refused() -> None:
    """§4/§7: 38 - 2h >= 2h must hold for every space; h = 10 could run the pile out."""
    err = refused(data(hand_sizes=[4, 6, 9, 7, 9, 6, 10]))
    assert_names(err, "hand_sizes[6]")
    assert "run" in err.problem and "38" in err.problem


def test_s7_pile_bound_is_exact_for_a_small_deck() -> None:
    """A 16-card deck allows hands of 4 (16 - 8 = 8 >= 8) but not of 5 (16 - 10 < 10)."""
    deck = {str(r): 2 for r in range(1, 9)}
    ok = Ruleset.from_dict(data(deck=deck, hand_sizes=[4] * 7))
    assert len(ok.cards) == 16
    err = refused(data(deck=deck, hand_sizes=[4, 4, 4, 4, 5, 4, 4]))
    assert_names(err, "hand_sizes[4]")


def test_s7_hand_size_nine_is_the_standard_maximum() -> None:
    assert Ruleset.from_dict(data(hand_sizes=[9] * 7)).hand_sizes == (9,) * 7


@pytest.mark.parametrize("space", [0, 2, 4, 6])
def test_s7_start_space_with_one_arrow_is_refused(space: int) -> None:
    """§7: the game starts on a two-arrow space (§4: the first round is always two-arrow)."""
    err = refused(data(start_space=space))
    assert_names(err, "start_space")
    assert "arrow" in err.problem


def test_s7_start_space_may_be_any_two_arrow_space() -> None:
    rules = rules_with(arrows=["both", 1, 1, "both", 0, 0, 0], start_space=0)
    state = GameState(rules)
    assert state.position == 0
    assert len(state.hand(0)) == 4
    assert state.to_act == (0, 1)


@pytest.mark.parametrize("space", [-1, 7, 12, "3", 3.0, True])
def test_s7_start_space_must_be_a_space(space: Any) -> None:
    assert_names(refused(data(start_space=space)), "start_space")


@pytest.mark.parametrize("tie", ["coin", "NO_MOVE", "", None, 0])
def test_s7_bad_tie_rule_is_refused(tie: Any) -> None:
    err = refused(data(tie_rule=tie))
    assert_names(err, "tie_rule")
    assert "no_move" in err.problem and "arrow" in err.problem


@pytest.mark.parametrize("rounds", [0, -1])
def test_s7_max_rounds_below_one_is_refused(rounds: int) -> None:
    err = refused(data(max_rounds=rounds))
    assert_names(err, "max_rounds")
    assert str(rounds) in err.problem


@pytest.mark.parametrize("rounds", ["50", 50.0, False, None])
def test_s7_max_rounds_must_be_an_integer(rounds: Any) -> None:
    assert_names(refused(data(max_rounds=rounds)), "max_rounds")


def test_s7_max_rounds_of_one_is_allowed() -> None:
    assert rules_with(max_rounds=1).max_rounds == 1


@pytest.mark.parametrize("name", ["", 7, None])
def test_s7_name_must_be_a_non_empty_string(name: Any) -> None:
    assert_names(refused(data(name=name)), "name")


def test_s7_unknown_field_is_named() -> None:
    err = refused(data(colour="red"))
    assert_names(err, "colour")
    assert "max_rounds" in err.problem  # lists the known fields


@pytest.mark.parametrize("field", ["name", "deck", "hand_sizes", "arrows", "start_space",
                                   "tie_rule", "max_rounds"])
def test_s7_missing_field_is_named(field: str) -> None:
    payload = data()
    del payload[field]
    err = refused(payload)
    assert_names(err, field)
    assert "missing" in err.problem


@pytest.mark.parametrize("payload", [[1, 2], "standard", None, 42])
def test_s7_ruleset_must_be_a_table(payload: Any) -> None:
    assert refused(payload).field == "<ruleset>"


def test_s7_direct_construction_is_validated_too() -> None:
    with pytest.raises(RulesetError) as info:
        dataclasses.replace(STANDARD, start_space=4)
    assert info.value.field == "start_space"
    with pytest.raises(RulesetError) as info:
        dataclasses.replace(STANDARD, tie_rule="coin")  # type: ignore[arg-type]
    assert info.value.field == "tie_rule"


def test_s7_decisions_start_with_replace_for_any_valid_ruleset() -> None:
    rules = rules_with(hand_sizes=[3] * 7, max_rounds=2, tie_rule="arrow")
    state = GameState(rules, seed="x")
    assert state.decision is Decision.REPLACE
    assert len(state.hand(1)) == 3
