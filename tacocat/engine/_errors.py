"""The engine's exceptions. One root, so a driver can catch every rules refusal at once::

    EngineError
     ├── RulesetError        a ruleset failed validation; names the field
     ├── IllegalActionError  the rules refuse an action; names the seat, the action and why
     └── RecordError         a replay record cannot be read or does not replay
"""

from __future__ import annotations

from collections.abc import Sequence


class EngineError(Exception):
    """Root of every error raised by :mod:`tacocat.engine`."""


class RulesetError(EngineError, ValueError):
    """A ruleset is invalid. ``field`` names the offending field."""

    def __init__(self, field: str, problem: str) -> None:
        self.field = field
        self.problem = problem
        super().__init__(f"ruleset field {field!r}: {problem}")


class IllegalActionError(EngineError, ValueError):
    """The rules refuse an action. The state is left exactly as it was.

    ``code`` is a short stable identifier (``not_your_turn``, ``not_in_hand``, ``bad_attack``,
    ``over_cap``, ``bad_sacrifice``, ``wrong_count``, ``empties_hand``, ``game_over``), so
    protocols can carry it; the message says what was wrong in words.
    """

    def __init__(self, seat: int, action: Sequence[int], code: str, reason: str) -> None:
        self.seat = seat
        self.action = tuple(action)
        self.code = code
        self.reason = reason
        super().__init__(f"illegal action {list(self.action)} by seat {seat}: {reason}")


class RecordError(EngineError, ValueError):
    """A replay record is malformed, or its actions do not replay under the rules."""
