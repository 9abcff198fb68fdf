"""The exact play-phase solver of ``house:strong`` (:mod:`tacocat.engine.bots._strong`).

A position is (attacker's hand, defender's hand), equal sizes, attacker to move. Hands are
``bytes`` of sorted ranks (ranks are 1..99): immutable, hashable, cheap to slice and to use
as dictionary keys; a position's key is the two hands end to end (equal sizes: unambiguous).
``at_least(a, d, 1)`` says whether the attacker wins with perfect play on both sides,
``at_least(a, d, 0)`` whether it at least ties.

Pure functions over hands, compiled with mypyc next to ``_state.py`` when a build exists
(``_compiled.py``); written for it: typed locals, plain loops rather than generators, no
closures. The caches only save time: every answer is exact, so the bot plays the same games
whatever they hold.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from typing import Final

from ._cards import legal_attacks

_BYTE: Final = [bytes((i,)) for i in range(256)]
"""``bytes((i,))`` without building the tuple each time (a tuple is a garbage-collected
object: making millions of them costs more in collections than in allocation)."""
LIMITS: Final = {"positions": 200_000, "attacks": 10_000, "picks": 5_000, "drops": 10_000}
"""Entries before a cache is emptied (checked between games): about 40 MB in all."""

# Final: mypyc keeps them in C statics instead of looking them up in the module's dict.
_bounds: Final[dict[bytes, int]] = {}
"""Position -> what is known of its value (lowest and highest possible result, each -1..1):
code ``3 * lowest + highest + 4``; 2 = (-1, 1) = nothing known."""
# Tuples, not lists, as the entries: once the collector has seen a tuple of bytes and ints
# it stops tracking it, where every list would be walked by every full collection (tens of
# thousands of them in a long run: the run slowed as its caches grew).
_attack_cache: Final[dict[bytes, tuple[tuple[bytes, bytes], ...]]] = {}
_drops: Final[dict[bytes, tuple[tuple[int, bytes], ...]]] = {}
_pick_cache: Final[dict[bytes, tuple[tuple[bytes, bytes], ...]]] = {}


def trim_caches() -> None:
    """Empty the caches that outgrew their limit (between games: they only save time)."""
    if len(_bounds) > LIMITS["positions"]:
        _bounds.clear()
    if len(_attack_cache) > LIMITS["attacks"]:
        _attack_cache.clear()
    if len(_pick_cache) > LIMITS["picks"]:
        _pick_cache.clear()
    if len(_drops) > LIMITS["drops"]:
        _drops.clear()


def without(hand: bytes, cards: bytes) -> bytes:
    """The sorted ``hand`` less one copy of each of the sorted ``cards`` (those it holds)."""
    # One merge pass: far cheaper than a bytes.replace call per card.
    kept: list[int] = []
    j = 0
    m = len(cards)
    for i in range(len(hand)):
        card = hand[i]
        while j < m and cards[j] < card:
            j += 1
        if j < m and cards[j] == card:
            j += 1
        else:
            kept.append(card)
    return bytes(kept)


def _make_drops(hand: bytes) -> tuple[tuple[int, bytes], ...]:
    """Each distinct card of ``hand`` with the hand left without it; a lone lowest card last."""
    found: list[tuple[int, bytes]] = []
    prev = -1
    for i in range(len(hand)):
        card = hand[i]
        if card != prev:
            prev = card
            found.append((card, hand[:i] + hand[i + 1:]))
    if len(hand) > 1 and hand[0] != hand[1]:
        found.append(found.pop(0))
    entry = tuple(found)
    _drops[hand] = entry
    return entry


def attacks(hand: bytes) -> tuple[tuple[bytes, bytes], ...]:
    """Every legal attack from ``hand`` with the hand it leaves, likeliest winners first."""
    found = _attack_cache.get(hand)
    if found is not None:
        return found
    scored: list[tuple[int, int, bytes]] = []
    keep = hand[0]
    spare_low = hand.count(keep) > 1
    # The engine's legal_attacks on the hand's shape: its ranks renumbered 1, 2, ... keeping
    # which are consecutive (all a legal attack depends on), so that hands of one shape share
    # one entry of its cache; then back to this hand's ranks.
    ranks = sorted(set(hand))
    label_of: dict[int, int] = {}
    rank_of: list[int] = [0]
    label = 0
    for i in range(len(ranks)):
        gap = i > 0 and ranks[i] != ranks[i - 1] + 1
        label += 2 if gap else 1
        while len(rank_of) < label:
            rank_of.append(0)
        rank_of.append(ranks[i])
        label_of[ranks[i]] = label
    shape = tuple([label_of[card] for card in hand])
    for labels in legal_attacks(shape):
        cards = bytes([rank_of[x] for x in labels])
        # Like greedy: high floors and many cards are hard to cover; giving up the last copy
        # of the lowest card is rarely right, so those come last.
        score = cards[0] + 2 * (len(cards) - 1)
        if keep in cards and not spare_low:
            score -= 100
        # The position breaks ties: equal scores keep legal_attacks' order.
        scored.append((-score, len(scored), cards))
    scored.sort()
    found = tuple([(cards, without(hand, cards)) for _, _, cards in scored])
    _attack_cache[hand] = found
    return found


def _picks(hand: bytes, k: int) -> tuple[tuple[bytes, bytes], ...]:
    """Every distinct choice of ``k`` cards from ``hand``: (cards, hand left), sorted."""
    key = hand + _BYTE[k]  # unambiguous: the hand's length is the key's length less one
    found = _pick_cache.get(key)
    if found is not None:
        return found
    picks: list[bytes] = [b""]
    for rank in sorted(set(hand)):
        count = hand.count(rank)
        grown: list[bytes] = []
        for p in picks:
            for j in range(count + 1):
                if len(p) + j <= k:
                    grown.append(p + _BYTE[rank] * j)
        picks = grown
    found = tuple([(used, without(hand, used)) for used in picks if len(used) == k])
    _pick_cache[key] = found
    return found


def _covers(used: bytes, need: bytes, start: int, stop: int, shift: int) -> bool:
    """Whether ``used[i] >= need[i - shift]`` for every ``i`` in ``start..stop``."""
    for i in range(start, stop):  # noqa: SIM110 - a plain loop compiles to plain C
        if used[i] < need[i - shift]:
            return False
    return True


def sacrifice_count(hand: bytes, used: bytes, need: bytes) -> int:
    """How many cards ``used`` (sorted) can sacrifice answering the sorted attack ``need``,
    the other cards defending: the smallest such count >= 1, or 0 when there is none.

    The sacrificed cards must be the ``s`` lowest of ``hand``; they go under the ``s`` highest
    attack cards, and the rest of ``used`` covers the lower ones (both matchings sorted).
    """
    k = len(need)
    for s in range(1, k + 1):
        if used[s - 1] != hand[s - 1]:
            return 0
        under = True
        for i in range(s):
            if used[i] >= need[k - s + i]:
                under = False
                break
        if under and _covers(used, need, s, k, s):
            return s
    return 0


def _multi_responses(hand: bytes, attack: bytes) -> list[tuple[bytes, bool]]:
    """Every distinct outcome of answering a jumbo ``attack``: (hand left, fully defended)."""
    need = bytes(sorted(attack))
    k = len(need)
    found: list[tuple[bytes, bool]] = []
    for used, left in _picks(hand, k):
        if _covers(used, need, 0, k, 0):
            found.append((left, True))
        if sacrifice_count(hand, used, need):
            found.append((left, False))
    return found


def at_least(att: bytes, dfn: bytes, t: int) -> bool:
    """Whether the attacker's result is at least ``t`` (1 = win, 0 = tie) with perfect play."""
    n = len(att)
    if n <= 2:
        # With two cards, attacking with the higher one is best; the defender keeps its lower
        # card if it can cover that attack, else it must sacrifice it.
        theirs = dfn[1] if n == 2 and dfn[1] < att[1] else dfn[0]
        return att[0] < theirs if t else att[0] <= theirs
    # Three-card positions are most of the search and cheap to solve again: a table entry
    # for each cost more (a key built, a lookup in a table too big for the cache, an insert).
    memo = n > 3
    key = att + dfn if memo else b""
    known = _bounds.get(key, 2) if memo else 2
    low = known // 3 - 1
    high = known % 3 - 1
    if low >= t:
        return True
    if high < t:
        return False
    other = 1 - t
    result = False
    lowest = dfn[0]
    drops: tuple[tuple[int, bytes], ...] | None = None
    sacrificed = b""  # dfn without its lowest card, from drops (a cached object)
    for attack, rest in attacks(att):
        k = len(attack)
        if k == 1:
            card = attack[0]
            if drops is None:
                drops = _drops.get(dfn)
                if drops is None:
                    drops = _make_drops(dfn)
                first = drops[0]
                sacrificed = first[1] if first[0] == lowest else drops[-1][1]
            refuted = False
            for cover, left in drops:
                if cover >= card and at_least(left, rest, other):
                    refuted = True
                    break
            # Sacrificing the lowest card keeps the attacker attacking.
            if not refuted and lowest < card and not at_least(rest, sacrificed, t):
                refuted = True
        else:
            # A jumbo attack: try every choice of answering cards, fully defended or not.
            # Attacks are sorted, so ``attack`` is its own sorted form.
            refuted = False
            for used, left in _picks(dfn, k):
                if _covers(used, attack, 0, k, 0) and at_least(left, rest, other):
                    refuted = True
                    break
                if used[0] == lowest and sacrifice_count(dfn, used, attack) and \
                        not at_least(rest, left, t):
                    refuted = True
                    break
        if not refuted:
            result = True
            break
    if memo:
        if result:
            low = t
        else:
            high = t - 1
        _bounds[key] = 3 * low + high + 4
    return result


def value(att: bytes, dfn: bytes) -> int:
    """The attacker's result with perfect play: 1 win, 0 tie, -1 loss."""
    if at_least(att, dfn, 1):
        return 1
    return 0 if at_least(att, dfn, 0) else -1


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


def responses(hand: bytes, attack: bytes) -> list[tuple[bytes, bool]]:
    """Every distinct outcome of answering ``attack`` from ``hand``: (hand left, fully
    defended), in a fixed order (the bot breaks ties by it)."""
    if len(attack) == 1:
        return _single_responses(hand, attack[0])
    return _multi_responses(hand, attack)


def attack_value(att_rest: bytes, dfn: bytes, attack: bytes) -> int:
    """The attacker's result after laying ``attack``, against the defender's best answer."""
    answers = responses(dfn, attack)
    for t in (0, 1):
        for left, full in answers:
            if not at_least(left, att_rest, 1 - t) if full else at_least(att_rest, left, t):
                continue
            return t - 1
    return 1


def realize(hand: Sequence[int], attack: Sequence[int], left: bytes,
            full: bool) -> tuple[int, ...] | None:
    """A response ordered like ``attack`` that plays ``hand`` minus ``left``."""
    used = bytes(sorted(without(bytes(hand), left)))
    k = len(attack)
    order = sorted(range(k), key=attack.__getitem__)
    response = [0] * k
    if full:
        for index, card in zip(order, used, strict=True):
            response[index] = card
        return tuple(response)
    s = sacrifice_count(bytes(hand), used, bytes(sorted(attack)))
    if not s:
        return None
    # The s lowest cards under the s highest attack cards, the others covering the rest.
    for index, card in zip(order[k - s:] + order[: k - s], used, strict=True):
        response[index] = card
    return tuple(response)
