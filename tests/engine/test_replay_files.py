"""Replay files end to end: a 1000-game match written as JSON Lines, read back and re-checked by
the engine and by the independent checker; broken files and tampered records are refused."""

from __future__ import annotations

import dataclasses
import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tacocat.engine import (
    BOTH,
    GameRecord,
    GameState,
    Outcome,
    RecordError,
    Round,
    Trick,
    duplicate_pairs,
    house_bot,
    read_jsonl,
    write_jsonl,
)
from tacocat.referee import play_in_process
from tests.independent_checker import check_file, check_record

GAMES = 1000
NAMES = ("house:random", "house:greedy")


@pytest.fixture(scope="module")
def records() -> list[GameRecord]:
    games = play_in_process(house_bot("random"), house_bot("greedy"), duplicate_pairs(GAMES, 7),
                            names=NAMES).games
    assert [g.index for g in games] == list(range(GAMES))
    return [g.record for g in games]


def test_a_thousand_games_survive_the_round_trip_and_both_checkers(
        records: list[GameRecord], tmp_path: Path) -> None:
    path = tmp_path / "match.jsonl"
    assert write_jsonl(path, records) == GAMES
    assert path.read_text(encoding="utf-8").count("\n") == GAMES
    back = list(read_jsonl(path))
    assert back == records
    count, problems = check_file(path)
    assert count == GAMES
    assert problems == {}, f"checker found problems in {len(problems)} records: " + str(
        next(iter(problems.items()), None))
    for index, record in enumerate(back):
        state = record.replay()
        assert state.outcome is not None
        assert (state.outcome.winner, state.outcome.reason) == (record.result.winner,
                                                                record.result.reason)
        assert tuple(state.rounds) == record.rounds, f"game {index} replays differently"
        assert record.players == (NAMES if index % 2 == 0 else NAMES[::-1])
        assert record.seed == f"7/{index // 2}"
    # Duplicate pairs share their deals.
    for pair in range(GAMES // 2):
        assert records[2 * pair].rounds[0].deck == records[2 * pair + 1].rounds[0].deck


def test_write_jsonl_to_an_open_handle(records: list[GameRecord]) -> None:
    handle = io.StringIO()
    assert write_jsonl(handle, records[:5]) == 5
    lines = handle.getvalue().splitlines()
    assert [GameRecord.loads(line) for line in lines] == records[:5]
    assert all(check_record(json.loads(line)) == [] for line in lines)


# ------------------------------------------------------------------------- broken files


@pytest.mark.parametrize("bad_line", [
    '{"format": "tacocat-replay/1", "rounds": [',      # cut short
    "[1, 2, 3]",                                        # JSON, but not an object
    '{"format": "tacocat-replay/0"}',                  # an object, but not a record
])
def test_read_jsonl_names_the_corrupted_line(records: list[GameRecord], tmp_path: Path,
                                             bad_line: str) -> None:
    lines = [r.dumps() for r in records[:6]]
    lines.insert(2, "")  # a blank line is skipped but still counts as a line of the file
    lines[4] = bad_line  # physical line 5, in place of records[3]
    path = tmp_path / "broken.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reader = read_jsonl(path)
    good = [next(reader) for _ in range(3)]  # the records before the bad line still come out
    assert good == records[:3]
    with pytest.raises(RecordError, match=r":5: "):
        next(reader)
    count, problems = check_file(path)
    assert count == 6 and list(problems) == [3]


# ------------------------------------------------------------------------- tampered records


def round_decisions(record: GameRecord, rnd: Round) -> Iterator[tuple[int, tuple[int, ...]]]:
    """A complete round's decisions in the order the rules ask for them."""
    arrow = record.ruleset.arrows[rnd.space]
    order = (0, 1) if arrow == BOTH else (int(arrow), 1 - int(arrow))
    for seat in order:
        yield seat, rnd.replace[seat]
    for c0, c1 in rnd.duels:
        yield 0, (c0,)
        yield 1, (c1,)
    for trick in rnd.tricks:
        yield trick.attacker, trick.attack
        yield 1 - trick.attacker, trick.response


def state_before_response(record: GameRecord, round_index: int, trick_index: int) -> GameState:
    """The game as it stood when the defender of that trick had to answer."""
    decks = [r.deck for r in record.rounds if r.deck is not None]
    state = GameState(record.ruleset, record.seed, decks=decks)
    for rnd in record.rounds[:round_index]:
        for seat, action in round_decisions(record, rnd):
            state.apply(seat, action)
    rnd = record.rounds[round_index]
    steps = list(round_decisions(record, rnd))
    before = len(steps) - 2 * (len(rnd.tricks) - trick_index) + 1
    for seat, action in steps[:before]:
        state.apply(seat, action)
    return state


def with_round(record: GameRecord, index: int, rnd: Round) -> GameRecord:
    rounds = list(record.rounds)
    rounds[index] = rnd
    return dataclasses.replace(record, rounds=tuple(rounds))


def sacrifice_not_lowest(records: list[GameRecord]) -> tuple[GameRecord, int]:
    """A defended single-card attack answered instead by a low card that is not the lowest."""
    for record in records:
        for r_index, rnd in enumerate(record.rounds[1:], 1):
            for t_index, trick in enumerate(rnd.tricks):
                if len(trick.attack) != 1:
                    continue
                state = state_before_response(record, r_index, t_index)
                hand = state.hand(1 - trick.attacker)
                assert state.attack == trick.attack
                wrong = [c for c in hand if hand[0] < c < trick.attack[0]]
                if wrong:
                    assert not state.is_legal(1 - trick.attacker, (wrong[0],))
                    tricks = list(rnd.tricks)
                    tricks[t_index] = Trick(trick.attacker, trick.attack, (wrong[0],))
                    tampered = rnd._replace(tricks=tuple(tricks))
                    return with_round(record, r_index, tampered), r_index
    raise AssertionError("no trick to tamper with")


def flipped_showdown_winner(records: list[GameRecord]) -> tuple[GameRecord, int]:
    for record in records:
        for r_index, rnd in enumerate(record.rounds[1:], 1):
            if rnd.winner is not None:
                return with_round(record, r_index,
                                  rnd._replace(winner=1 - rnd.winner)), r_index
    raise AssertionError("no decisive round")


def swapped_attacker(records: list[GameRecord]) -> tuple[GameRecord, int]:
    for record in records:
        for r_index, rnd in enumerate(record.rounds[1:], 1):
            if rnd.tricks:
                first = rnd.tricks[0]
                tricks = (Trick(1 - first.attacker, first.attack, first.response),
                          *rnd.tricks[1:])
                return with_round(record, r_index,
                                  rnd._replace(tricks=tricks)), r_index
    raise AssertionError("no trick")


def duel_card_not_held(records: list[GameRecord]) -> tuple[GameRecord, int]:
    for record in records:
        for r_index, rnd in enumerate(record.rounds[1:], 1):
            if rnd.duels:
                duels = ((99, rnd.duels[0][1]), *rnd.duels[1:])
                return with_round(record, r_index,
                                  rnd._replace(duels=duels)), r_index
    raise AssertionError("no duel")


def changed_showdown_cards(records: list[GameRecord]) -> tuple[GameRecord, int]:
    for record in records:
        for r_index, rnd in enumerate(record.rounds[1:], 1):
            if rnd.showdown is not None and rnd.showdown[0] != 12:
                showdown = (12, rnd.showdown[1])
                return with_round(record, r_index,
                                  rnd._replace(showdown=showdown)), r_index
    raise AssertionError("no showdown")


TAMPERS: dict[str, tuple[Callable[[list[GameRecord]], tuple[GameRecord, int]], str]] = {
    "sacrifice_not_lowest": (sacrifice_not_lowest, "lowest"),
    "flipped_showdown_winner": (flipped_showdown_winner, "won by"),
    "swapped_attacker": (swapped_attacker, "attack"),
    "duel_card_not_held": (duel_card_not_held, "not in hand"),
    "changed_showdown_cards": (changed_showdown_cards, "showdown"),
}


@pytest.mark.parametrize("name", sorted(TAMPERS))
def test_a_tampered_record_is_refused_naming_the_round(records: list[GameRecord],
                                                       name: str) -> None:
    make, words = TAMPERS[name]
    tampered, r_index = make(records)
    with pytest.raises(RecordError) as caught:
        tampered.replay()
    message = str(caught.value)
    assert f"round {r_index}:" in message or f"round {r_index} " in message, message
    assert words in message, message
    # The file form is refused too, and the independent checker agrees on where.
    again = GameRecord.loads(tampered.dumps())
    with pytest.raises(RecordError, match=f"round {r_index}"):
        again.replay()
    problems = check_record(tampered.to_json())
    assert problems and problems[0].startswith(f"round {r_index}"), problems


def test_a_flipped_result_is_refused(records: list[GameRecord]) -> None:
    record = next(r for r in records if r.result.winner is not None)
    assert record.result.winner is not None
    flipped = dataclasses.replace(
        record, result=Outcome(1 - record.result.winner, record.result.reason))
    with pytest.raises(RecordError, match="result says"):
        flipped.replay()
    assert check_record(flipped.to_json())
