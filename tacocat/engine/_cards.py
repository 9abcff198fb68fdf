"""Card combinatorics: what may be attacked with and how an attack may be answered.

Hands are sorted tuples of ranks. These functions are pure, and the enumerations are
cached because bots ask the same questions about the same hands many times.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from functools import lru_cache


class AttackKind(str, Enum):
    """The shape of an attack (RULES.md §6)."""

    SINGLE = "single"
    SET = "set"
    SEQUENCE = "sequence"


def attack_kind(cards: Sequence[int]) -> AttackKind | None:
    """The kind of attack ``cards`` form, or ``None`` when they form no legal attack shape.

    >>> attack_kind([4, 6, 5])
    <AttackKind.SEQUENCE: 'sequence'>
    >>> attack_kind([4, 5]) is None   # a sequence needs three cards
    True
    """
    n = len(cards)
    if n == 1:
        return AttackKind.SINGLE
    if n < 2:
        return None
    ordered = sorted(cards)
    if ordered[0] == ordered[-1]:
        return AttackKind.SET
    if n >= 3 and all(b == a + 1 for a, b in zip(ordered, ordered[1:], strict=False)):
        return AttackKind.SEQUENCE
    return None


@lru_cache(maxsize=1 << 16)
def legal_attacks(hand: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every distinct legal attack from a sorted ``hand``, each a sorted tuple.

    Singles, sets of 2+ equal ranks and sequences of 3+ consecutive ranks, never using the
    whole hand (an attack may not empty the attacker's hand). Singles come first, lowest
    first.
    """
    limit = len(hand) - 1
    if limit < 1:
        return ()
    ranks = sorted(set(hand))
    attacks: list[tuple[int, ...]] = [(r,) for r in ranks]
    if len(ranks) < len(hand):
        for r in ranks:
            count = min(hand.count(r), limit)
            attacks.extend((r,) * size for size in range(2, count + 1))
    # Sequences: every window of length >= 3 inside each run of consecutive ranks.
    run_start = 0
    n = len(ranks)
    for i in range(1, n + 1):
        if i == n or ranks[i] != ranks[i - 1] + 1:
            if i - run_start >= 3:
                run = ranks[run_start:i]
                for lo in range(len(run) - 2):
                    for hi in range(lo + 3, min(len(run), lo + limit) + 1):
                        attacks.append(tuple(run[lo:hi]))
            run_start = i
    return tuple(attacks)


def sacrifice_is_lowest(hand: Sequence[int], attack: Sequence[int],
                        response: Sequence[int]) -> bool:
    """Whether the sacrificed cards of ``response`` are exactly the lowest cards of ``hand``.

    ``hand`` must be sorted; a sacrifice is a response card lower than the attack card it
    answers, and the sacrificed cards taken together must be the ``s`` lowest of the hand.
    """
    sacrificed = sorted(r for r, a in zip(response, attack, strict=True) if r < a)
    return list(hand[: len(sacrificed)]) == sacrificed


def is_full_defence(attack: Sequence[int], response: Sequence[int]) -> bool:
    """Whether every attack card is answered by an equal or higher card."""
    return all(r >= a for r, a in zip(response, attack, strict=True))


def best_defence(hand: Sequence[int], attack: Sequence[int]) -> tuple[int, ...] | None:
    """A response that defends every attack card with the cheapest cards, or ``None``.

    Greedy on sorted cards: each attack card, lowest first, takes the lowest unused card that
    is at least as high. That succeeds whenever any full defence exists and spends the least.
    """
    available = sorted(hand)
    chosen: dict[int, int] = {}
    for index in sorted(range(len(attack)), key=attack.__getitem__):
        need = attack[index]
        for pos, card in enumerate(available):
            if card >= need:
                chosen[index] = available.pop(pos)
                break
        else:
            return None
    return tuple(chosen[i] for i in range(len(attack)))


def lowest_response(hand: Sequence[int], attack: Sequence[int]) -> tuple[int, ...]:
    """The always-legal answer that gives up the lowest cards.

    The lowest ``n`` cards go against the attack cards from the highest down; whatever ends
    up sacrificed is then a prefix of the hand's lowest cards, as the rules demand.
    """
    lowest = sorted(hand)[: len(attack)]
    order = sorted(range(len(attack)), key=attack.__getitem__, reverse=True)
    response = [0] * len(attack)
    for card, index in zip(lowest, order, strict=True):
        response[index] = card
    return tuple(response)


@lru_cache(maxsize=1 << 14)
def legal_defences(hand: tuple[int, ...], attack: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Every distinct legal response to ``attack`` from the sorted ``hand``.

    Responses are ordered like ``attack`` (``response[j]`` answers ``attack[j]``). Responses
    that differ only by which of two equal attack cards a card answers are listed once;
    the list is sorted.
    """
    n = len(attack)
    if n > len(hand):
        return ()
    found: dict[tuple[tuple[int, int], ...], tuple[int, ...]] = {}
    # Whatever is sacrificed must be exactly the s lowest cards, so for each s the sacrifices
    # are fixed (hand[:s]) and every other answer must defend from hand[s:]. Searching
    # position by position over those two pools avoids trying every ordering of the hand.
    for s in range(n + 1):
        sacrifice = _counts(hand[:s])
        defence = _counts(hand[s:])
        response = [0] * n

        def place(i: int, sacrifice: dict[int, int] = sacrifice,
                  defence: dict[int, int] = defence, response: list[int] = response) -> None:
            if i == n:
                if not any(sacrifice.values()):
                    key = tuple(sorted(zip(attack, response, strict=True)))
                    found.setdefault(key, tuple(response))
                return
            need = attack[i]
            for pool, sacrificing in ((sacrifice, True), (defence, False)):
                for card, count in pool.items():
                    if count and (card < need) == sacrificing:
                        pool[card] -= 1
                        response[i] = card
                        place(i + 1)
                        pool[card] += 1

        place(0)
    return tuple(sorted(found.values()))


def _counts(cards: Sequence[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for card in cards:
        counts[card] = counts.get(card, 0) + 1
    return counts


def sub_multisets(hand: tuple[int, ...], max_size: int) -> list[tuple[int, ...]]:
    """Every distinct sub-multiset of the sorted ``hand`` with at most ``max_size`` cards."""
    counts: dict[int, int] = {}
    for rank in hand:
        counts[rank] = counts.get(rank, 0) + 1
    results: list[tuple[int, ...]] = [()]
    for rank, count in sorted(counts.items()):
        results = [r + (rank,) * k for r in results for k in range(count + 1)
                   if len(r) + k <= max_size]
    return sorted(results, key=lambda r: (len(r), r))
