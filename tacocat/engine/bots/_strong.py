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
  both sides: a memoised threshold search) and plays the choice with the best total over the
  samples. The budget shrinks with the hand: small hands are cheap to solve and decide the
  round; the first moves of a 9-card hand get a few samples or plain rules.
* **Replace.** Keep the lowest card, the other very low cards and the high ones; throw away
  the middle, which neither wins a showdown nor covers an attack.

Decisions are deterministic for a given seed: the bot draws from its own ``random.Random``,
reset at every game start, and the solver is exact (its caches only save time). Only the
standard ``no_move`` tie rule is modelled: under ``arrow`` a tie is treated as a tie.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from typing import Any

from .._bot import Bot
from .._cards import best_defence, legal_attacks, lowest_response, sacrifice_is_lowest
from .._ruleset import Ruleset
from .._types import Observation

# --------------------------------------------------------------------------- exact solver
#
# A position is (attacker's hand, defender's hand), equal sizes, attacker to move. Hands are
# ``bytes`` of sorted ranks (ranks are 1..99): immutable, hashable, cheap to slice and to use
# as dictionary keys. ``_at_least(a, d, 1)`` says whether the attacker wins with perfect play
# on both sides, ``_at_least(a, d, 0)`` whether it at least ties.

_SEP = b"\xff"
_LIMITS = {"positions": 200_000, "attacks": 10_000, "picks": 5_000, "drops": 10_000}
"""Entries before a cache is emptied (checked between games): about 40 MB in all."""

_bounds: dict[bytes, int] = {}
"""Position -> what is known of its value: code ``3 * lowest + highest + 4``."""
_LOW = (-1, -1, -1, 0, 0, 0, 1, 1, 1)
_HIGH = (-1, 0, 1, -1, 0, 1, -1, 0, 1)
_attack_cache: dict[bytes, list[tuple[bytes, bytes]]] = {}
_drops: dict[bytes, list[tuple[int, bytes]]] = {}
_pick_cache: dict[bytes, list[tuple[bytes, bytes]]] = {}


def _trim_caches() -> None:
    caches: dict[str, dict[bytes, Any]] = {
        "positions": _bounds, "attacks": _attack_cache, "picks": _pick_cache, "drops": _drops}
    for name, cache in caches.items():
        if len(cache) > _LIMITS[name]:
            cache.clear()


def _without(hand: bytes, cards: bytes) -> bytes:
    for card in cards:
        hand = hand.replace(bytes((card,)), b"", 1)
    return hand


def _make_drops(hand: bytes) -> list[tuple[int, bytes]]:
    """Each distinct card of ``hand`` with the hand left without it; a lone lowest card last."""
    found: list[tuple[int, bytes]] = []
    prev = -1
    for i, card in enumerate(hand):
        if card != prev:
            prev = card
            found.append((card, hand[:i] + hand[i + 1:]))
    if len(hand) > 1 and hand[0] != hand[1]:
        found.append(found.pop(0))
    _drops[hand] = found
    return found


def _attacks(hand: bytes) -> list[tuple[bytes, bytes]]:
    """Every legal attack from ``hand`` with the hand it leaves, likeliest winners first."""
    found = _attack_cache.get(hand)
    if found is not None:
        return found
    scored: list[tuple[int, bytes]] = []
    keep = hand[0]
    spare_low = hand.count(keep) > 1
    for attack in legal_attacks(tuple(hand)):
        cards = bytes(attack)
        # Like greedy: high floors and many cards are hard to cover; giving up the last copy
        # of the lowest card is rarely right, so those come last.
        score = attack[0] + 2 * (len(attack) - 1)
        if keep in cards and not spare_low:
            score -= 100
        scored.append((score, cards))
    scored.sort(key=lambda item: -item[0])
    found = [(cards, _without(hand, cards)) for _, cards in scored]
    _attack_cache[hand] = found
    return found


def _picks(hand: bytes, k: int) -> list[tuple[bytes, bytes]]:
    """Every distinct choice of ``k`` cards from ``hand``: (cards, hand left), sorted."""
    key = hand + _SEP + bytes((k,))
    found = _pick_cache.get(key)
    if found is not None:
        return found
    picks: list[bytes] = [b""]
    for rank in sorted(set(hand)):
        count = hand.count(rank)
        picks = [p + bytes((rank,)) * j for p in picks for j in range(count + 1)
                 if len(p) + j <= k]
    found = [(used, _without(hand, used)) for used in picks if len(used) == k]
    _pick_cache[key] = found
    return found


def _sacrifice_count(hand: bytes | Sequence[int], used: bytes | Sequence[int],
                     need: Sequence[int]) -> int:
    """How many cards ``used`` (sorted) can sacrifice answering the sorted attack ``need``,
    the other cards defending: the smallest such count >= 1, or 0 when there is none.

    The sacrificed cards must be the ``s`` lowest of ``hand``; they go under the ``s`` highest
    attack cards, and the rest of ``used`` covers the lower ones (both matchings sorted).
    """
    k = len(need)
    for s in range(1, k + 1):
        if used[s - 1] != hand[s - 1]:
            return 0
        if all(c < a for c, a in zip(used[:s], need[k - s:], strict=True)) and all(
                c >= a for c, a in zip(used[s:], need[: k - s], strict=True)):
            return s
    return 0


def _multi_responses(hand: bytes, attack: bytes) -> list[tuple[bytes, bool]]:
    """Every distinct outcome of answering a jumbo ``attack``: (hand left, fully defended)."""
    need = sorted(attack)
    found: list[tuple[bytes, bool]] = []
    for used, left in _picks(hand, len(attack)):
        if all(c >= a for c, a in zip(used, need, strict=True)):
            found.append((left, True))
        if _sacrifice_count(hand, used, need):
            found.append((left, False))
    return found


def _at_least(att: bytes, dfn: bytes, t: int) -> bool:
    """Whether the attacker's result is at least ``t`` (1 = win, 0 = tie) with perfect play."""
    n = len(att)
    if n <= 2:
        # With two cards, attacking with the higher one is best; the defender keeps its lower
        # card if it can cover that attack, else it must sacrifice it.
        theirs = dfn[1] if n == 2 and dfn[1] < att[1] else dfn[0]
        return att[0] < theirs if t else att[0] <= theirs
    key = att + _SEP + dfn
    known = _bounds.get(key, 2)  # 2 = (lowest, highest) = (-1, 1): nothing known
    if _LOW[known] >= t:
        return True
    if _HIGH[known] < t:
        return False
    other = 1 - t
    result = False
    low = dfn[0]
    drops = None
    for attack, rest in _attacks(att):
        if len(attack) == 1:
            card = attack[0]
            if drops is None:
                drops = _drops.get(dfn)
                if drops is None:
                    drops = _make_drops(dfn)
            for cover, left in drops:
                if cover >= card and _at_least(left, rest, other):
                    break
            else:
                # Sacrificing the lowest card keeps the attacker attacking.
                if low < card and not _at_least(rest, dfn[1:], t):
                    continue
                result = True
                break
            continue
        # A jumbo attack: try every choice of answering cards, fully defended or not.
        k = len(attack)
        need = sorted(attack)
        refuted = False
        for used, left in _picks(dfn, k):
            if all(c >= a for c, a in zip(used, need, strict=True)) and _at_least(
                    left, rest, other):
                refuted = True
                break
            if used[0] != low:
                continue
            s = _sacrifice_count(dfn, used, need)
            if s and not _at_least(rest, left, t):
                refuted = True
                break
        if not refuted:
            result = True
            break
    low, high = _LOW[known], _HIGH[known]
    if result:
        low = t
    else:
        high = t - 1
    _bounds[key] = 3 * low + high + 4
    return result


def _value(att: bytes, dfn: bytes) -> int:
    """The attacker's result with perfect play: 1 win, 0 tie, -1 loss."""
    if _at_least(att, dfn, 1):
        return 1
    return 0 if _at_least(att, dfn, 0) else -1


def _single_responses(hand: bytes, card: int) -> list[tuple[bytes, bool]]:
    found: list[tuple[bytes, bool]] = []
    prev = -1
    for i in range(bisect_left(hand, card), len(hand)):
        if hand[i] != prev:
            prev = hand[i]
            found.append((hand[:i] + hand[i + 1:], True))
    if hand[0] < card:
        found.append((hand[1:], False))
    return found


def _responses(hand: bytes, attack: bytes) -> list[tuple[bytes, bool]]:
    if len(attack) == 1:
        return _single_responses(hand, attack[0])
    return _multi_responses(hand, attack)


def _attack_value(att_rest: bytes, dfn: bytes, attack: bytes) -> int:
    """The attacker's result after laying ``attack``, against the defender's best answer."""
    answers = _responses(dfn, attack)
    for t in (0, 1):
        for left, full in answers:
            if not _at_least(left, att_rest, 1 - t) if full else _at_least(att_rest, left, t):
                continue
            return t - 1
    return 1


def _realize(hand: Sequence[int], attack: Sequence[int], left: bytes,
             full: bool) -> tuple[int, ...] | None:
    """A response ordered like ``attack`` that plays ``hand`` minus ``left``."""
    used = sorted(_without(bytes(hand), left))
    k = len(attack)
    order = sorted(range(k), key=attack.__getitem__)
    response = [0] * k
    if full:
        for index, card in zip(order, used, strict=True):
            response[index] = card
        return tuple(response)
    s = _sacrifice_count(hand, used, sorted(attack))
    if not s:
        return None
    # The s lowest cards under the s highest attack cards, the others covering the rest.
    for index, card in zip(order[k - s:] + order[: k - s], used, strict=True):
        response[index] = card
    return tuple(response)


# --------------------------------------------------------------------------- the bot


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
        _trim_caches()

    # ----------------------------------------------------------------- knowledge

    def _unseen(self, obs: Observation) -> list[int]:
        counts: dict[int, int] = {}
        for card in obs.ruleset.cards:
            counts[card] = counts.get(card, 0) + 1
        for seen in (obs.hand, obs.discards, obs.attack):
            for card in seen:
                counts[card] -= 1
        # Nothing the opponent holds is below a card it sacrificed.
        floor = 0
        for trick in obs.tricks:
            if trick.attacker == obs.seat:
                for r, a in zip(trick.response, trick.attack, strict=True):
                    if floor < r < a:
                        floor = r
        pool = [card for card, n in counts.items() if card >= floor for _ in range(n)]
        if len(pool) < obs.opponent_cards:  # cannot happen with a consistent history
            pool = [card for card, n in counts.items() for _ in range(n)]
        return pool

    def _sample(self, obs: Observation, count: int) -> list[bytes]:
        pool = self._unseen(obs)
        size = obs.opponent_cards
        sample = self.rng.sample
        return [bytes(sorted(sample(pool, size))) for _ in range(count)]

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
            duels.append((card, _without(theirs, bytes((card,)))))
        mine = bytes(hand)
        best, best_total = middle, -(1 << 30)
        # Ties go to the card nearest the middle of the hand.
        for card in sorted(set(hand), key=lambda c: abs(hand.index(c) - n // 2)):
            rest = _without(mine, bytes((card,)))
            total = 0
            for i, (other, left) in enumerate(duels):
                if total + count - i <= best_total:
                    break  # cannot beat the best so far
                if card > other:
                    total += _value(rest, left)
                elif card < other:
                    total -= _value(left, rest)
            if total > best_total:
                best, best_total = card, total
        return best

    def attack(self, obs: Observation) -> Sequence[int]:
        hand = obs.hand
        options = _attacks(bytes(hand))
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
                total += _attack_value(rest, theirs, attack)
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
        options = _responses(bytes(hand), bytes(attack))
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
                total += _value(left, theirs) if full else -_value(theirs, left)
            if total > best_total:
                best, best_total = (left, full), total
        response = _realize(hand, attack, *best)
        if response is None or not sacrifice_is_lowest(hand, attack, response):
            return fallback
        return response
