"""Building exact positions for the rule scenario tests.

A scenario is a game whose decks are given explicitly (RULES.md §3 dealing rule), driven by
explicit actions. :func:`deck_for` turns two wanted hands (and optionally the top of the draw
pile) into a full deck; :func:`start` makes a :class:`GameState` from such decks; :func:`keep`,
:func:`duel`, :func:`trick` and :func:`play` apply actions; :func:`snapshot` captures
everything observable so a test can prove an illegal action changed nothing.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from tacocat.engine import STANDARD, Decision, GameState, Ruleset

Cards = Sequence[int]


def rules_with(**changes: Any) -> Ruleset:
    """The standard ruleset with some fields changed (through :meth:`Ruleset.from_dict`)."""
    data = {**STANDARD.to_dict(), "name": "custom", **changes}
    return Ruleset.from_dict(data)


def deck_for(hand0: Cards, hand1: Cards, pile: Cards = (), rules: Ruleset = STANDARD,
             rest: str = "ascending") -> list[int]:
    """A full deck of ``rules`` that deals ``hand0`` to seat 0 and ``hand1`` to seat 1.

    The hands are interleaved as RULES.md §3 deals them (seat 0 gets deck[0], deck[2], …).
    The draw pile starts with ``pile`` (top first) and continues with the remaining cards of
    the ruleset's deck in ``rest`` order ("ascending" or "descending").
    """
    if len(hand0) != len(hand1):
        raise ValueError(f"hands of different sizes: {list(hand0)} / {list(hand1)}")
    dealt = [card for pair in zip(hand0, hand1, strict=True) for card in pair]
    wanted = Counter(dealt) + Counter(pile)
    available = Counter(rules.cards)
    for rank, count in wanted.items():
        if available[rank] < count:
            raise ValueError(f"ruleset {rules.name!r} has {available[rank]} cards of rank "
                             f"{rank}, the scenario needs {count}")
    remaining = sorted((available - wanted).elements(), reverse=rest == "descending")
    return [*dealt, *pile, *remaining]


def start(*decks: Sequence[int], rules: Ruleset = STANDARD) -> GameState:
    """A game playing ``decks`` in order, then sorted full decks for any further round."""
    def supply() -> Iterator[Sequence[int]]:
        yield from decks
        while True:
            yield list(rules.cards)
    return GameState(rules, seed="scenario", decks=supply())


def start_hands(hand0: Cards, hand1: Cards, pile: Cards = (), rules: Ruleset = STANDARD,
                later: Iterable[Sequence[int]] = ()) -> GameState:
    """A game whose first round deals ``hand0``/``hand1`` (then ``later`` decks)."""
    return start(deck_for(hand0, hand1, pile, rules), *later, rules=rules)


def play(state: GameState, *moves: tuple[int, Cards]) -> GameState:
    """Apply ``(seat, action)`` moves in order."""
    for seat, action in moves:
        state.apply(seat, tuple(action))
    return state


def keep(state: GameState) -> GameState:
    """Every seat asked to replace keeps its hand (in the order the rules ask them)."""
    assert state.decision is Decision.REPLACE, state.decision
    while state.decision is Decision.REPLACE:
        state.apply(state.to_act[0], ())
    return state


def duel(state: GameState, card0: int, card1: int) -> GameState:
    """Seat 0 duels with ``card0``, seat 1 with ``card1``."""
    assert state.decision is Decision.DUEL, state.decision
    state.apply(0, (card0,))
    state.apply(1, (card1,))
    return state


def trick(state: GameState, attack: Cards, response: Cards) -> GameState:
    """The seat asked to attack lays ``attack``; the other answers with ``response``."""
    assert state.decision is Decision.ATTACK, state.decision
    attacker = state.to_act[0]
    state.apply(attacker, tuple(attack))
    state.apply(1 - attacker, tuple(response))
    return state


# ------------------------------------------------------- whole rounds with two-card hands

#: Two cards per hand on every space: a round is replace → one duel → showdown.
TWO_CARDS = rules_with(hand_sizes=[2] * 7)


def showdown_deck(card0: int, card1: int, rules: Ruleset = TWO_CARDS) -> list[int]:
    """A two-card-hand deck whose showdown is ``card0`` against ``card1``.

    Seat 0 holds ``[card0, 12]`` and seat 1 ``[card1, 11]``; :func:`quick_round` duels the
    high cards away, so the low ones meet at the showdown.
    """
    return deck_for([card0, 12], [card1, 11], rules=rules)


def quick_round(state: GameState) -> GameState:
    """Finish a two-card round: both keep, duel their highest card, showdown."""
    keep(state)
    duel(state, max(state.hand(0)), max(state.hand(1)))
    return state


def winner_deck(winner: int | None, rules: Ruleset = TWO_CARDS) -> list[int]:
    """A two-card deck whose round ``winner`` wins (``None``: a tied showdown)."""
    if winner is None:
        return showdown_deck(3, 3, rules)
    return showdown_deck(2, 5, rules) if winner == 0 else showdown_deck(5, 2, rules)


def run_rounds(winners: Sequence[int | None], rules: Ruleset = TWO_CARDS) -> GameState:
    """A game in which round ``i`` is won by ``winners[i]`` (two-card hands)."""
    state = start(*(winner_deck(w, rules) for w in winners), rules=rules)
    for _ in winners:
        quick_round(state)
    return state


# ------------------------------------------------------------------------- snapshots


def snapshot(state: GameState) -> dict[str, Any]:
    """Everything observable about ``state``, to compare before and after an action."""
    return {
        "observations": (state.observation(0), state.observation(1)),
        "hands": (state.hand(0), state.hand(1)),
        "to_act": state.to_act,
        "decision": state.decision,
        "attacker": state.attacker,
        "attack": state.attack,
        "position": state.position,
        "covered": state.covered,
        "score": state.score,
        "rounds": tuple(state.rounds),
        "outcome": state.outcome,
        "caps": (state.replace_cap(0), state.replace_cap(1)),
        "legal": (state.legal_actions(0), state.legal_actions(1)),
    }


# ------------------------------------------------- a whole standard round on the centre space

_LOW_HAND = (1, 2, 3, 4, 5, 6, 12)
_HIGH_HAND = (7, 7, 8, 9, 10, 11, 12)


def centre_deck(winner: int) -> list[int]:
    """A standard centre deck (7 cards each) that :func:`finish_centre_round` lets ``winner`` win.

    The winner holds 1 2 3 4 5 6 12, the loser 7 7 8 9 10 11 12.
    """
    return deck_for(_LOW_HAND, _HIGH_HAND) if winner == 0 else deck_for(_HIGH_HAND, _LOW_HAND)


def finish_centre_round(state: GameState, winner: int) -> GameState:
    """Play a :func:`centre_deck` round: keep, duel 12 against 7, attack 2-3-4-5-6, defended
    by 7-8-9-10-11; the showdown is 1 against 12."""
    keep(state)
    duel(state, *((12, 7) if winner == 0 else (7, 12)))
    trick(state, (2, 3, 4, 5, 6), (7, 8, 9, 10, 11))
    return state
