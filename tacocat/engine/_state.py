"""The game as a passive state machine (RULES.md §2-6c).

The state says which seat(s) must decide what, and applies validated actions. It never calls
a bot: drivers (local runner, referee, workers) loop over it, so the rules live only here.
Simultaneous decisions (two-arrow replace, duels) are collected one seat at a time and
resolved once both are in; the first one stays secret until then.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from ._cards import legal_attacks, legal_defences, sub_multisets
from ._errors import IllegalActionError, RecordError
from ._ruleset import BOTH, STANDARD, Ruleset, TieRule
from ._types import (
    HIGH_GOAL,
    LOW_GOAL,
    Cut,
    Decision,
    Fault,
    Observation,
    Outcome,
    Reason,
    Round,
    Trick,
)

_REPLACE, _DUEL, _ATTACK, _DEFEND = (Decision.REPLACE, Decision.DUEL, Decision.ATTACK,
                                      Decision.DEFEND)
_NO_HAND: tuple[int, ...] = ()
_new_tuple = tuple.__new__
_ONLY = ((0,), (1,))  # shared one-seat ``to_act`` tuples


class GameState:
    """One game of Tacocat Spelled Backwards.

    A game is a pure function of the ruleset, the seed and both seats' decisions. Pass
    ``decks`` (one shuffled deck per round) instead of relying on the seed to set up exact
    positions, as tests and replays do.

    >>> state = GameState(seed="demo")
    >>> state.decision, state.to_act
    (<Decision.REPLACE: 'replace'>, (0, 1))
    """

    __slots__ = (
        "_attack",
        "_attacker",
        "_cap",
        "_covered",
        "_deck",
        "_decks",
        "_discards",
        "_duels",
        "_hands",
        "_history",
        "_pending",
        "_pile",
        "_pile_pos",
        "_replace",
        "_rng",
        "_score",
        "_tricks",
        "decision",
        "outcome",
        "position",
        "rounds",
        "rules",
        "seed",
        "to_act",
    )

    def __init__(self, rules: Ruleset = STANDARD, seed: str | int = "0",
                 decks: Iterable[Sequence[int]] | None = None) -> None:
        self.rules = rules
        self.seed = str(seed)
        self._rng = random.Random(self.seed)
        self._decks: Iterator[Sequence[int]] | None = iter(decks) if decks is not None else None
        self.position = rules.start_space
        # Immutable tuples, replaced on change: observations share them without copying.
        self._covered = (False,) * len(rules.hand_sizes)
        self._score = (0, 0)
        self.rounds: list[Round] = []
        self._history: tuple[Round, ...] = ()
        self.outcome: Outcome | None = None
        self.decision: Decision | None = None
        self.to_act: tuple[int, ...] = ()
        self._start_round()

    # ----------------------------------------------------------------- queries

    @property
    def is_over(self) -> bool:
        return self.outcome is not None

    @property
    def round_index(self) -> int:
        """Index of the current round (equal to the number of finished rounds)."""
        return len(self.rounds)

    @property
    def covered(self) -> tuple[bool, ...]:
        """Which spaces carry a tile."""
        return self._covered

    @property
    def score(self) -> tuple[int, int]:
        """Rounds won by each seat."""
        return self._score

    @property
    def attacker(self) -> int | None:
        return self._attacker

    @property
    def attack(self) -> tuple[int, ...]:
        """The attack waiting for an answer (empty unless the decision is DEFEND)."""
        return self._attack

    def hand(self, seat: int) -> tuple[int, ...]:
        """A seat's hand, sorted. Hidden information: drivers must not pass it to the other."""
        return tuple(self._hands[seat])

    def replace_cap(self, seat: int) -> int:
        """How many cards ``seat`` may replace now (0 when it is not replacing)."""
        if self.decision is not _REPLACE or seat not in self.to_act:
            return 0
        return self._cap

    @property
    def public_rounds(self) -> tuple[Round, ...]:
        """Every round closed so far without its deck: what either seat may see of them
        (the ``history`` of its observations; at the end, the whole game, cut round included)."""
        return self._history

    def observation(self, seat: int) -> Observation:
        """What ``seat`` may know right now."""
        asked = self.decision if seat in self.to_act else None
        # tuple.__new__ skips the named tuple's Python-level __new__: one per decision adds up.
        return _new_tuple(Observation, (
            seat, asked, self.rules, len(self.rounds), self.position, self._covered,
            tuple(self._hands[seat]), len(self._hands[1 - seat]),
            len(self._pile) - self._pile_pos, self._discards, self._replace, self._duels,
            self._tricks, self._attacker, self._attack if asked is _DEFEND else _NO_HAND,
            self._cap if asked is _REPLACE else 0, self._score, self._history,
        ))

    def legal_actions(self, seat: int) -> list[tuple[int, ...]]:
        """Every distinct legal action for ``seat`` now (empty when it is not asked)."""
        if seat not in self.to_act or self._pending[seat] is not None:
            return []
        hand = tuple(self._hands[seat])
        if self.decision is _REPLACE:
            return sub_multisets(hand, self._cap)
        if self.decision is _DUEL:
            return [(r,) for r in sorted(set(hand))]
        if self.decision is _ATTACK:
            return list(legal_attacks(hand))
        return list(legal_defences(hand, self._attack))

    def check(self, seat: int, action: Sequence[int]) -> None:
        """Raise :class:`IllegalActionError` saying why ``action`` is illegal; else nothing."""
        self._validate(seat, tuple(action))

    def is_legal(self, seat: int, action: Sequence[int]) -> bool:
        try:
            self._validate(seat, tuple(action))
        except IllegalActionError:
            return False
        return True

    # ----------------------------------------------------------------- actions

    def apply(self, seat: int, action: Sequence[int]) -> None:
        """Apply ``seat``'s decision. An illegal action raises and changes nothing."""
        cards = action if type(action) is tuple else tuple(action)
        rest = self._validate(seat, cards)
        decision = self.decision
        if decision is _ATTACK:
            self._hands[seat] = rest
            self._attack = cards
            self.decision = _DEFEND
            self.to_act = _ONLY[1 - seat]
        elif decision is _DEFEND:
            self._defend(seat, cards, rest)
        elif decision is _DUEL:
            self._pending[seat] = cards
            if self._pending[1 - seat] is not None:
                self._resolve_duel()
            else:
                self.to_act = _ONLY[1 - seat]
        else:
            self._replace_cards(seat, cards, rest)

    def forfeit(self, seat: int, fault: Fault, detail: str = "") -> None:
        """End the game: ``seat`` forfeits for ``fault``; the other seat wins."""
        if self.outcome is not None:
            return
        text = f"{fault.value}: seat {seat}" + (f": {detail}" if detail else "")
        self._finish(Outcome(1 - seat, Reason.FORFEIT, text, fault, seat, self.decision))

    def abort(self, detail: str = "") -> None:
        """End the game with no result (server shutdown, operator action)."""
        if self.outcome is None:
            self._finish(Outcome(None, Reason.ABORTED, detail, None, None, self.decision))

    # ----------------------------------------------------------------- internals

    def _validate(self, seat: int, cards: tuple[Any, ...]) -> list[int]:
        """Check ``cards`` for ``seat``; return the hand that would remain after playing them.

        ``cards`` come from bots, so anything may be in them (``Any``, not ``int``: compiled
        with mypyc, an ``int`` annotation would raise TypeError before the check below).
        """
        if seat not in self.to_act or type(seat) is not int:  # to_act is () once it is over
            if self.outcome is not None:
                raise IllegalActionError(seat, cards, "game_over", "the game is over")
            raise IllegalActionError(
                seat, cards, "not_your_turn",
                f"it is not seat {seat}'s turn: waiting for {self.decision.value} "  # type: ignore[union-attr]
                f"from seat {' and '.join(map(str, self.to_act))}",
            )
        hand = self._hands[seat]
        rest = hand.copy()
        try:
            for card in cards:
                if type(card) is not int:  # a bool or a float would pass list.remove
                    raise ValueError(card)
                rest.remove(card)
        except ValueError:
            raise IllegalActionError(seat, cards, "not_in_hand",
                                     self._not_in_hand(cards, hand)) from None
        decision = self.decision
        n = len(cards)
        if decision is _DEFEND:
            attack = self._attack
            if n != len(attack):
                raise IllegalActionError(
                    seat, cards, "wrong_count",
                    f"the attack {list(attack)} needs {len(attack)} answering cards, not {n}",
                )
            if n == 1 and (cards[0] >= attack[0] or cards[0] == hand[0]):
                return rest  # the common case, without building lists
            sacrificed = sorted(c for c, a in zip(cards, attack, strict=True) if c < a)
            if sacrificed and hand[: len(sacrificed)] != sacrificed:
                raise IllegalActionError(
                    seat, cards, "bad_sacrifice",
                    f"sacrificed cards {sacrificed} must be the {len(sacrificed)} lowest "
                    f"of hand {hand}, i.e. {hand[: len(sacrificed)]}",
                )
        elif decision is _ATTACK:
            if n == 0:
                raise IllegalActionError(seat, cards, "wrong_count", "an attack needs a card")
            if n >= len(hand):
                raise IllegalActionError(
                    seat, cards, "empties_hand",
                    f"an attack may not empty the hand: at most {len(hand) - 1} of "
                    f"{len(hand)} cards",
                )
            if n > 1:
                ordered = sorted(cards)
                if ordered[0] != ordered[-1] and (
                    n < 3 or any(b != a + 1 for a, b in zip(ordered, ordered[1:], strict=False))
                ):
                    raise IllegalActionError(
                        seat, cards, "bad_attack",
                        f"{ordered} is neither a set (cards of one rank) nor a sequence "
                        "(3 or more consecutive ranks, each once)",
                    )
        elif decision is _DUEL:
            if n != 1:
                raise IllegalActionError(seat, cards, "wrong_count",
                                         f"a duel takes exactly one card, not {n}")
        elif n > self._cap:
            raise IllegalActionError(seat, cards, "over_cap",
                                     f"may replace at most {self._cap} cards, not {n}")
        return rest

    def _not_in_hand(self, cards: tuple[Any, ...], hand: list[int]) -> str:
        """Why ``cards`` are not the hand's, quoting them only as the rules allow.

        The reason goes into public records, and ``cards`` are whatever the bot sent: quoted
        as they are, they would publish anything it encodes in them (64 int32 "cards" carry
        its host's paths). So they are shown only when they could be a hand of this game
        (ranks of the deck, no more than the hand holds); anything else gets a fixed text.
        """
        deck = self.rules.deck
        if len(cards) > len(hand):
            return f"more cards than hand {hand} holds"
        if all(type(c) is int and c in deck for c in cards):
            return f"cards {list(cards)} are not all in hand {hand}"
        return f"cards that are not ranks of the deck are not in hand {hand}"

    def _next_deck(self) -> list[int]:
        if self._decks is None:
            # Sorting on random() keys: faster than Random.shuffle's Python loop, and just as
            # deterministic for a given seed (sorted() is stable; equal keys never happen).
            rand = self._rng.random
            return sorted(self.rules.cards, key=lambda _: rand())
        try:
            deck = list(next(self._decks))
        except StopIteration:
            raise RecordError(f"no deck given for round {len(self.rounds)}") from None
        if sorted(deck) != list(self.rules.cards):
            raise RecordError(f"round {len(self.rounds)} deck {deck} is not a permutation "
                              f"of the ruleset's {len(self.rules.cards)} cards")
        return deck

    def _start_round(self) -> None:
        if len(self.rounds) >= self.rules.max_rounds:
            self._finish(Outcome(None, Reason.ROUND_LIMIT,
                                 f"no goal after {self.rules.max_rounds} rounds"))
            return
        deck = self._next_deck()
        size = self.rules.hand_sizes[self.position]
        self._deck = tuple(deck)
        self._hands = [sorted(deck[0 : 2 * size : 2]), sorted(deck[1 : 2 * size : 2])]
        self._pile = deck
        self._pile_pos = 2 * size
        self._discards: tuple[int, ...] = ()
        self._replace: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (None, None)
        self._duels: tuple[tuple[int, int], ...] = ()
        self._tricks: tuple[Trick, ...] = ()
        self._pending: list[tuple[int, ...] | None] = [None, None]
        self._attacker: int | None = None
        self._attack = _NO_HAND
        self._cap = size
        self.decision = _REPLACE
        arrow = self.rules.arrows[self.position]
        self.to_act = (0, 1) if arrow == BOTH else (int(arrow),)

    def _draw(self, seat: int, count: int) -> None:
        if count:
            hand = self._hands[seat]
            hand.extend(self._pile[self._pile_pos : self._pile_pos + count])
            hand.sort()
            self._pile_pos += count

    def _replace_cards(self, seat: int, cards: tuple[int, ...], rest: list[int]) -> None:
        if len(self.to_act) == 2 or self._pending[1 - seat] is not None:
            # Two arrows: both choose at once; discards and draws happen when both are in,
            # seat 0 drawing first.
            self._pending[seat] = cards
            other = self._pending[1 - seat]
            if other is None:
                self.to_act = _ONLY[1 - seat]
                return
            first, second = self._pending
            assert first is not None and second is not None
            for s, chosen in ((0, first), (1, second)):
                for card in chosen:
                    self._hands[s].remove(card)
            self._discards += first + second
            self._replace = (first, second)
            self._draw(0, len(first))
            self._draw(1, len(second))
            self._pending = [None, None]
            self._start_duel()
            return
        self._hands[seat] = rest
        self._discards += cards
        self._replace = (cards, self._replace[1]) if seat == 0 else (self._replace[0], cards)
        self._draw(seat, len(cards))
        if self._replace[1 - seat] is None:
            # One arrow: the other seat may replace at most as many.
            self._cap = len(cards)
            self.to_act = (1 - seat,)
        else:
            self._start_duel()

    def _start_duel(self) -> None:
        if len(self._hands[0]) <= 1:
            self._showdown()
            return
        self._pending = [None, None]
        self.decision = _DUEL
        self.to_act = (0, 1)

    def _resolve_duel(self) -> None:
        first, second = self._pending
        assert first is not None and second is not None
        # Clear the answers: legal_actions() would otherwise take a seat for "already answered"
        # for the rest of the round.
        self._pending = [None, None]
        c0, c1 = first[0], second[0]
        self._hands[0].remove(c0)
        self._hands[1].remove(c1)
        self._duels += ((c0, c1),)
        self._discards += (c0, c1)
        if c0 == c1:
            self._start_duel()
            return
        self._attacker = 0 if c0 > c1 else 1
        self._next_trick()

    def _next_trick(self) -> None:
        if len(self._hands[0]) > 1:
            self.decision = _ATTACK
            self.to_act = _ONLY[self._attacker]  # type: ignore[index]
        else:
            self._showdown()

    def _defend(self, seat: int, cards: tuple[int, ...], rest: list[int]) -> None:
        attacker = 1 - seat
        attack = self._attack
        self._hands[seat] = rest
        self._tricks += (_new_tuple(Trick, (attacker, attack, cards)),)
        self._discards += attack + cards
        self._attack = _NO_HAND
        if len(cards) == 1:
            defended = cards[0] >= attack[0]
        else:
            defended = all(c >= a for c, a in zip(cards, attack, strict=True))
        if defended:
            self._attacker = seat
        if len(rest) > 1:  # play goes on while both hold more than one card
            self.decision = _ATTACK
            self.to_act = _ONLY[self._attacker]  # type: ignore[index]
        else:
            self._showdown()

    def _showdown(self) -> None:
        c0, c1 = self._hands[0][0], self._hands[1][0]
        winner: int | None
        if c0 != c1:
            winner = 0 if c0 < c1 else 1
        elif self.rules.tie_rule is TieRule.ARROW and self.rules.arrows[self.position] != BOTH:
            winner = int(self.rules.arrows[self.position])
        else:
            winner = None
        self._close_round((c0, c1), winner)
        if winner is None:
            self._start_round()
            return
        self._score = (self._score[0] + 1, self._score[1]) if winner == 0 else (
            self._score[0], self._score[1] + 1)
        step = -1 if winner == 0 else 1
        covered = list(self._covered)
        covered[self.position] = True
        self._covered = tuple(covered)
        target = self.position + step
        while 0 <= target < len(covered) and covered[target]:
            target += step
        self.position = target
        if not 0 <= target < len(covered):
            self.position = LOW_GOAL if winner == 0 else HIGH_GOAL
            self._finish(Outcome(winner, Reason.GOAL))
        else:
            self._start_round()

    def _close_round(self, showdown: tuple[int, int] | None, winner: int | None) -> None:
        replace = (self._replace[0] or (), self._replace[1] or ())
        duels, tricks = self._duels, self._tricks
        space = self.position
        self.rounds.append(_new_tuple(Round, (space, self._deck, replace, duels, tricks,
                                              showdown, winner, None)))
        self._history += (_new_tuple(Round, (space, None, replace, duels, tricks, showdown,
                                             winner, None)),)
        self.decision = None

    def _cut_round(self) -> None:
        """Keep the round a forfeit interrupted, with exactly the decisions taken in it."""
        phase = self.decision
        assert phase is not None
        replace = self._replace
        taken: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (None, None)
        pending = (self._pending[0], self._pending[1])
        if phase is _REPLACE:
            # Two arrows: a seat's secret choice waits for the other's; it was still taken.
            replace = (replace[0] if replace[0] is not None else pending[0],
                       replace[1] if replace[1] is not None else pending[1])
        elif phase is _DUEL:
            taken = pending
        elif phase is _DEFEND:
            taken = (self._attack, None) if self._attacker == 0 else (None, self._attack)
        cut = _new_tuple(Cut, (phase, taken))
        space, duels, tricks = self.position, self._duels, self._tricks
        self.rounds.append(_new_tuple(Round, (space, self._deck, replace, duels, tricks, None,
                                              None, cut)))
        self._history += (_new_tuple(Round, (space, None, replace, duels, tricks, None, None,
                                             cut)),)
        self.decision = None

    def _finish(self, outcome: Outcome) -> None:
        if self.decision is not None:
            self._cut_round()
        self.outcome = outcome
        self.to_act = ()
