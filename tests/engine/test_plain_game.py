"""The benchmark's plain baseline (lab/tacocat_lab/plain_game.py) really plays the game.

``tacocat bench engine`` quotes the engine's speed as a ratio over this implementation, so it
must play by RULES.md: every record it keeps passes the independent checker, and its games
are as long as the engine's with the same random policy.
"""

from __future__ import annotations

import random
import statistics

from tacocat.engine import HOUSE_BOTS, duplicate_pairs
from tacocat.referee import play_in_process
from tacocat_lab.plain_game import PlainGame, PlainRandomPlayer
from tests.independent_checker import check_record
from tests.independent_rules import STANDARD


def plain_records(games: int) -> list[dict[str, object]]:
    records = []
    for index in range(games):
        game = PlainGame(random.Random(f"plain/{index}"))
        record = game.play([PlainRandomPlayer(f"p/{index}/0"), PlainRandomPlayer(f"p/{index}/1")])
        record.update(ruleset={"name": "standard", **STANDARD}, seed=f"plain/{index}",
                      players=["plain-a", "plain-b"])
        records.append(record)
    return records


def test_every_plain_game_passes_the_independent_checker() -> None:
    records = plain_records(300)
    assert {record["result"]["reason"] for record in records} <= {"goal", "round_limit"}  # type: ignore[index]
    for record in records:
        assert check_record(record) == [], record


def test_plain_games_are_as_long_as_the_engines_with_the_same_policy() -> None:
    plain = statistics.mean(len(record["rounds"]) for record in plain_records(400))  # type: ignore[arg-type]
    played = play_in_process(HOUSE_BOTS["random"], HOUSE_BOTS["random"],
                             duplicate_pairs(400, "plain-length")).games
    engine = statistics.mean(len(game.record.rounds) for game in played)
    assert abs(plain / engine - 1) < 0.1, (plain, engine)
