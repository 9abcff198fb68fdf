"""The engine's domain nouns: decisions, tricks, rounds, outcomes and what a seat observes."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Final, NamedTuple

if TYPE_CHECKING:
    from ._ruleset import Ruleset

SEATS: Final = (0, 1)
LOW_GOAL: Final = -1
"""Seat 0's goal, left of space 0."""
HIGH_GOAL: Final = 7
"""Seat 1's goal, right of space 6."""


class Decision(str, Enum):
    """What a seat is asked to decide."""

    REPLACE = "replace"
    """Cards to discard and redraw (any number up to the cap; an empty tuple keeps all)."""
    DUEL = "duel"
    """One card (a 1-tuple): the higher duel card attacks first."""
    ATTACK = "attack"
    """One card, a set or a sequence, never the whole hand."""
    DEFEND = "defend"
    """One card per attack card, in the attack's order."""


class Reason(str, Enum):
    """Why a game ended (``result.reason`` of the replay record)."""

    GOAL = "goal"
    ROUND_LIMIT = "round_limit"
    FORFEIT = "forfeit"
    ABORTED = "aborted"


class Fault(str, Enum):
    """The offence behind a forfeit."""

    TIMEOUT = "timeout"
    ILLEGAL_ACTION = "illegal_action"
    CRASH = "crash"
    DISCONNECT = "disconnect"
    PROTOCOL = "protocol"
    """Malformed or unexpected messages (garbage bytes, a message of the wrong kind)."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended. ``winner`` is a seat, or ``None`` for a draw or an aborted game."""

    winner: int | None
    reason: Reason
    detail: str = ""
    fault: Fault | None = None
    """For a forfeit: the offence."""
    offender: int | None = None
    """For a forfeit: the seat that forfeited."""
    phase: Decision | None = None
    """For a forfeit or an aborted game: the decision the game was waiting for when it ended."""


class Trick(NamedTuple):
    """One attack and its answer. ``response[j]`` answers ``attack[j]``."""

    attacker: int
    attack: tuple[int, ...]
    response: tuple[int, ...]

    @property
    def defended(self) -> bool:
        """Whether every attack card was answered by an equal or higher card."""
        return all(r >= a for r, a in zip(self.response, self.attack, strict=True))


class Cut(NamedTuple):
    """Where a forfeit (or an abort) stopped a round, and what was already decided there.

    ``taken[s]`` is what seat ``s`` had decided in the unfinished ``phase`` and was not yet
    resolved: its duel card in a duel, the attack waiting for an answer in ``DEFEND`` (at
    the attacker's index); ``None`` for a seat that had not decided. A replace phase keeps
    its decisions in :attr:`Round.replace` instead.
    """

    phase: Decision
    taken: tuple[tuple[int, ...] | None, tuple[int, ...] | None] = (None, None)


class Round(NamedTuple):
    """One round as the replay record keeps it.

    ``deck`` is ``None`` in the copies seats observe, since the shuffle is hidden.
    ``showdown`` and ``winner`` are ``None`` for a round cut short by a forfeit; ``winner``
    is also ``None`` for a tie. A cut round holds exactly the decisions taken before the
    cut: ``replace[s]`` is ``None`` for a seat that had not replaced, and ``cut`` says in
    which phase the round stopped and what was decided in it.
    """

    space: int
    deck: tuple[int, ...] | None
    replace: tuple[tuple[int, ...] | None, tuple[int, ...] | None]
    duels: tuple[tuple[int, int], ...]
    tricks: tuple[Trick, ...]
    showdown: tuple[int, int] | None
    winner: int | None
    cut: Cut | None = None

    @property
    def complete(self) -> bool:
        """Whether the round reached its showdown."""
        return self.showdown is not None


class Observation(NamedTuple):
    """Everything one seat may know when it decides, and nothing else.

    Never the opponent's hand, never the draw pile's order. Hands are sorted tuples.
    (A named tuple rather than a dataclass: one is built for every decision, and this is
    several times cheaper to build while being just as immutable.)
    """

    seat: int
    decision: Decision | None
    """What this seat is asked now (``None`` when it is not this seat's turn)."""
    ruleset: Ruleset
    round: int
    """Index of the current round, from 0."""
    position: int
    """Tacocat's space, 0..6 from seat 0's goal (-1 or 7 once it entered a goal)."""
    covered: tuple[bool, ...]
    hand: tuple[int, ...]
    opponent_cards: int
    pile_size: int
    discards: tuple[int, ...]
    """This round's face-up discards so far, in the order they were laid."""
    replaced: tuple[tuple[int, ...] | None, tuple[int, ...] | None]
    """This round's revealed replacements per seat (``None`` while not yet revealed)."""
    duels: tuple[tuple[int, int], ...]
    tricks: tuple[Trick, ...]
    attacker: int | None
    """Who attacks in the play phase (``None`` before a duel was won)."""
    attack: tuple[int, ...]
    """The attack to answer, when ``decision`` is DEFEND; otherwise empty."""
    replace_cap: int
    """The most cards this seat may replace now, when ``decision`` is REPLACE."""
    score: tuple[int, int]
    """Rounds won by each seat so far."""
    history: tuple[Round, ...]
    """Earlier rounds of this game, as public records (no decks)."""

    @property
    def opponent(self) -> int:
        return 1 - self.seat

    @property
    def goal(self) -> int:
        """This seat's goal position (-1 for seat 0, 7 for seat 1)."""
        return LOW_GOAL if self.seat == 0 else HIGH_GOAL
