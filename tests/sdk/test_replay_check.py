"""Re-feeding recorded games to a bot (tacocat.sdk.replay_check), in this process."""

from __future__ import annotations

import gzip
from pathlib import Path

from tacocat.engine import Decision, duplicate_pairs, read_jsonl
from tacocat.engine.bots import GreedyBot, RandomBot, StrongBot
from tacocat.referee import play_in_process
from tacocat.sdk.replay_check import check_game, describe


class Crashes(GreedyBot):
    def attack(self, obs):  # type: ignore[no-untyped-def]
        raise RuntimeError("no attack today")


class CrashesInDefence(GreedyBot):
    def defend(self, obs):  # type: ignore[no-untyped-def]
        raise RuntimeError("no defence today")


def test_the_same_bots_answer_every_recorded_decision_the_same() -> None:
    # RandomBot's answers depend on every earlier call on its RNG: a decision asked out of
    # order, or with a different observation, shows up as a difference.
    played = play_in_process(lambda: RandomBot(7), GreedyBot, duplicate_pairs(6, "rc"),
                             batch=3)
    for game in played.games:
        a_seat = game.a_seat
        check = check_game(game.record, lambda: RandomBot(7), [a_seat])
        assert check.matched, check.differences[:1]
        assert check.decisions > 10
        both = check_game(game.record, GreedyBot, [1 - a_seat])
        assert both.matched


def test_a_different_bot_is_reported_with_the_observation() -> None:
    played = play_in_process(GreedyBot, RandomBot, duplicate_pairs(2, "d"), batch=2)
    check = check_game(played.games[0].record, StrongBot, [0])
    assert not check.matched
    diff = check.differences[0]
    assert diff.problem == "different" and diff.recorded != diff.answered
    assert f"hand {list(diff.observation.hand)}" in describe(diff.observation)


def test_a_crash_that_forfeited_the_game_is_reproduced() -> None:
    played = play_in_process(Crashes, GreedyBot, duplicate_pairs(1, "c"))
    record = played.games[0].record
    assert record.result.fault is not None and record.result.offender == 0
    check = check_game(record, Crashes, [0])
    last = check.differences[-1]
    assert last.recorded is None and last.answered is None
    assert last.problem.startswith("raised: RuntimeError: no attack today at "
                                   "test_replay_check.py:")
    assert check_game(record, GreedyBot, [0]).differences[-1].problem == "legal now"


def test_a_forfeit_in_defence_is_re_asked_with_the_attack_it_was_answering() -> None:
    # The record's cut round keeps the attack the forfeiting seat was asked to answer.
    played = play_in_process(CrashesInDefence, GreedyBot, duplicate_pairs(1, "c"))
    check = check_game(played.games[0].record, CrashesInDefence, [0])
    last = check.differences[-1]
    assert last.recorded is None and last.observation.decision is Decision.DEFEND
    assert last.observation.attack
    assert last.problem.startswith("raised: RuntimeError: no defence today")
    assert not check.note


def test_replay_check_finds_the_bots_seat_by_its_name() -> None:
    from tacocat.cli._replay import _seats  # noqa: PLC0415 - the CLI's choice of seats

    played = play_in_process(GreedyBot, RandomBot, duplicate_pairs(2, "n"),
                             names=("alice/mybot@3", "bob/other@1"))
    first, second = (g.record for g in played.games)
    assert _seats(first, "bots/mybot.py", None) == (0,)
    assert _seats(second, "bots/mybot.py:MyBot", None) == (1,)  # seats swap in a pair
    assert _seats(first, "house:strong", None) == (0, 1)  # nobody by that name: both
    assert _seats(first, "bots/mybot.py", 1) == (1,)


def test_gzipped_replays_as_the_arena_stores_them_read_the_same(tmp_path: Path) -> None:
    played = play_in_process(GreedyBot, RandomBot, duplicate_pairs(3, "z"))
    lines = "".join(g.record.dumps() + "\n" for g in played.games)
    (tmp_path / "r.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    assert [r.dumps() for r in read_jsonl(tmp_path / "r.jsonl.gz")] == lines.splitlines()
