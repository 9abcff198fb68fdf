"""The independent checker's half that reads rulesets (RULES.md §7): the standard ruleset,
validation with one problem per broken field, and the small helpers both halves use.

Written from RULES.md alone, like ``tests/independent_checker.py``: it imports nothing from
the ``tacocat`` package.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, TypeGuard

N_SPACES = 7
RANKS = range(1, 13)
BOTH = "both"
TIE_RULES = ("no_move", "arrow")
REASONS = ("goal", "round_limit", "forfeit", "aborted")
STANDARD: dict[str, Any] = {
    "deck": {str(rank): 4 if rank in (6, 7) else 3 for rank in RANKS},
    "hand_sizes": [4, 6, 9, 7, 9, 6, 4],
    "arrows": [1, 1, 1, BOTH, 0, 0, 0],
    "start_space": 3,
    "tie_rule": "no_move",
    "max_rounds": 50,
}


def is_int(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def is_rank_list(value: object) -> TypeGuard[list[int]]:
    return isinstance(value, list) and all(is_int(card) for card in value)


def cards_of(hand: Counter[int]) -> list[int]:
    return sorted(hand.elements())


@dataclass(frozen=True)
class Ruleset:
    """A validated ruleset (RULES.md §7)."""

    deck: Counter[int]
    hand_sizes: tuple[int, ...]
    arrows: tuple[int | str, ...]
    start_space: int
    tie_rule: str
    max_rounds: int

    def arrow_seat(self, space: int) -> int | None:
        """The seat a single arrow points at, or None on a two-arrow space."""
        arrow = self.arrows[space]
        return None if arrow == BOTH else int(arrow)


def _parse_rank(key: object) -> int | None:
    if is_int(key):
        return key
    if isinstance(key, str) and key.isdecimal() and str(int(key)) == key:
        return int(key)
    return None


def check_ruleset(raw: object) -> tuple[Ruleset | None, list[str]]:
    """Validate a ruleset block; return it parsed (None if invalid) and its problems."""
    if not isinstance(raw, dict):
        return None, [f"ruleset: missing or not an object: {raw!r}"]
    problems: list[str] = []

    def bad(name: str, message: str) -> None:
        problems.append(f"ruleset.{name}: {message}")

    deck: Counter[int] = Counter()
    raw_deck = raw.get("deck")
    if not isinstance(raw_deck, dict) or not raw_deck:
        bad("deck", f"must be a non-empty object rank -> count, got {raw_deck!r}")
    else:
        for key, count in raw_deck.items():
            rank = _parse_rank(key)
            if rank is None or rank not in RANKS:
                bad("deck", f"unknown rank {key!r} (ranks are 1..12)")
            elif not is_int(count) or count < 1:
                bad("deck", f"count of rank {key!r} must be a positive integer, got {count!r}")
            elif rank in deck:
                bad("deck", f"rank {rank} is listed twice")
            else:
                deck[rank] = count
    hands = raw.get("hand_sizes")
    if not (
        isinstance(hands, list)
        and len(hands) == N_SPACES
        and all(is_int(h) and h >= 1 for h in hands)
    ):
        bad("hand_sizes", f"must be {N_SPACES} positive integers, got {hands!r}")
        hands = None
    arrows = raw.get("arrows")
    if not (
        isinstance(arrows, list)
        and len(arrows) == N_SPACES
        and all(a == BOTH or (is_int(a) and a in (0, 1)) for a in arrows)
    ):
        bad("arrows", f"must be {N_SPACES} entries, each 0, 1 or {BOTH!r}, got {arrows!r}")
        arrows = None
    start = raw.get("start_space")
    if not (is_int(start) and 0 <= start < N_SPACES):
        bad("start_space", f"must be a space index 0..{N_SPACES - 1}, got {start!r}")
    elif arrows is not None and arrows[start] != BOTH:
        bad("start_space", f"space {start} has a single arrow; the first round needs two")
    tie_rule = raw.get("tie_rule")
    if tie_rule not in TIE_RULES:
        bad("tie_rule", f"must be one of {TIE_RULES}, got {tie_rule!r}")
    max_rounds = raw.get("max_rounds")
    if not (is_int(max_rounds) and max_rounds >= 1):
        bad("max_rounds", f"must be a positive integer, got {max_rounds!r}")
    if deck and hands is not None:
        total = deck.total()
        for space, h in enumerate(hands):
            if total - 2 * h < 2 * h:
                bad(
                    "hand_sizes",
                    f"hand size {h} on space {space} could run the draw pile out "
                    f"(deck of {total} cards, needs at least {4 * h})",
                )
    name = raw.get("name")
    if name is not None and not isinstance(name, str):
        bad("name", f"must be a string, got {name!r}")
    if name == "standard":
        for key, value in STANDARD.items():
            same = (
                Counter({int(r): c for r, c in value.items()}) == deck
                if key == "deck"
                else raw.get(key) == value
            )
            if not same:
                bad(key, f"the 'standard' ruleset has {value!r}, got {raw.get(key)!r}")
    if problems or hands is None or arrows is None or not is_int(start):
        return None, problems
    if not is_int(max_rounds):
        return None, problems
    return Ruleset(deck, tuple(hands), tuple(arrows), start, str(tie_rule), max_rounds), []
