"""RULES.md §2 (a round's phases), §3 (Deal), §4 (Replace) and §5 (Duel), from explicit decks."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from tacocat.engine import STANDARD, Decision, GameState, RecordError, sub_multisets
from tests.engine.helpers import (
    centre_deck,
    deck_for,
    duel,
    finish_centre_round,
    keep,
    play,
    rules_with,
    start,
    start_hands,
)

# ---------------------------------------------------------------------------- §3 Deal


def test_s3_deal_alternates_seat_0_first_from_an_explicit_deck() -> None:
    """§3: seat 0 gets deck[0], deck[2], …, deck[2h-2]; seat 1 deck[1], deck[3], …, deck[2h-1]."""
    head = [5, 12, 1, 11, 2, 10, 3, 9, 4, 8, 6, 7, 6, 7]
    rest = sorted((Counter(STANDARD.cards) - Counter(head)).elements())
    state = start([*head, *rest])
    assert state.hand(0) == (1, 2, 3, 4, 5, 6, 6)
    assert state.hand(1) == (7, 7, 8, 9, 10, 11, 12)


@pytest.mark.parametrize("seed", range(5))
def test_s3_deal_matches_the_rule_for_shuffled_decks(seed: int) -> None:
    deck = list(STANDARD.cards)
    random.Random(seed).shuffle(deck)
    state = start(deck)
    assert state.hand(0) == tuple(sorted(deck[0:14:2]))
    assert state.hand(1) == tuple(sorted(deck[1:14:2]))
    assert state.observation(0).pile_size == 38 - 14


def test_s3_pile_is_the_rest_of_the_deck_top_first() -> None:
    """§3: deck[2h:] is the pile, top first: the first card drawn is deck[2h]."""
    deck = deck_for([1, 1, 1, 2, 2, 2, 3], [4, 4, 4, 5, 5, 5, 3], pile=[12, 11, 10, 9])
    state = start(deck)
    assert deck[14:18] == [12, 11, 10, 9]
    play(state, (0, (1,)), (1, ()))
    assert state.hand(0) == (1, 1, 2, 2, 2, 3, 12)
    assert state.observation(0).pile_size == 23


def test_s3_hands_are_secret() -> None:
    """§3: an observation holds the seat's own hand and only the opponent's card count."""
    state = start_hands([1, 2, 3, 4, 5, 6, 7], [8, 9, 10, 11, 12, 12, 12])
    for seat in (0, 1):
        obs = state.observation(seat)
        assert obs.hand == state.hand(seat)
        assert obs.opponent_cards == 7
        assert state.hand(1 - seat) not in obs
        assert obs.history == ()


@pytest.mark.parametrize(("space", "size"), [(2, 9), (4, 9)])
def test_s3_hand_size_is_the_number_of_tacocats_space(space: int, size: int) -> None:
    """§1/§3: h is the hand size of Tacocat's current space (9 next to the centre)."""
    winner = 0 if space == 2 else 1
    state = start(centre_deck(winner))
    finish_centre_round(state, winner)
    assert state.position == space
    assert len(state.hand(0)) == len(state.hand(1)) == size
    assert state.observation(0).pile_size == 38 - 2 * size


def test_s3_every_round_starts_from_the_full_deck() -> None:
    """§3: round 2 is dealt from its own full 38-card deck, whatever round 1 discarded."""
    second = list(reversed(STANDARD.cards))
    state = start(centre_deck(0), second)
    finish_centre_round(state, 0)
    assert state.hand(0) == tuple(sorted(second[0:18:2]))
    assert state.hand(1) == tuple(sorted(second[1:18:2]))
    assert state.observation(1).discards == ()
    assert sorted(state.rounds[0].deck or ()) == list(STANDARD.cards)


def test_s3_seeded_shuffle_is_a_permutation_and_reproducible() -> None:
    a, b, c = GameState(seed="s"), GameState(seed="s"), GameState(seed="other")
    assert a.hand(0) == b.hand(0) and a.hand(1) == b.hand(1)
    assert (a.hand(0), a.hand(1)) != (c.hand(0), c.hand(1))
    a.abort()
    deck = a.rounds[0].deck
    assert deck is not None and sorted(deck) == list(STANDARD.cards)


def test_s3_explicit_deck_must_be_a_permutation_of_the_ruleset_deck() -> None:
    with pytest.raises(RecordError, match="not a permutation"):
        start([1] * 38)
    with pytest.raises(RecordError, match="not a permutation"):
        start(list(STANDARD.cards)[:-1])
    with pytest.raises(RecordError, match="no deck given for round 0"):
        GameState(decks=[])


def test_s2_round_phases_in_order() -> None:
    """§2: Deal → Replace → Duel → Play → Showdown → Move."""
    state = start(centre_deck(0))
    seen = [state.decision]
    keep(state)
    seen.append(state.decision)
    duel(state, 12, 7)
    seen.append(state.decision)
    state.apply(0, (2, 3, 4, 5, 6))
    seen.append(state.decision)
    state.apply(1, (7, 8, 9, 10, 11))
    assert seen == [Decision.REPLACE, Decision.DUEL, Decision.ATTACK, Decision.DEFEND]
    assert state.rounds[0].showdown == (1, 12) and state.position == 2


# ------------------------------------------------------------------ §4 Replace, two arrows

HAND0 = (1, 2, 3, 4, 5, 6, 7)
HAND1 = (8, 9, 10, 11, 12, 12, 12)
PILE = (10, 11, 1, 2, 3)


@pytest.mark.parametrize("first", [0, 1])
def test_s4_two_arrows_seat_0_draws_first_whoever_answers_first(first: int) -> None:
    """§4: both choose at once; then seat 0 draws its count from the top, then seat 1."""
    state = start_hands(HAND0, HAND1, PILE)
    assert state.to_act == (0, 1)
    chosen = {0: (1, 2), 1: (8,)}
    play(state, (first, chosen[first]), (1 - first, chosen[1 - first]))
    assert state.hand(0) == (3, 4, 5, 6, 7, 10, 11)
    assert state.hand(1) == (1, 9, 10, 11, 12, 12, 12)
    obs = state.observation(1)
    assert obs.replaced == ((1, 2), (8,))
    assert obs.discards == (1, 2, 8)
    assert obs.pile_size == 24 - 3


@pytest.mark.parametrize("first", [0, 1])
def test_s4_two_arrows_first_choice_stays_secret_until_both_are_in(first: int) -> None:
    state = start_hands(HAND0, HAND1, PILE)
    state.apply(first, (HAND0 if first == 0 else HAND1)[:2])
    assert state.to_act == (1 - first,)
    assert state.decision is Decision.REPLACE
    assert state.legal_actions(first) == []
    assert state.replace_cap(1 - first) == 7
    for seat in (0, 1):
        obs = state.observation(seat)
        assert obs.replaced == (None, None)
        assert obs.discards == ()
        assert obs.pile_size == 24
    assert (state.hand(0), state.hand(1)) == (HAND0, HAND1)


def test_s4_two_arrows_cap_is_the_whole_hand() -> None:
    """§4: any number of cards, 0..h."""
    state = start_hands(HAND0, HAND1, PILE)
    assert state.replace_cap(0) == state.replace_cap(1) == 7
    assert state.legal_actions(0) == sub_multisets(HAND0, 7)
    assert max(map(len, state.legal_actions(1))) == 7
    assert () in state.legal_actions(1)


def test_s4_two_arrows_both_may_replace_the_whole_hand() -> None:
    state = start_hands(HAND0, HAND1, PILE)
    deck = deck_for(HAND0, HAND1, PILE)
    play(state, (0, HAND0), (1, HAND1))
    assert state.hand(0) == tuple(sorted(deck[14:21]))
    assert state.hand(1) == tuple(sorted(deck[21:28]))
    assert state.observation(0).pile_size == 10
    assert state.decision is Decision.DUEL


def test_s4_largest_hands_never_run_the_pile_out() -> None:
    """§4: with h <= 9, 38 - 2h >= 2h: both seats can replace 9 cards at once."""
    rules = rules_with(hand_sizes=[4, 6, 9, 9, 9, 6, 4])
    state = start(list(rules.cards), rules=rules)
    play(state, (0, state.hand(0)), (1, state.hand(1)))
    assert len(state.hand(0)) == len(state.hand(1)) == 9
    assert state.observation(0).pile_size == 2
    assert state.hand(0) == tuple(sorted(rules.cards[18:27]))
    assert state.hand(1) == tuple(sorted(rules.cards[27:36]))


def test_s4_each_seat_replaces_once() -> None:
    state = start_hands(HAND0, HAND1, PILE)
    keep(state)
    assert state.decision is Decision.DUEL
    assert state.replace_cap(0) == state.replace_cap(1) == 0
    assert state.observation(0).replaced == ((), ())


# ------------------------------------------------------------------- §4 Replace, one arrow

NINE0 = (1, 1, 2, 2, 3, 3, 4, 4, 5)
NINE1 = (8, 8, 9, 9, 10, 10, 11, 11, 12)
PILE9 = (12, 12, 7, 6, 5, 1)


def at_space(space: int, hand0: tuple[int, ...] = NINE0,
             hand1: tuple[int, ...] = NINE1) -> GameState:
    """A standard game on space 2 (seat 0 won the centre) or 4 (seat 1 won it)."""
    winner = 0 if space == 2 else 1
    state = start(centre_deck(winner), deck_for(hand0, hand1, PILE9))
    finish_centre_round(state, winner)
    assert state.position == space and state.decision is Decision.REPLACE
    return state


def test_s4_one_arrow_pointed_seat_replaces_and_draws_first_at_space_2() -> None:
    """§4: the arrow of space 2 points at seat 1; it discards k and draws k from the top."""
    state = at_space(2)
    assert state.to_act == (1,)
    assert (state.replace_cap(0), state.replace_cap(1)) == (0, 9)
    state.apply(1, (8, 9))
    assert state.hand(1) == (8, 9, 10, 10, 11, 11, 12, 12, 12)  # drew 12, 12 at once
    assert state.to_act == (0,)
    assert state.replace_cap(0) == 2
    obs = state.observation(0)
    assert obs.replaced == (None, (8, 9))
    assert obs.discards == (8, 9)
    assert obs.replace_cap == 2
    state.apply(0, (1, 1))
    assert state.hand(0) == (2, 2, 3, 3, 4, 4, 5, 6, 7)  # drew 7, 6: the next two
    assert state.observation(1).replaced == ((1, 1), (8, 9))
    assert state.decision is Decision.DUEL and state.to_act == (0, 1)


def test_s4_one_arrow_at_space_4_points_at_seat_0() -> None:
    state = at_space(4)
    assert state.to_act == (0,)
    assert (state.replace_cap(0), state.replace_cap(1)) == (9, 0)
    state.apply(0, (1,))
    assert state.hand(0) == (1, 2, 2, 3, 3, 4, 4, 5, 12)
    assert state.to_act == (1,) and state.replace_cap(1) == 1
    state.apply(1, (8,))
    assert state.hand(1) == (8, 9, 9, 10, 10, 11, 11, 12, 12)


@pytest.mark.parametrize("k", [0, 1, 3, 9])
def test_s4_one_arrow_other_seat_is_capped_at_k(k: int) -> None:
    """§4: the other seat discards j cards with 0 <= j <= k."""
    state = at_space(2)
    state.apply(1, NINE1[:k])
    legal = state.legal_actions(0)
    assert max(map(len, legal)) == k
    assert legal == sub_multisets(NINE0, k)
    assert state.is_legal(0, NINE0[:k])
    assert not state.is_legal(0, NINE0[: k + 1]) or k == 9


def test_s4_one_arrow_fewer_than_k_is_allowed() -> None:
    state = at_space(2)
    state.apply(1, (8, 8, 9))
    state.apply(0, (5,))
    assert state.hand(0) == (1, 1, 2, 2, 3, 3, 4, 4, 6)  # drew the 4th pile card
    assert state.observation(0).replaced == ((5,), (8, 8, 9))


def test_s4_one_arrow_k_zero_lets_the_other_keep_only() -> None:
    state = at_space(2)
    state.apply(1, ())
    assert state.legal_actions(0) == [()]
    assert state.replace_cap(0) == 0
    state.apply(0, ())
    assert state.observation(0).replaced == ((), ())
    assert state.observation(0).pile_size == 20


def test_s4_one_arrow_both_replace_nine_and_the_pile_holds() -> None:
    state = at_space(2)
    play(state, (1, NINE1), (0, NINE0))
    assert len(state.hand(0)) == len(state.hand(1)) == 9
    assert state.observation(0).pile_size == 2
    assert state.hand(1) == tuple(sorted((12, 12, 7, 6, 5, 1, 2, 3, 4)))


def test_s4_one_arrow_pending_opponent_cannot_act_first() -> None:
    state = at_space(2)
    assert state.legal_actions(0) == []
    assert not state.is_legal(0, ())


# ------------------------------------------------------------------------------ §5 Duel

D0 = (1, 2, 3, 5, 6, 7, 8)
D1 = (1, 5, 6, 9, 10, 11, 12)


@pytest.mark.parametrize(("c0", "c1", "attacker"), [(8, 5, 0), (7, 9, 1), (1, 12, 1),
                                                     (8, 1, 0)])
def test_s5_higher_duel_card_attacks_first(c0: int, c1: int, attacker: int) -> None:
    state = keep(start_hands(D0, D1))
    duel(state, c0, c1)
    assert state.attacker == attacker
    assert state.decision is Decision.ATTACK and state.to_act == (attacker,)
    obs = state.observation(0)
    assert obs.duels == ((c0, c1),)
    assert obs.discards == (c0, c1)
    assert c0 not in state.hand(0) or D0.count(c0) > 1
    assert len(state.hand(0)) == len(state.hand(1)) == 6


@pytest.mark.parametrize("first", [0, 1])
def test_s5_duel_is_simultaneous_and_secret(first: int) -> None:
    state = keep(start_hands(D0, D1))
    assert state.to_act == (0, 1)
    card = {0: 8, 1: 5}
    state.apply(first, (card[first],))
    assert state.to_act == (1 - first,)
    assert state.legal_actions(first) == []
    for seat in (0, 1):
        assert state.observation(seat).duels == ()
        assert state.observation(seat).discards == ()
    assert (state.hand(0), state.hand(1)) == (D0, D1)
    state.apply(1 - first, (card[1 - first],))
    assert state.observation(1).duels == ((8, 5),) and state.attacker == 0


def test_s5_equal_duel_cards_are_discarded_and_the_duel_repeats() -> None:
    state = keep(start_hands(D0, D1))
    duel(state, 5, 5)
    assert state.decision is Decision.DUEL and state.to_act == (0, 1)
    assert state.attacker is None
    assert state.hand(0) == (1, 2, 3, 6, 7, 8) and state.hand(1) == (1, 6, 9, 10, 11, 12)
    duel(state, 6, 6)
    duel(state, 1, 1)
    assert state.decision is Decision.DUEL
    duel(state, 2, 9)
    assert state.observation(0).duels == ((5, 5), (6, 6), (1, 1), (2, 9))
    assert state.observation(0).discards == (5, 5, 6, 6, 1, 1, 2, 9)
    assert state.attacker == 1 and len(state.hand(0)) == 3


def test_s5_repeated_ties_down_to_one_card_each_skip_to_the_showdown() -> None:
    """§5: if the seats hold one card each before a duel could start, there is no duel."""
    rules = rules_with(hand_sizes=[4, 6, 9, 3, 9, 6, 4])
    state = keep(start_hands([4, 5, 9], [4, 5, 2], rules=rules))
    duel(state, 4, 4)
    duel(state, 5, 5)
    assert len(state.rounds) == 1
    done = state.rounds[0]
    assert done.duels == ((4, 4), (5, 5))
    assert done.tricks == ()
    assert done.showdown == (9, 2) and done.winner == 1
    assert state.position == 4


def test_s5_one_card_hands_have_no_duel_at_all() -> None:
    rules = rules_with(hand_sizes=[4, 6, 9, 1, 9, 6, 4])
    state = start_hands([3], [8], pile=[11], rules=rules)
    assert state.replace_cap(0) == 1
    play(state, (0, (3,)), (1, ()))
    done = state.rounds[0]
    assert done.duels == () and done.tricks == ()
    assert done.showdown == (11, 8) and done.winner == 1


def test_s5_two_card_hands_go_from_the_duel_to_the_showdown() -> None:
    """§6: play needs more than one card each; after one duel of two-card hands it is over."""
    rules = rules_with(hand_sizes=[4, 6, 9, 2, 9, 6, 4])
    state = keep(start_hands([6, 10], [2, 9], rules=rules))
    duel(state, 10, 9)
    done = state.rounds[0]
    assert done.tricks == () and done.showdown == (6, 2) and done.winner == 1
