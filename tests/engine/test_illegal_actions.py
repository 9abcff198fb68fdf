"""Every :class:`IllegalActionError` code, at every decision where it can arise.

Each refusal must carry the code, the seat and the action, name the offending cards or the
reason in its message, and leave the state exactly as it was (both observations, both hands,
who acts, the decision, caps and legal actions); ``check`` and ``is_legal`` must agree.
"""

from __future__ import annotations

from typing import Any

import pytest

from tacocat.engine import Decision, Fault, GameState, IllegalActionError
from tests.engine.helpers import (
    centre_deck,
    deck_for,
    duel,
    finish_centre_round,
    keep,
    rules_with,
    run_rounds,
    snapshot,
    start,
    start_hands,
)

HAND0 = (1, 3, 4, 5, 6, 9, 12)
HAND1 = (2, 5, 7, 8, 10, 10, 11)


def refuse(state: GameState, seat: int, action: tuple[Any, ...], code: str,
           *mentions: str) -> IllegalActionError:
    """Assert ``action`` is refused with ``code``, names ``mentions``, and changes nothing."""
    before = snapshot(state)
    with pytest.raises(IllegalActionError) as info:
        state.apply(seat, action)
    err = info.value
    assert err.code == code, str(err)
    assert err.seat == seat
    assert err.action == tuple(action)
    text = str(err)
    assert f"by seat {seat}" in text
    for mention in mentions:
        assert mention in text, (mention, text)
    assert snapshot(state) == before
    with pytest.raises(IllegalActionError) as again:
        state.check(seat, action)
    assert again.value.code == code
    assert not state.is_legal(seat, action)
    assert snapshot(state) == before
    return err


# ----------------------------------------------------------------------------- positions


def replacing() -> GameState:
    return start_hands(HAND0, HAND1, pile=(12, 11))


def dueling() -> GameState:
    return keep(replacing())


def attacking() -> GameState:
    """Seat 0 attacks with 1 3 4 5 6 9 against 2 5 7 8 10 10."""
    return duel(dueling(), 12, 11)


def defending(attack: tuple[int, ...] = (9,)) -> GameState:
    state = attacking()
    state.apply(0, attack)
    return state


def one_arrow() -> GameState:
    """Standard space 2: seat 1 (the arrow's seat) replaces first, 9 cards each."""
    state = start(centre_deck(0), deck_for((1, 1, 2, 2, 3, 3, 4, 4, 5),
                                           (8, 8, 9, 9, 10, 10, 11, 11, 12)))
    finish_centre_round(state, 0)
    assert state.position == 2 and state.to_act == (1,)
    return state


# -------------------------------------------------------------------------- not_your_turn


def test_not_your_turn_at_a_one_arrow_replace() -> None:
    refuse(one_arrow(), 0, (), "not_your_turn", "seat 0", "replace", "seat 1")


def test_not_your_turn_twice_in_a_simultaneous_replace() -> None:
    state = replacing()
    state.apply(0, (1,))
    refuse(state, 0, (3,), "not_your_turn", "replace")
    state.apply(1, ())
    assert state.hand(0) == (3, 4, 5, 6, 9, 12, 12)  # the first choice stood


def test_not_your_turn_twice_in_a_duel() -> None:
    state = dueling()
    state.apply(1, (11,))
    refuse(state, 1, (10,), "not_your_turn", "duel", "seat 0")


def test_not_your_turn_for_the_defender_to_attack() -> None:
    refuse(attacking(), 1, (2,), "not_your_turn", "attack")


def test_not_your_turn_for_the_attacker_to_answer() -> None:
    refuse(defending(), 0, (12,), "not_your_turn", "defend", "seat 1")


@pytest.mark.parametrize("seat", [2, -1, 7])
def test_not_your_turn_for_a_seat_that_does_not_exist(seat: int) -> None:
    refuse(replacing(), seat, (), "not_your_turn")


# ---------------------------------------------------------------------------- not_in_hand

NOT_HELD: list[Any] = [
    pytest.param((13,), "13", id="rank-13"),
    pytest.param((2,), "2", id="opponents-card"),
    pytest.param((0,), "0", id="zero"),
    pytest.param((-1,), "-1", id="negative"),
    pytest.param((True,), "True", id="bool-True-for-1"),
    pytest.param((5.0,), "5.0", id="float-5.0"),
    pytest.param(("5",), "'5'", id="str-5"),
    pytest.param((None,), "None", id="None"),
]


@pytest.mark.parametrize(("action", "mention"), NOT_HELD)
def test_not_in_hand_replace(action: tuple[Any, ...], mention: str) -> None:
    err = refuse(replacing(), 0, action, "not_in_hand", mention)
    assert str(list(HAND0)) in err.reason


@pytest.mark.parametrize(("action", "mention"), NOT_HELD)
def test_not_in_hand_duel(action: tuple[Any, ...], mention: str) -> None:
    refuse(dueling(), 0, action, "not_in_hand", mention)


@pytest.mark.parametrize(("action", "mention"), NOT_HELD)
def test_not_in_hand_attack(action: tuple[Any, ...], mention: str) -> None:
    refuse(attacking(), 0, action, "not_in_hand", mention)


@pytest.mark.parametrize(("action", "mention"), [
    pytest.param((13,), "13", id="rank-13"),
    pytest.param((9,), "9", id="attackers-card"),
    pytest.param((10.0,), "10.0", id="float-10.0"),
    pytest.param(("10",), "'10'", id="str-10"),
    pytest.param((True,), "True", id="bool-True"),
])
def test_not_in_hand_defend(action: tuple[Any, ...], mention: str) -> None:
    refuse(defending(), 1, action, "not_in_hand", mention)


def test_bool_is_not_card_1_even_when_1_is_held() -> None:
    state = replacing()
    assert 1 in state.hand(0)
    refuse(state, 0, (True,), "not_in_hand", "True")
    refuse(state, 0, (1, True), "not_in_hand")
    state.apply(0, (1,))  # the real card is fine


def test_not_in_hand_more_copies_than_held() -> None:
    refuse(replacing(), 1, (10, 10, 10), "not_in_hand", "[10, 10, 10]")
    refuse(attacking(), 0, (6, 6), "not_in_hand", "[6, 6]")
    refuse(defending((5,)), 1, (10, 10, 10), "not_in_hand")


def test_not_in_hand_a_card_already_played() -> None:
    state = attacking()
    refuse(state, 0, (12,), "not_in_hand", "12")  # the duel card is gone


def test_not_in_hand_at_a_one_arrow_replace() -> None:
    refuse(one_arrow(), 1, (1,), "not_in_hand", "[1]")


# -------------------------------------------------------------------------------- over_cap


def test_over_cap_one_more_than_k() -> None:
    state = one_arrow()
    state.apply(1, (8,))
    refuse(state, 0, (1, 2), "over_cap", "at most 1", "not 2")
    refuse(state, 0, (1, 1, 2, 2, 3, 3, 4, 4, 5), "over_cap", "at most 1", "not 9")
    state.apply(0, (1,))
    assert state.decision is Decision.DUEL


def test_over_cap_after_k_zero() -> None:
    state = one_arrow()
    state.apply(1, ())
    refuse(state, 0, (5,), "over_cap", "at most 0", "not 1")


# ----------------------------------------------------------------------------- wrong_count


@pytest.mark.parametrize(("action", "mention"), [((), "not 0"), ((1, 3), "not 2"),
                                                 ((1, 3, 4), "not 3")])
def test_wrong_count_duel(action: tuple[int, ...], mention: str) -> None:
    refuse(dueling(), 0, action, "wrong_count", "exactly one card", mention)


def test_wrong_count_empty_attack() -> None:
    refuse(attacking(), 0, (), "wrong_count", "needs a card")


@pytest.mark.parametrize(("attack", "response", "mention"), [
    ((9,), (), "needs 1 answering cards, not 0"),
    ((9,), (10, 10), "needs 1 answering cards, not 2"),
    ((3, 4, 5), (7, 8), "needs 3 answering cards, not 2"),
    ((3, 4, 5), (2, 5, 7, 8), "needs 3 answering cards, not 4"),
])
def test_wrong_count_response(attack: tuple[int, ...], response: tuple[int, ...],
                              mention: str) -> None:
    refuse(defending(attack), 1, response, "wrong_count", mention, str(list(attack)))


# ---------------------------------------------------------------------------- empties_hand


def test_empties_hand_whole_hand_sequence() -> None:
    state = duel(keep(start_hands((3, 4, 5, 6, 7, 8, 12), HAND1)), 12, 11)
    refuse(state, 0, (3, 4, 5, 6, 7, 8), "empties_hand", "at most 5 of 6")


def test_empties_hand_whole_hand_set() -> None:
    rules = rules_with(hand_sizes=[4, 6, 9, 3, 9, 6, 4])
    state = duel(keep(start_hands((6, 6, 12), (1, 2, 11), rules=rules)), 12, 11)
    refuse(state, 0, (6, 6), "empties_hand", "at most 1 of 2")
    state.apply(0, (6,))


# ------------------------------------------------------------------------------ bad_attack


@pytest.mark.parametrize(("attack", "mention"), [
    ((4, 5), "[4, 5]"), ((5, 4), "[4, 5]"), ((3, 4, 6), "[3, 4, 6]"),
    ((1, 9), "[1, 9]"), ((3, 5), "[3, 5]"), ((4, 5, 9), "[4, 5, 9]"),
])
def test_bad_attack_shapes(attack: tuple[int, ...], mention: str) -> None:
    refuse(attacking(), 0, attack, "bad_attack", mention, "sequence", "set")


@pytest.mark.parametrize("attack", [(4, 5, 5, 6), (5, 5, 6), (4, 4, 5), (4, 5, 5)])
def test_bad_attack_duplicates_in_a_sequence_or_a_set_plus_one(attack: tuple[int, ...]) -> None:
    state = duel(keep(start_hands((4, 4, 5, 5, 6, 9, 12), HAND1)), 12, 11)
    refuse(state, 0, attack, "bad_attack", str(sorted(attack)))


# --------------------------------------------------------------------------- bad_sacrifice


@pytest.mark.parametrize("card", [5, 7, 8])
def test_bad_sacrifice_single(card: int) -> None:
    """Against 9, the hand 2 5 7 8 10 10 may sacrifice only the 2."""
    err = refuse(defending((9,)), 1, (card,), "bad_sacrifice", f"[{card}]", "[2]")
    assert "lowest" in err.reason


def test_bad_sacrifice_mixed_jumbo_response() -> None:
    """Against 4-5-6: 7 and 8 defend the 4 and the 5, but 5 sacrificed to the 6 is not the 2."""
    state = defending((4, 5, 6))
    refuse(state, 1, (7, 8, 5), "bad_sacrifice", "[5]", "i.e. [2]")
    refuse(state, 1, (8, 7, 5), "bad_sacrifice", "[5]")
    state.apply(1, (7, 8, 2))
    assert state.to_act == (0,)


def test_bad_sacrifice_two_cards_not_the_two_lowest() -> None:
    """Against 9-10-11 with 2 5 7 8 10 12: two sacrifices must be exactly the 2 and the 5."""
    state = duel(keep(start_hands((3, 4, 8, 9, 10, 11, 12), (2, 5, 7, 8, 10, 12, 11))), 12, 11)
    state.apply(0, (9, 10, 11))
    refuse(state, 1, (2, 7, 12), "bad_sacrifice", "[2, 7]", "i.e. [2, 5]")
    refuse(state, 1, (7, 2, 12), "bad_sacrifice", "[2, 7]")
    refuse(state, 1, (5, 7, 12), "bad_sacrifice", "[5, 7]")
    refuse(state, 1, (8, 10, 12), "bad_sacrifice", "[8]", "i.e. [2]")
    state.apply(1, (5, 2, 12))
    assert state.hand(1) == (7, 8, 10)


# ------------------------------------------------------------------------------- game_over


def test_game_over_after_a_goal() -> None:
    state = run_rounds([0] * 4)
    refuse(state, 0, (), "game_over", "over")
    refuse(state, 1, (1,), "game_over", "over")


def test_game_over_after_a_forfeit() -> None:
    state = attacking()
    state.forfeit(0, Fault.TIMEOUT)
    refuse(state, 0, (3,), "game_over")
    refuse(state, 1, (13,), "game_over")  # before any check of turn or cards


def test_game_over_after_an_abort() -> None:
    state = dueling()
    state.abort("operator")
    refuse(state, 0, (1,), "game_over")


def test_game_over_after_the_round_limit() -> None:
    state = run_rounds([None], rules_with(hand_sizes=[2] * 7, max_rounds=1))
    refuse(state, 0, (), "game_over")


# ------------------------------------------------------------- which check comes first


def test_turn_is_checked_before_cards() -> None:
    refuse(attacking(), 1, (13,), "not_your_turn")


def test_cards_are_checked_before_counts_and_caps() -> None:
    refuse(defending((5,)), 1, (10, 10, 10), "not_in_hand")
    refuse(dueling(), 0, (13, 14), "not_in_hand")
    state = one_arrow()
    state.apply(1, ())
    refuse(state, 0, (13,), "not_in_hand")


def test_a_refused_answer_keeps_the_opponents_pending_choice() -> None:
    state = dueling()
    state.apply(0, (9,))
    refuse(state, 1, (9,), "not_in_hand")
    refuse(state, 1, (7, 8), "wrong_count")
    state.apply(1, (10,))
    assert state.observation(0).duels == ((9, 10),) and state.attacker == 1


def test_refused_actions_leave_a_playable_state() -> None:
    """After a string of refusals the game still plays to its end."""
    state = attacking()
    for seat, action in ((1, (2,)), (0, (4, 5)), (0, ()), (0, (1, 3, 4, 5, 6, 9))):
        with pytest.raises(IllegalActionError):
            state.apply(seat, action)
    state.apply(0, (3, 4, 5, 6))
    state.apply(1, (5, 7, 8, 10))
    state.apply(1, (2,))
    state.apply(0, (9,))
    assert len(state.rounds) == 1
    assert state.rounds[0].showdown == (1, 10) and state.rounds[0].winner == 0


# ---------------------------------------------------------------- what a reason may quote


def covert_cards(text: bytes) -> tuple[int, ...]:
    """What a hostile bot sends to publish ``text``: its bytes packed into int32 "cards"."""
    padded = text + b"\0" * (-len(text) % 4)
    return tuple(int.from_bytes(padded[i:i + 4], "little", signed=True)
                 for i in range(0, len(padded), 4))


@pytest.mark.parametrize(("action", "said"), [
    pytest.param(covert_cards(b"/tmp/tacocat-match-4242-x/a uid=1600000001"),
                 "more cards than hand [1, 3, 4, 5, 6, 9, 12] holds", id="64-int32-payload"),
    pytest.param(covert_cards(b"boot-id!"), "cards that are not ranks of the deck are not "
                 "in hand [1, 3, 4, 5, 6, 9, 12]", id="few-int32s"),
    pytest.param((2, 7, 2_000_000_000), "cards that are not ranks of the deck", id="one-big"),
    pytest.param((-1,), "cards that are not ranks of the deck", id="negative"),
    pytest.param((1.5, "x"), "cards that are not ranks of the deck", id="not-ints"),
    pytest.param((True,), "cards that are not ranks of the deck", id="bool"),
])
def test_a_reason_quotes_no_value_a_bot_chose_beyond_a_hand(action: tuple[Any, ...],
                                                            said: str) -> None:
    # The reason goes into public records: an action that could not be a hand (values that
    # are no ranks of the deck, more cards than the hand) is described, never quoted, so a
    # bot cannot publish bytes through it (issue 30: 793 characters out of 64 int32s).
    with pytest.raises(IllegalActionError) as info:
        replacing().apply(0, action)
    reason = info.value.reason
    assert said in reason, reason
    for value in action:
        if value not in HAND0:
            assert str(value) not in reason.replace(str(list(HAND0)), ""), reason


def test_a_reason_quotes_cards_that_could_be_a_hand() -> None:
    # Ranks of the deck, at most a hand's count: what the rules allow, quoted to explain.
    with pytest.raises(IllegalActionError) as info:
        replacing().apply(0, (2, 7, 7))
    assert info.value.reason == "cards [2, 7, 7] are not all in hand [1, 3, 4, 5, 6, 9, 12]"
