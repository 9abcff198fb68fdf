"""The ruleset: every number of the game that the published rules leave open (RULES.md §7)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, Literal, TypeAlias

from ._errors import RulesetError

#: An arrow on a space: the seat it points at (0 or 1), or ``"both"``.
Arrow: TypeAlias = Literal[0, 1, "both"]
BOTH: Final = "both"
TRACK_LENGTH: Final = 7
_FIELDS: Final = ("name", "deck", "hand_sizes", "arrows", "start_space", "tie_rule", "max_rounds")


class TieRule(str, Enum):
    """What a tied showdown does."""

    NO_MOVE = "no_move"
    """Tacocat stays; no tile is placed."""
    ARROW = "arrow"
    """At a one-arrow space the seat the arrow points at wins; at a two-arrow space, no move."""


@dataclass(frozen=True)
class Ruleset:
    """A validated ruleset. Build one with :meth:`standard`, :meth:`from_dict` or :meth:`load`."""

    name: str
    deck: Mapping[int, int]
    """Rank -> number of cards of that rank."""
    hand_sizes: tuple[int, ...]
    arrows: tuple[Arrow, ...]
    start_space: int
    tie_rule: TieRule
    max_rounds: int
    cards: tuple[int, ...] = field(init=False, repr=False, compare=False)
    """The full deck as a sorted tuple of ranks (derived)."""

    def __post_init__(self) -> None:
        _validate(self)
        cards = tuple(sorted(r for r, n in self.deck.items() for _ in range(n)))
        object.__setattr__(self, "cards", cards)
        object.__setattr__(self, "deck", dict(sorted(self.deck.items())))

    def __hash__(self) -> int:
        return hash((self.name, tuple(self.deck.items()), self.hand_sizes, self.arrows,
                     self.start_space, self.tie_rule, self.max_rounds))

    @classmethod
    def standard(cls) -> Ruleset:
        """The standard ruleset of RULES.md §1."""
        return STANDARD

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Ruleset:
        """Build and validate a ruleset from its JSON/TOML form (as in the replay record).

        Raises :class:`RulesetError` naming the first field that is missing, unknown or wrong.
        """
        if not isinstance(data, Mapping):
            raise RulesetError("<ruleset>", f"expected a table/object, got {type(data).__name__}")
        unknown = sorted(set(data) - set(_FIELDS))
        if unknown:
            raise RulesetError(unknown[0], f"unknown field; the fields are {', '.join(_FIELDS)}")
        for name in _FIELDS:
            if name not in data:
                raise RulesetError(name, "missing")
        tie = data["tie_rule"]
        try:
            tie_rule = TieRule(tie)
        except ValueError:
            raise RulesetError(
                "tie_rule", f"{tie!r} is not one of {[t.value for t in TieRule]}"
            ) from None
        return cls(
            name=_typed(data, "name", str),
            deck=_parse_deck(data["deck"]),
            hand_sizes=tuple(_int_list(data, "hand_sizes")),
            arrows=tuple(_parse_arrow(a, i) for i, a in enumerate(_list(data, "arrows"))),
            start_space=_typed(data, "start_space", int),
            tie_rule=tie_rule,
            max_rounds=_typed(data, "max_rounds", int),
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Ruleset:
        """Load a ruleset from a ``.toml`` or ``.json`` file."""
        path = os.fspath(path)
        try:
            with open(path, "rb") as file:
                text = file.read()
        except OSError as exc:
            raise RulesetError("<file>", f"cannot read {path!r}: {exc.strerror}") from exc
        import tomllib  # noqa: PLC0415 - a bot process never loads a file: keep its start light

        toml = path.endswith(".toml")
        try:
            data = tomllib.loads(text.decode()) if toml else json.loads(text)
        except (ValueError, UnicodeDecodeError) as exc:
            kind = "TOML" if toml else "JSON"
            raise RulesetError("<file>", f"{path!r} is not valid {kind}: {exc}") from exc
        return cls.from_dict(data)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form used in replay records (deck keys are strings)."""
        return {
            "name": self.name,
            "deck": {str(r): n for r, n in self.deck.items()},
            "hand_sizes": list(self.hand_sizes),
            "arrows": list(self.arrows),
            "start_space": self.start_space,
            "tie_rule": self.tie_rule.value,
            "max_rounds": self.max_rounds,
        }


def _typed(data: Mapping[str, Any], name: str, kind: type[Any]) -> Any:
    value = data[name]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise RulesetError(name, f"expected {kind.__name__}, got {value!r}")
    return value


def _list(data: Mapping[str, Any], name: str) -> list[Any]:
    value = data[name]
    if not isinstance(value, list | tuple):
        raise RulesetError(name, f"expected a list of {TRACK_LENGTH} entries, got {value!r}")
    return list(value)


def _int_list(data: Mapping[str, Any], name: str) -> list[int]:
    values = _list(data, name)
    for i, v in enumerate(values):
        if not isinstance(v, int) or isinstance(v, bool):
            raise RulesetError(f"{name}[{i}]", f"expected an integer, got {v!r}")
    return values


def _parse_arrow(value: Any, index: int) -> Arrow:
    if value == BOTH or (type(value) is int and value in (0, 1)):
        return value  # type: ignore[no-any-return]
    raise RulesetError(f"arrows[{index}]", f"expected 0, 1 or \"both\", got {value!r}")


def _parse_deck(value: Any) -> dict[int, int]:
    if not isinstance(value, Mapping):
        raise RulesetError("deck", f"expected a table of rank -> count, got {value!r}")
    deck: dict[int, int] = {}
    for key, count in value.items():
        if type(key) is int:
            rank = key
        elif isinstance(key, str) and key.isdigit() and key == str(int(key)):
            rank = int(key)  # JSON object keys are strings: "5", never "05" or " 5"
        else:
            raise RulesetError("deck", f"rank {key!r} is not a whole number like 5 or \"5\"")
        if rank in deck:
            raise RulesetError("deck", f"rank {rank} is listed twice")
        if not isinstance(count, int) or isinstance(count, bool):
            raise RulesetError(f"deck.{key}", f"count must be an integer, got {count!r}")
        deck[rank] = count
    return deck


def _validate(rules: Ruleset) -> None:
    if not rules.name:
        raise RulesetError("name", "must not be empty")
    if not rules.deck:
        raise RulesetError("deck", "must hold at least one rank")
    for rank, count in rules.deck.items():
        if not 1 <= rank <= 99:
            raise RulesetError("deck", f"rank {rank} is outside 1..99")
        if count < 0:
            raise RulesetError(f"deck.{rank}", f"count {count} is negative")
    total = sum(rules.deck.values())
    for name in ("hand_sizes", "arrows"):
        entries = getattr(rules, name)
        if len(entries) != TRACK_LENGTH:
            raise RulesetError(name, f"needs {TRACK_LENGTH} entries (one per space), "
                                     f"got {len(entries)}")
    for i, h in enumerate(rules.hand_sizes):
        if h < 1:
            raise RulesetError(f"hand_sizes[{i}]", f"hand size {h} must be at least 1")
        # Each seat may replace its whole hand, so the pile must hold 2h cards after the deal.
        if total - 2 * h < 2 * h:
            raise RulesetError(
                f"hand_sizes[{i}]",
                f"hand size {h} could run the draw pile out: a deck of {total} cards needs "
                f"hand sizes of at most {total // 4}",
            )
    if not 0 <= rules.start_space < TRACK_LENGTH:
        raise RulesetError("start_space", f"{rules.start_space} is not a space 0..6")
    if rules.arrows[rules.start_space] != BOTH:
        raise RulesetError("start_space", f"space {rules.start_space} has one arrow; the game "
                                          "must start on a two-arrow space")
    if rules.max_rounds < 1:
        raise RulesetError("max_rounds", f"{rules.max_rounds} must be at least 1")
    if not isinstance(rules.tie_rule, TieRule):
        raise RulesetError("tie_rule", f"{rules.tie_rule!r} is not a TieRule")


STANDARD: Final = Ruleset(
    name="standard",
    deck={**{rank: 3 for rank in range(1, 13)}, 6: 4, 7: 4},
    hand_sizes=(4, 6, 9, 7, 9, 6, 4),
    arrows=(1, 1, 1, BOTH, 0, 0, 0),
    start_space=3,
    tie_rule=TieRule.NO_MOVE,
    max_rounds=50,
)
