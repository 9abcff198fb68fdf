"""The rules of *Tacocat Spelled Backwards*: standard library only.

A passive state machine (:class:`GameState`) that says who must decide what and applies
validated actions; per-seat :class:`Observation` objects that never leak hidden cards; the
replay record (:class:`GameRecord`); the :class:`Bot` interface and the house bots;
:class:`Table`, what a referee adds to one game; and :func:`duplicate_pairs`, the one
schedule of a match. The match loop itself is :mod:`tacocat.referee`'s.

Exceptions (all derive from :class:`EngineError`)::

    EngineError
     ├── RulesetError        a ruleset failed validation; names the field
     ├── IllegalActionError  the rules refuse an action; names the seat, the action and why
     └── RecordError         a replay record cannot be read or does not replay
"""

from . import _compiled

ENGINE_FORM = _compiled.select()  # first: it decides which _state the imports below get
"""How the rules run in this process: ``"compiled (mypyc)"`` or ``"pure Python (why)"``."""

from ._bot import DEFAULT_TIME_LIMIT, Bot, bot_factory, describe_exception
from ._cards import (
    AttackKind,
    attack_kind,
    best_defence,
    is_full_defence,
    legal_attacks,
    legal_defences,
    lowest_response,
    sacrifice_is_lowest,
    sub_multisets,
)
from ._driver import BotDriver
from ._errors import EngineError, IllegalActionError, RecordError, RulesetError
from ._record import FORMAT, GameRecord, read_jsonl, write_jsonl
from ._ruleset import BOTH, STANDARD, TRACK_LENGTH, Arrow, Ruleset, TieRule
from ._state import GameState
from ._table import MatchGame, ScheduledGame, Table, duplicate_pairs
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
from .bots import HOUSE_BOTS, house_bot

__all__ = [
    "BOTH", "DEFAULT_TIME_LIMIT", "ENGINE_FORM",
    "FORMAT", "HIGH_GOAL", "HOUSE_BOTS", "LOW_GOAL", "STANDARD",
    "TRACK_LENGTH",
    "Arrow", "AttackKind", "Bot", "BotDriver", "Cut", "Decision", "EngineError", "Fault",
    "GameRecord", "GameState", "IllegalActionError", "MatchGame", "Observation", "Outcome",
    "Reason",
    "RecordError", "Round", "Ruleset", "RulesetError", "ScheduledGame", "Table", "TieRule",
    "Trick", "attack_kind", "best_defence", "bot_factory", "describe_exception",
    "duplicate_pairs", "house_bot", "is_full_defence", "legal_attacks", "legal_defences",
    "lowest_response", "read_jsonl", "sacrifice_is_lowest", "sub_multisets", "write_jsonl",
]
