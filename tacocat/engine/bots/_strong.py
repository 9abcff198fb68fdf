"""``house:strong``: card counting, sampled opponent hands and an exact play-phase solver.

The showdown goes to the lower last card, and a defender who cannot cover an attack must give
up its lowest cards, so a round is a race: the attacker keeps its lowest card and strips the
defender's low cards with attacks that cannot be covered, the defender covers cheaply to take
the initiative (or sacrifices when it has low cards to spare). Once both hands are known, the
play phase is a small perfect-information game, and this bot solves it exactly:

* **Counting.** The cards this seat has not seen are the deck minus its hand, the face-up
  discards and the attack on the table. The opponent's hand is a random draw from them,
  except that it holds nothing below a card it sacrificed (sacrifices are the lowest cards).
* **Sampling.** For a duel, an attack or a defence it draws a few opponent hands consistent
  with that, solves every resulting position exactly (win, tie or loss under perfect play on
  both sides: a memoised threshold search, :mod:`tacocat.engine._solver`) and plays the
  choice with the best total over the samples. The budget shrinks with the hand: small
  hands are cheap to solve and decide the round; the first moves of a 9-card hand get a few
  samples or plain rules.
* **Replace.** Keep the lowest card, the other very low cards and the high ones; throw away
  the middle, which neither wins a showdown nor covers an attack.

Decisions are deterministic for a given seed: the bot draws from its own ``random.Random``,
reset at every game start, and the solver is exact (its caches only save time). Only the
standard ``no_move`` tie rule is modelled: under ``arrow`` a tie is treated as a tie.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from .._bot import Bot
from .._cards import best_defence, lowest_response, sacrifice_is_lowest
from .._ruleset import Ruleset
from .._solver import attack_value, attacks, realize, responses, trim_caches, value, without
from .._types import Observation
from . import _strong_play as play


def _by_size(table: tuple[int, ...], size: int) -> int:
    return table[size] if size < len(table) else 0


class StrongBot(Bot):
    """Counts cards, samples the opponent's hand and solves the play phase exactly."""

    name = "strong"

    # Search budgets, indexed by the cards in hand when deciding: how many opponent hands to
    # sample (0: no search) and, for attacks, how many of the likeliest attacks to weigh.
    # Small hands are cheap to solve and decide the round, so they get the most samples; the
    # first moves of a 9-card hand get a few or none (measured: little gain for much time).
    # Two-card hands need no search: the rules below are exact there.
    duel_samples: tuple[int, ...] = (0, 0, 0, 16, 16, 10, 10)
    attack_samples: tuple[int, ...] = (0, 0, 0, 16, 16, 10, 6, 3, 3)
    attack_options: tuple[int, ...] = (0, 0, 0, 99, 99, 99, 99, 3, 3)
    defend_samples: tuple[int, ...] = (0, 0, 0, 16, 16, 10, 10, 6, 4)
    keep_low = 6 / 38
    keep_high = 26 / 38
    """Replace keeps cards below the ``keep_low`` quantile of the deck and from the
    ``keep_high`` quantile up (standard deck: 1-2 and 9-12), and always the lowest card."""

    def __init__(self, seed: int | str | None = 0) -> None:
        # ``None``: a seed of its own, drawn once (then fixed for this bot's games).
        self.seed: int | str = random.SystemRandom().getrandbits(64) if seed is None else seed
        self.rng = random.Random(self.seed)

    def on_game_start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        # A fresh stream per game: a game's decisions depend only on the seed and the game.
        self.rng = random.Random(f"{self.seed}/{seat}")
        trim_caches()

    # ----------------------------------------------------------------- knowledge

    def _sample(self, obs: Observation, count: int) -> list[bytes]:
        return play.sample_hands(self.rng, play.unseen(obs), obs.opponent_cards, count)

    # ----------------------------------------------------------------- decisions

    def replace(self, obs: Observation) -> Sequence[int]:
        cards = obs.ruleset.cards
        low = cards[int(self.keep_low * len(cards))]
        high = cards[int(self.keep_high * len(cards))]
        middle = [c for c in obs.hand[1:] if low <= c < high]
        return middle[: obs.replace_cap]

    def duel(self, obs: Observation) -> int:
        hand = obs.hand
        n = len(hand)
        middle = hand[n // 2]
        count = _by_size(self.duel_samples, n)
        if not count or len(set(hand)) == 1:
            return middle
        rng = self.rng
        duels: list[tuple[int, bytes]] = []
        for theirs in self._sample(obs, count):
            # Unknown opponent: half the time the middle card, else any card.
            if rng.random() < 0.5:
                card = theirs[len(theirs) // 2]
            else:
                card = theirs[int(rng.random() * len(theirs))]
            duels.append((card, without(theirs, bytes((card,)))))
        mine = bytes(hand)
        best, best_total = middle, -(1 << 30)
        # Ties go to the card nearest the middle of the hand.
        for card in sorted(set(hand), key=lambda c: abs(hand.index(c) - n // 2)):
            rest = without(mine, bytes((card,)))
            total = 0
            for i, (other, left) in enumerate(duels):
                if total + count - i <= best_total:
                    break  # cannot beat the best so far
                if card > other:
                    total += value(rest, left)
                elif card < other:
                    total -= value(left, rest)
            if total > best_total:
                best, best_total = card, total
        return best

    def attack(self, obs: Observation) -> Sequence[int]:
        hand = obs.hand
        options = attacks(bytes(hand))
        count = _by_size(self.attack_samples, len(hand))
        if len(options) == 1 or not count:
            return tuple(options[0][0])
        samples = self._sample(obs, count)
        best, best_total = options[0][0], -(1 << 30)
        # Likeliest first, so ties go to the attack greedy would choose.
        for attack, rest in options[: _by_size(self.attack_options, len(hand))]:
            total = 0
            for i, theirs in enumerate(samples):
                if total + count - i <= best_total:
                    break
                total += attack_value(rest, theirs, attack)
            if total > best_total:
                best, best_total = attack, total
        return tuple(best)

    def defend(self, obs: Observation) -> Sequence[int]:
        hand, attack = obs.hand, obs.attack
        fallback = (best_defence(hand[1:], attack) or best_defence(hand, attack)
                    or lowest_response(hand, attack))
        count = _by_size(self.defend_samples, len(hand))
        if not count:
            return fallback
        options = responses(bytes(hand), bytes(attack))
        if len(options) <= 1:
            return fallback
        # Ties go to covering without the lowest card, then to giving up low cards.
        low = hand[0]
        options = sorted(options, key=lambda o: (not o[1], low not in o[0]))
        samples = self._sample(obs, count)
        best = options[0]
        best_total = -(1 << 30)
        for left, full in options:
            total = 0
            for i, theirs in enumerate(samples):
                if total + count - i <= best_total:
                    break
                total += value(left, theirs) if full else -value(theirs, left)
            if total > best_total:
                best, best_total = (left, full), total
        response = realize(hand, attack, *best)
        if response is None or not sacrifice_is_lowest(hand, attack, response):
            return fallback
        return response
