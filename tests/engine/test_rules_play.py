"""RULES.md §6 (Play): attacks, responses, the lowest-cards rule and who attacks next.

Positions: the standard centre space (7 cards each). :func:`playing` deals the two 6-card
"play hands" plus a duel card each, keeps, and duels so that the wanted seat attacks.
"""

from __future__ import annotations

from itertools import permutations

import pytest

from tacocat.engine import (
    Decision,
    GameState,
    IllegalActionError,
    Trick,
    legal_attacks,
    legal_defences,
    sub_multisets,
)
from tests.engine.helpers import duel, keep, start_hands, trick


def playing(play0: tuple[int, ...], play1: tuple[int, ...], attacker: int = 0) -> GameState:
    """After replace (kept) and one duel (12 against 11), ``attacker`` attacks; the seats hold
    exactly ``play0`` and ``play1``."""
    cards = (12, 11) if attacker == 0 else (11, 12)
    state = keep(start_hands((*play0, cards[0]), (*play1, cards[1])))
    duel(state, *cards)
    assert state.to_act == (attacker,) and state.decision is Decision.ATTACK
    assert (state.hand(0), state.hand(1)) == (tuple(sorted(play0)), tuple(sorted(play1)))
    return state


def refused_code(state: GameState, seat: int, action: tuple[int, ...]) -> str:
    with pytest.raises(IllegalActionError) as info:
        state.apply(seat, action)
    return info.value.code


A0 = (3, 4, 5, 6, 6, 9)
A1 = (2, 5, 7, 8, 10, 10)


# ------------------------------------------------------------------- single attacks


def test_s6_single_attack_asks_the_defender_for_one_card() -> None:
    state = playing(A0, A1)
    state.apply(0, (4,))
    assert state.decision is Decision.DEFEND and state.to_act == (1,)
    assert state.observation(1).attack == (4,)
    assert state.observation(0).attack == ()  # only the defender is asked to answer it
    assert state.hand(0) == (3, 5, 6, 6, 9)


def test_s6_higher_card_defends_and_the_defender_attacks_next() -> None:
    """§6 Outcome: every attack card defended → the defender wins the trick, attacks next."""
    state = playing(A0, A1)
    trick(state, (4,), (7,))
    assert state.observation(0).tricks == (Trick(0, (4,), (7,)),)
    assert state.observation(0).tricks[0].defended
    assert state.attacker == 1 and state.to_act == (1,)
    assert state.decision is Decision.ATTACK


def test_s6_equal_rank_defends() -> None:
    state = playing(A0, A1)
    trick(state, (5,), (5,))
    assert state.attacker == 1 and state.to_act == (1,)


def test_s6_sacrifice_of_the_lowest_card_lets_the_attacker_attack_again() -> None:
    """§6: a lower answering card is a sacrifice; one sacrifice → the attacker attacks again."""
    state = playing(A0, A1)
    trick(state, (9,), (2,))
    assert not state.observation(1).tricks[-1].defended
    assert state.attacker == 0 and state.to_act == (0,)
    assert state.decision is Decision.ATTACK


@pytest.mark.parametrize("card", [5, 7, 8])
def test_s6_sacrifice_must_be_the_lowest_card(card: int) -> None:
    """§6: a defender that will not or cannot defend plays its lowest card (2, not 5/7/8)."""
    state = playing(A0, A1)
    state.apply(0, (9,))
    assert refused_code(state, 1, (card,)) == "bad_sacrifice"
    assert state.legal_actions(1) == [(2,), (10,)]


def test_s6_the_lowest_card_may_also_defend() -> None:
    state = playing((3, 4, 6, 6, 8, 9), (5, 7, 7, 8, 10, 10))
    trick(state, (4,), (5,))
    assert state.observation(0).tricks[-1].defended and state.attacker == 1


def test_s6_all_played_cards_go_face_up_to_the_discards() -> None:
    state = playing(A0, A1)
    trick(state, (9,), (2,))
    trick(state, (6, 6), (7, 8))
    assert state.observation(1).discards == (12, 11, 9, 2, 6, 6, 7, 8)


# --------------------------------------------------------------------- Jumbo attacks

S0 = (6, 6, 6, 6, 2, 3)
S1 = (1, 5, 7, 8, 9, 10)


@pytest.mark.parametrize("attack", [(6, 6), (6, 6, 6), (6, 6, 6, 6)])
def test_s6_a_set_is_two_or_more_cards_of_one_rank(attack: tuple[int, ...]) -> None:
    state = playing(S0, S1)
    state.apply(0, attack)
    assert state.observation(1).attack == attack
    assert len(state.hand(0)) == 6 - len(attack)


Q0 = (3, 4, 5, 6, 7, 9)


@pytest.mark.parametrize("attack", [(3, 4, 5), (5, 6, 7), (4, 5, 6, 7), (3, 4, 5, 6, 7),
                                    (5, 3, 4), (7, 5, 6)])
def test_s6_a_sequence_is_three_or_more_consecutive_ranks(attack: tuple[int, ...]) -> None:
    state = playing(Q0, S1)
    state.apply(0, attack)
    assert state.observation(1).attack == attack  # kept in the order laid
    assert len(state.hand(0)) == 6 - len(attack)


@pytest.mark.parametrize("attack", [(4, 5), (5, 6), (4, 5, 7), (3, 5, 7), (5, 7, 9),
                                    (3, 4, 5, 7), (6, 7, 9)])
def test_s6_non_sequences_are_bad_attacks(attack: tuple[int, ...]) -> None:
    """§6: 4-5 is two cards (a sequence needs three); 4-5-7 has a gap."""
    state = playing(Q0, S1)
    assert refused_code(state, 0, attack) == "bad_attack"


@pytest.mark.parametrize("attack", [(4, 5, 5, 6), (5, 5, 6), (4, 4, 5, 6, 6), (5, 5, 4)])
def test_s6_duplicates_inside_a_sequence_or_mixed_shapes_are_bad(attack: tuple[int, ...]) -> None:
    """§6: a sequence holds each rank once; a set plus a card is neither shape."""
    state = playing((4, 4, 5, 5, 6, 6), S1)
    assert refused_code(state, 0, attack) == "bad_attack"


def test_s6_an_attack_may_not_empty_the_hand() -> None:
    """§6: at most hand - 1 cards, even for a perfect sequence or set."""
    state = playing((3, 4, 5, 6, 7, 8), S1)
    assert refused_code(state, 0, (3, 4, 5, 6, 7, 8)) == "empties_hand"
    state.apply(0, (4, 5, 6, 7, 8))
    assert state.hand(0) == (3,)


def test_s6_a_set_may_not_empty_a_two_card_hand() -> None:
    state = playing((2, 3, 4, 8, 9, 9), (1, 5, 6, 7, 10, 10))
    trick(state, (2,), (5,))  # defended: seat 1 attacks next
    trick(state, (1,), (3,))  # defended: seat 0 attacks next
    trick(state, (4,), (6,))
    trick(state, (7,), (8,))
    assert state.hand(0) == (9, 9) and state.hand(1) == (10, 10)
    assert state.to_act == (0,)
    assert refused_code(state, 0, (9, 9)) == "empties_hand"
    assert state.legal_actions(0) == [(9,)]


# ----------------------------------------------------------------- Jumbo responses

J1 = (2, 3, 7, 8, 9, 10)


def test_s6_jumbo_defended_card_by_card() -> None:
    state = playing(S0, J1)
    trick(state, (6, 6), (8, 7))
    assert state.observation(0).tricks[-1] == Trick(0, (6, 6), (8, 7))
    assert state.attacker == 1


def test_s6_sacrifice_against_one_card_of_a_jumbo_loses_the_trick() -> None:
    """§6: if even one card was sacrificed, the attacker attacks again."""
    state = playing(S0, J1)
    trick(state, (6, 6), (9, 2))
    assert not state.observation(0).tricks[-1].defended
    assert state.attacker == 0 and state.to_act == (0,)


def test_s6_two_sacrifices_must_be_the_two_lowest() -> None:
    state = playing(S0, (2, 3, 5, 8, 9, 10))
    state.apply(0, (6, 6, 6))
    assert refused_code(state, 1, (2, 5, 9)) == "bad_sacrifice"  # {2, 5} is not {2, 3}
    assert refused_code(state, 1, (5, 3, 9)) == "bad_sacrifice"
    state.apply(1, (3, 9, 2))
    assert state.attacker == 0 and state.hand(1) == (5, 8, 10)


def test_s6_mixed_response_with_a_non_lowest_sacrifice_is_refused() -> None:
    """§6: one defence and one sacrifice of 3 while 2 is still in hand."""
    state = playing(S0, J1)
    state.apply(0, (6, 6))
    assert refused_code(state, 1, (8, 3)) == "bad_sacrifice"
    assert refused_code(state, 1, (3, 8)) == "bad_sacrifice"
    state.apply(1, (3, 2))  # both sacrificed: together they are the two lowest
    assert state.to_act == (0,)


def test_s6_sequence_answered_position_by_position() -> None:
    """response[j] answers attack[j]: (5, 2, 7) against 4-5-6 sacrifices only the 2."""
    state = playing(Q0, (2, 3, 5, 7, 10, 10))
    state.apply(0, (4, 5, 6))
    assert refused_code(state, 1, (3, 5, 7)) == "bad_sacrifice"  # 3 < 4, but 2 is lower
    assert refused_code(state, 1, (5, 3, 7)) == "bad_sacrifice"
    state.apply(1, (5, 2, 7))
    assert state.observation(0).tricks[-1] == Trick(0, (4, 5, 6), (5, 2, 7))
    assert state.to_act == (0,)


def test_s6_lowest_card_spent_on_a_defence_does_not_excuse_a_higher_sacrifice() -> None:
    """§6: the sacrificed cards themselves must be the s lowest of the hand.

    Hand 4 5 5 10 10 11 against 4-5-6: (4, 5, 5) defends 4 and 5 but sacrifices a 5 against
    the 6 while the 4 (spent on a defence) is the lowest: refused. (5, 4, 10) sacrifices the
    4 itself: legal.
    """
    state = playing((3, 4, 5, 6, 9, 9), (4, 5, 5, 10, 10, 11))
    state.apply(0, (4, 5, 6))
    assert refused_code(state, 1, (4, 5, 5)) == "bad_sacrifice"
    assert state.is_legal(1, (5, 4, 10))
    assert state.is_legal(1, (4, 5, 10))
    assert state.is_legal(1, (5, 5, 4))  # sacrifices the 4 against the 6
    assert not state.is_legal(1, (10, 5, 5))  # sacrifices a 5 against the 6


# ------------------------------------------------------------- legality, exhaustively


def spec_attack(hand: tuple[int, ...], cards: tuple[int, ...]) -> bool:
    """§6 attack shape, written from the rule text."""
    n, ranks = len(cards), sorted(cards)
    if not 1 <= n <= len(hand) - 1:
        return False
    if n == 1 or len(set(ranks)) == 1:
        return True
    return n >= 3 and ranks == list(range(ranks[0], ranks[0] + n))


def spec_response(hand: tuple[int, ...], attack: tuple[int, ...],
                  response: tuple[int, ...]) -> bool:
    """§6 response, from the rule text: sacrificed cards = the s lowest of the hand."""
    sacrificed = sorted(r for r, a in zip(response, attack, strict=True) if r < a)
    return sacrificed == sorted(hand)[: len(sacrificed)]


@pytest.mark.parametrize("hand", [Q0, S0, (4, 4, 5, 5, 6, 6), (1, 2, 3, 4, 5, 6),
                                  (2, 2, 2, 8, 9, 10)])
def test_s6_every_attack_is_legal_exactly_when_the_rule_says(hand: tuple[int, ...]) -> None:
    state = playing(hand, (1, 7, 7, 8, 10, 10))
    spec = {c for c in sub_multisets(hand, len(hand)) if spec_attack(hand, c)}
    assert set(state.legal_actions(0)) == spec
    assert set(legal_attacks(hand)) == spec
    for cards in sub_multisets(hand, len(hand)):
        for order in set(permutations(cards)):
            assert state.is_legal(0, order) == (cards in spec), order


@pytest.mark.parametrize(("attacker", "defender", "attack"), [
    (S0, J1, (6, 6)), (S0, J1, (6, 6, 6)), (S0, (2, 2, 3, 7, 7, 9), (6, 6, 6, 6)),
    ((3, 4, 5, 6, 9, 9), (4, 5, 5, 10, 10, 11), (4, 5, 6)),
    (Q0, (1, 5, 7, 8, 9, 10), (6,)), (Q0, (2, 2, 3, 8, 8, 10), (7, 5, 6)),
])
def test_s6_every_response_is_legal_exactly_when_the_rule_says(
        attacker: tuple[int, ...], defender: tuple[int, ...], attack: tuple[int, ...]) -> None:
    state = playing(attacker, defender)
    state.apply(0, attack)
    for response in set(permutations(defender, len(attack))):
        assert state.is_legal(1, response) == spec_response(defender, attack, response), response
    listed = state.legal_actions(1)
    assert listed == list(legal_defences(defender, attack))
    assert all(spec_response(defender, attack, r) for r in listed)
    key = {tuple(sorted(zip(attack, r, strict=True))) for r in set(
        permutations(defender, len(attack))) if spec_response(defender, attack, r)}
    assert {tuple(sorted(zip(attack, r, strict=True))) for r in listed} == key


# -------------------------------------------------------------- play until one card each


def test_s6_play_continues_while_both_hold_more_than_one_card() -> None:
    """§6: the seats always hold the same number; at one card each the showdown follows."""
    state = playing(A0, A1)
    plan = [((3,), (5,)), ((2,), (4,)), ((5,), (7,)), ((8,), (9,)), ((6,), (10,))]
    for number, (attack, response) in enumerate(plan, 1):
        assert state.decision is Decision.ATTACK
        trick(state, attack, response)
        if number < 5:
            assert len(state.hand(0)) == len(state.hand(1)) == 6 - number
    assert len(state.rounds) == 1
    done = state.rounds[0]
    assert [t.attacker for t in done.tricks] == [0, 1, 0, 1, 0]
    assert done.showdown == (6, 10) and done.winner == 0
    assert state.decision is Decision.REPLACE  # a new round began


def test_s6_jumbo_attack_can_reach_the_showdown_in_one_trick() -> None:
    state = playing(Q0, J1)
    trick(state, (3, 4, 5, 6, 7), (3, 7, 8, 9, 10))
    done = state.rounds[0]
    assert done.tricks == (Trick(0, (3, 4, 5, 6, 7), (3, 7, 8, 9, 10)),)
    assert done.showdown == (9, 2) and done.winner == 1
