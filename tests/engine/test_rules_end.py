"""RULES.md §6b (Showdown), §6c (Move), §2 (the end of a game), §1 round limit, and the
forfeit/abort outcomes of §8.

Most games here use two-card hands (:data:`TWO_CARDS`): a round is replace, one duel of the
high cards, then the showdown of the low ones, so a round's winner is set by its deck.
"""

from __future__ import annotations

import json

import pytest

from tacocat.engine import (
    HIGH_GOAL,
    LOW_GOAL,
    Cut,
    Decision,
    Fault,
    GameRecord,
    GameState,
    IllegalActionError,
    Outcome,
    Reason,
    Table,
)
from tacocat.engine.bots import RandomBot
from tests.engine.helpers import (
    TWO_CARDS,
    centre_deck,
    duel,
    finish_centre_round,
    keep,
    quick_round,
    rules_with,
    run_rounds,
    showdown_deck,
    start,
    start_hands,
)

ARROW_TIES = rules_with(hand_sizes=[2] * 7, tie_rule="arrow")


def covered_spaces(state: GameState) -> set[int]:
    return {i for i, c in enumerate(state.covered) if c}


# ------------------------------------------------------------------------- §6b Showdown


@pytest.mark.parametrize(("c0", "c1", "winner"), [(2, 5, 0), (5, 2, 1), (1, 10, 0),
                                                  (10, 9, 1), (3, 4, 0)])
def test_s6b_lower_showdown_card_wins_the_round(c0: int, c1: int, winner: int) -> None:
    state = start(showdown_deck(c0, c1), rules=TWO_CARDS)
    quick_round(state)
    done = state.rounds[0]
    assert done.showdown == (c0, c1)
    assert done.winner == winner
    assert state.score == ((1, 0) if winner == 0 else (0, 1))


def test_s6b_showdown_in_a_standard_round() -> None:
    state = start(centre_deck(1))
    finish_centre_round(state, 1)
    assert state.rounds[0].showdown == (12, 1) and state.rounds[0].winner == 1
    assert state.observation(0).history[0].showdown == (12, 1)  # revealed to both


def test_s6b_tie_with_no_move_moves_nothing_and_places_no_tile() -> None:
    state = run_rounds([None])
    done = state.rounds[0]
    assert done.showdown == (3, 3) and done.winner is None
    assert state.position == 3
    assert not any(state.covered)
    assert state.score == (0, 0)
    assert state.round_index == 1 and not state.is_over
    assert state.decision is Decision.REPLACE and state.to_act == (0, 1)


def test_s6b_tie_with_no_move_at_a_one_arrow_space() -> None:
    state = run_rounds([0, None])
    assert state.rounds[1].space == 2 and state.rounds[1].winner is None
    assert state.position == 2 and covered_spaces(state) == {3}
    assert state.score == (1, 0)


def test_s6b_tie_rule_arrow_at_the_two_arrow_space_moves_nothing() -> None:
    state = run_rounds([None, None], ARROW_TIES)
    assert [r.winner for r in state.rounds] == [None, None]
    assert state.position == 3 and not any(state.covered)


def test_s6b_tie_rule_arrow_gives_space_2_tie_to_seat_1() -> None:
    """Space 2's arrow points at seat 1: a tie there is seat 1's round, and Tacocat moves."""
    state = run_rounds([0, None], ARROW_TIES)
    assert state.rounds[1].showdown == (3, 3)
    assert state.rounds[1].winner == 1
    assert state.score == (1, 1)
    assert state.position == 4  # 2 covered, 3 covered: skips to 4
    assert covered_spaces(state) == {2, 3}


def test_s6b_tie_rule_arrow_gives_space_4_tie_to_seat_0() -> None:
    state = run_rounds([1, None], ARROW_TIES)
    assert state.rounds[1].winner == 0
    assert state.position == 2 and covered_spaces(state) == {3, 4}


def test_s6b_tie_rule_arrow_win_skips_covered_spaces() -> None:
    """Seat 0 wins three rounds (3 → 2 → 1 → 0); a tie on space 0 goes to seat 1, which
    moves Tacocat over the covered 1, 2, 3 to space 4 (and symmetrically from space 6)."""
    state = run_rounds([0, 0, 0, None], ARROW_TIES)
    assert state.rounds[-1].winner == 1 and state.position == 4
    state = run_rounds([1, 1, 1, None], ARROW_TIES)
    assert state.position == 2


# ---------------------------------------------------------------------------- §6c Move


@pytest.mark.parametrize(("winner", "position"), [(0, 2), (1, 4)])
def test_s6c_winner_moves_tacocat_one_space_toward_its_goal(winner: int, position: int) -> None:
    state = run_rounds([winner])
    assert state.position == position
    assert covered_spaces(state) == {3}  # the space Tacocat left


def test_s6c_returning_over_covered_spaces_skips_them() -> None:
    state = run_rounds([0, 1])
    assert state.position == 4  # from 2 toward 7: 3 is covered
    assert covered_spaces(state) == {2, 3}
    state = run_rounds([0, 1, 0])
    assert state.position == 1  # from 4 toward -1: 3 and 2 are covered
    assert covered_spaces(state) == {2, 3, 4}


def test_s6c_positions_follow_the_rule_and_covered_spaces_are_never_entered_again() -> None:
    winners = [0, 0, 1, 0, 1]
    expected = [2, 1, 4, 0, 5]
    for n in range(1, len(winners) + 1):
        state = run_rounds(winners[:n])
        assert state.position == expected[n - 1], n
        assert not state.covered[state.position]
        assert len(covered_spaces(state)) == n


def test_s6c_a_tie_between_wins_covers_nothing() -> None:
    state = run_rounds([0, None, None, 1])
    assert state.position == 4 and covered_spaces(state) == {2, 3}
    assert [r.space for r in state.rounds] == [3, 2, 2, 2]


@pytest.mark.parametrize(("winner", "goal"), [(0, LOW_GOAL), (1, HIGH_GOAL)])
def test_s6c_four_straight_wins_enter_the_goal(winner: int, goal: int) -> None:
    """§2: the game ends when Tacocat enters a goal; that goal's seat wins."""
    state = run_rounds([winner] * 4)
    assert state.is_over
    assert state.position == goal
    assert state.outcome == Outcome(winner, Reason.GOAL)
    assert state.decision is None and state.to_act == ()
    assert len(covered_spaces(state)) == 4
    assert [r.space for r in state.rounds] == ([3, 2, 1, 0] if winner == 0 else [3, 4, 5, 6])


def test_s6c_goal_when_no_open_space_remains_on_that_side() -> None:
    """From space 5 with 0..4 covered, seat 0's win skips every covered space into its goal."""
    state = run_rounds([0, 0, 1, 0, 1])
    assert state.position == 5 and covered_spaces(state) == {0, 1, 2, 3, 4}
    state = run_rounds([0, 0, 1, 0, 1, 0])
    assert state.position == LOW_GOAL
    assert state.outcome == Outcome(0, Reason.GOAL)
    assert covered_spaces(state) == {0, 1, 2, 3, 4, 5}


def test_s6c_seven_decisive_rounds_at_most() -> None:
    """Every decisive round covers a space: alternating wins use all 7 before a goal."""
    winners = [0, 1, 0, 1, 0, 1, 0]
    state = run_rounds(winners[:6])
    assert state.position == 6 and not state.is_over
    assert covered_spaces(state) == {0, 1, 2, 3, 4, 5}
    for last, goal in ((0, LOW_GOAL), (1, HIGH_GOAL)):
        state = run_rounds([*winners[:6], last])
        assert state.position == goal
        assert state.outcome is not None and state.outcome.winner == last
        assert all(state.covered)
        assert sum(r.winner is not None for r in state.rounds) == 7


def random_game(seed: int) -> GameState:
    bots = (RandomBot(seed), RandomBot(seed + 1000))
    state = GameState(seed=f"end-{seed}")
    while not state.is_over:
        seat = state.to_act[0]
        obs, bot = state.observation(seat), bots[seat]
        decision = obs.decision
        if decision is Decision.REPLACE:
            action = tuple(bot.replace(obs))
        elif decision is Decision.DUEL:
            action = (bot.duel(obs),)
        elif decision is Decision.ATTACK:
            action = tuple(bot.attack(obs))
        else:
            action = tuple(bot.defend(obs))
        state.apply(seat, action)
    return state


@pytest.mark.parametrize("seed", range(12))
def test_s6c_random_games_cover_one_space_per_decisive_round(seed: int) -> None:
    state = random_game(seed)
    decisive = [r for r in state.rounds if r.winner is not None]
    assert len(decisive) <= 7
    assert len(covered_spaces(state)) == len(decisive)
    assert state.outcome is not None
    winner = state.outcome.winner
    if state.outcome.reason is Reason.GOAL:
        assert winner is not None
        assert state.position == (LOW_GOAL if winner == 0 else HIGH_GOAL)
        assert state.score[winner] >= 4


# ------------------------------------------------------------------------- round limit


def test_round_limit_draws_the_game_with_no_winner() -> None:
    rules = rules_with(hand_sizes=[2] * 7, max_rounds=2)
    state = run_rounds([None, None], rules)
    assert state.outcome is not None
    assert state.outcome.reason is Reason.ROUND_LIMIT and state.outcome.winner is None
    assert "2" in state.outcome.detail
    assert len(state.rounds) == 2 and all(r.complete for r in state.rounds)
    assert state.decision is None and state.to_act == ()
    result = GameRecord.of(state, ["a", "b"]).to_json()["result"]
    assert result["winner"] is None and result["reason"] == "round_limit"


def test_round_limit_ignores_the_score() -> None:
    rules = rules_with(hand_sizes=[2] * 7, max_rounds=2)
    state = run_rounds([0, 0], rules)
    assert state.score == (2, 0) and state.position == 1
    assert state.outcome is not None
    assert (state.outcome.winner, state.outcome.reason) == (None, Reason.ROUND_LIMIT)


def test_round_limit_of_one_round() -> None:
    state = run_rounds([1], rules_with(hand_sizes=[2] * 7, max_rounds=1))
    assert state.outcome is not None and state.outcome.reason is Reason.ROUND_LIMIT
    assert len(state.rounds) == 1


def test_goal_on_the_last_allowed_round_beats_the_round_limit() -> None:
    state = run_rounds([0] * 4, rules_with(hand_sizes=[2] * 7, max_rounds=4))
    assert state.outcome == Outcome(0, Reason.GOAL)


def test_round_limit_is_not_reached_one_round_early() -> None:
    rules = rules_with(hand_sizes=[2] * 7, max_rounds=3)
    state = run_rounds([None, None], rules)
    assert not state.is_over and state.decision is Decision.REPLACE


def test_standard_limit_is_fifty_rounds() -> None:
    rules = rules_with(hand_sizes=[2] * 7)
    assert rules.max_rounds == 50
    state = run_rounds([None] * 49, rules)
    assert not state.is_over
    quick_round(state)  # the sorted filler deck: 1 1 against 1 2, another tie
    assert state.outcome is not None and state.outcome.reason is Reason.ROUND_LIMIT
    assert len(state.rounds) == 50


def test_play_after_the_game_is_over_is_refused() -> None:
    state = run_rounds([0] * 4)
    with pytest.raises(IllegalActionError) as info:
        state.apply(0, ())
    assert info.value.code == "game_over"
    assert state.legal_actions(0) == state.legal_actions(1) == []


# --------------------------------------------------------------------- forfeit and abort


def mid_round() -> GameState:
    """A standard centre round after a replace, one tied duel, one duel and one trick."""
    state = start_hands((1, 2, 3, 4, 5, 9, 12), (5, 6, 7, 8, 9, 10, 11), pile=(12,))
    state.apply(0, (1,))
    state.apply(1, ())
    duel(state, 9, 9)
    duel(state, 12, 11)
    state.apply(0, (2,))
    state.apply(1, (5,))
    return state


def test_forfeit_names_the_offender_and_the_fault() -> None:
    state = mid_round()
    state.forfeit(1, Fault.TIMEOUT, "no answer in 2s")
    out = state.outcome
    assert out is not None
    assert (out.winner, out.reason, out.fault, out.offender) == (0, Reason.FORFEIT,
                                                                 Fault.TIMEOUT, 1)
    assert "timeout" in out.detail and "no answer in 2s" in out.detail
    assert state.to_act == () and state.decision is None


def test_forfeited_game_keeps_the_partial_round() -> None:
    """§8: a forfeited game records the rounds played up to the offence."""
    state = mid_round()
    state.forfeit(1, Fault.CRASH, "boom")
    assert len(state.rounds) == 1
    partial = state.rounds[0]
    assert not partial.complete and partial.showdown is None and partial.winner is None
    assert partial.replace == ((1,), ())
    assert partial.duels == ((9, 9), (12, 11))
    assert [tuple(t) for t in partial.tricks] == [(0, (2,), (5,))]
    assert partial.deck is not None and partial.deck[14] == 12
    record = GameRecord.of(state, ["a", "b"])
    data = json.loads(record.dumps())
    # A phase not reached is absent: no showdown, no winner.
    assert "showdown" not in data["rounds"][0] and "winner" not in data["rounds"][0]
    assert data["result"]["reason"] == "forfeit" and data["result"]["winner"] == 0
    assert data["result"]["fault"] == "crash" and data["result"]["offender"] == 1
    assert data["result"]["phase"] == "attack" and partial.cut == Cut(Decision.ATTACK)
    again = GameRecord.loads(record.dumps()).replay()
    assert again.outcome is not None and again.outcome.winner == 0
    assert again.rounds[0].duels == partial.duels


def test_forfeit_after_finished_rounds_keeps_them_and_the_new_partial_one() -> None:
    state = run_rounds([0, 1])
    state.forfeit(0, Fault.DISCONNECT)
    assert len(state.rounds) == 3
    assert [r.complete for r in state.rounds] == [True, True, False]
    # Nobody replaced yet: "not yet" (None), never "kept every card" (an empty list).
    assert state.rounds[2].replace == (None, None) and state.rounds[2].duels == ()
    assert state.rounds[2].cut == Cut(Decision.REPLACE)
    assert state.outcome is not None and state.outcome.winner == 1
    assert state.outcome.phase is Decision.REPLACE
    data = json.loads(GameRecord.of(state, ["a", "b"]).dumps())
    assert data["rounds"][2]["replace"] == [None, None] and "duels" not in data["rounds"][2]


def test_forfeit_while_a_simultaneous_choice_is_pending_records_the_choice_taken() -> None:
    state = start_hands((1, 2, 3, 4, 5, 9, 12), (5, 6, 7, 8, 9, 10, 11))
    state.apply(0, (1, 2))
    state.forfeit(1, Fault.TIMEOUT)
    # Seat 0 decided (secret until seat 1 would have); seat 1 never did.
    assert state.rounds[0].replace == ((1, 2), None)
    record = GameRecord.loads(GameRecord.of(state, ["a", "b"]).dumps())
    assert record.rounds[0].replace == ((1, 2), None)
    assert record.replay().outcome == state.outcome


def test_forfeit_and_abort_after_the_end_change_nothing() -> None:
    state = run_rounds([0] * 4)
    ended = state.outcome
    state.forfeit(0, Fault.CRASH)
    state.abort("late")
    assert state.outcome == ended and len(state.rounds) == 4


def test_abort_has_no_winner_and_keeps_the_partial_round() -> None:
    state = mid_round()
    state.abort("server shutdown")
    assert state.outcome == Outcome(None, Reason.ABORTED, "server shutdown",
                                    phase=Decision.ATTACK)
    assert len(state.rounds) == 1 and not state.rounds[0].complete
    with pytest.raises(IllegalActionError) as info:
        state.apply(0, (3,))
    assert info.value.code == "game_over"


def test_illegal_answer_at_a_table_is_a_forfeit() -> None:
    table = Table(TWO_CARDS, "t", ["a", "b"], decks=[showdown_deck(2, 5)])
    keep(table.state)
    err = table.answer(0, (7,))
    assert err is not None and err.code == "not_in_hand"
    out = table.state.outcome
    assert out is not None
    assert (out.winner, out.reason, out.fault, out.offender) == (1, Reason.FORFEIT,
                                                                 Fault.ILLEGAL_ACTION, 0)
    assert table.record().rounds[0].replace == ((), ())
