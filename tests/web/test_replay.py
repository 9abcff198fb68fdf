"""The replay viewer's steps for games that did not end at a goal: a round limit, an abort
and forfeits cut short at each phase (the goal games are checked against the record in
``test_api.py`` and in the browser)."""

from __future__ import annotations

from typing import Any

import pytest

from tacocat.engine import (
    STANDARD,
    Fault,
    GameRecord,
    GameState,
    RecordError,
    Ruleset,
    ScheduledGame,
)
from tacocat.engine.bots import GreedyBot
from tacocat.referee import play_in_process
from tacocat.web import replay_view


def kinds(view: dict[str, Any]) -> list[str]:
    return [step["kind"] for step in view["steps"]]


def greedy_game(seed: str, rules: Ruleset = STANDARD) -> GameRecord:
    return play_in_process(GreedyBot, GreedyBot, [ScheduledGame(0, seed, 0)], names=("x", "y"),
                           rules=rules).games[0].record


def test_a_round_limit_draw_ends_with_its_result() -> None:
    rules = Ruleset.from_dict({**STANDARD.to_dict(), "name": "short", "max_rounds": 2})
    record = greedy_game("lim", rules)
    assert record.result.reason.value == "round_limit"
    view = replay_view(record)
    assert kinds(view).count("deal") == 2 and kinds(view)[-1] == "result"
    assert "round limit" in view["steps"][-1]["text"]
    assert view["steps"][-1]["result"]["winner"] is None


def cut_short(actions: int, end: str) -> GameRecord:
    """A game stopped after ``actions`` legal actions by an abort or a forfeit of the seat
    that was to act (its first legal action each time)."""
    state = GameState(STANDARD, "cut")
    for _ in range(actions):
        seat = state.to_act[0]
        state.apply(seat, state.legal_actions(seat)[0])
    if end == "abort":
        state.abort("the referee stopped")
    else:
        state.forfeit(state.to_act[0], Fault.TIMEOUT, "no answer within 2 s")
    return GameRecord.of(state, ("p0", "p1"))


@pytest.mark.parametrize("end", ["abort", "forfeit"])
@pytest.mark.parametrize("actions", [0, 1, 2, 3, 4, 5, 8, 13, 21])
def test_a_game_cut_short_replays_up_to_where_it_stopped(actions: int, end: str) -> None:
    record = cut_short(actions, end)
    view = replay_view(record)
    steps = view["steps"]
    assert steps[0]["kind"] == "deal" and steps[-1]["kind"] == "result"
    assert view["record"] == record.to_json()
    last = record.rounds[-1]
    assert kinds(view).count("trick") == sum(len(r.tricks) for r in record.rounds)
    assert kinds(view).count("duel") == sum(len(r.duels) for r in record.rounds)
    if last.duels or last.tricks:
        assert "replace" in kinds(view)[-3 - len(last.duels) - len(last.tricks):]
    cards = len(STANDARD.cards)
    for step in steps:  # no card appears from nowhere: hands never exceed what was dealt
        assert all(len(hand) <= 9 for hand in step["hands"])
        assert sum(len(h) for h in step["hands"]) + step["pile"] <= cards
    text = steps[-1]["text"]
    assert ("aborted" in text) if end == "abort" else ("forfeits (timeout)" in text)


def test_a_record_that_does_not_replay_is_refused() -> None:
    record = greedy_game("bad")
    data = record.to_json()
    data["rounds"][0]["showdown"] = [data["rounds"][0]["showdown"][1],
                                     data["rounds"][0]["showdown"][0] + 1]
    with pytest.raises(RecordError):
        replay_view(GameRecord.from_json(data))
