"""Tests of the independent replay checker (tests/independent_checker.py) on its inputs:
rulesets, record files and the command line, and corrupt records (fuzzing).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.checker_games import STANDARD_RULESET, assert_flagged, random_game, variant
from tests.independent_checker import check_file, check_record, check_ruleset, main

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
