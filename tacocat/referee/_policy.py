"""The one fault policy: what a bot's fault costs, when it is restarted, when it gives up.

Every referee (local play, the workers' sandboxed matches, smoke tests, the live referee)
plays by this table; :func:`~tacocat.referee.referee_match` applies it.

=====================================  ==================  ===============================
what the bot does                      its games           the bot (process / stream)
=====================================  ==================  ===============================
illegal action (the rules refuse it)   that game forfeits  plays on
raises (its exception is reported)     that game forfeits  plays on
decision over its time limit           that game forfeits  plays on; a *strike*
  (the host's own-time clock, or the
  in-process seat's)
no answer for 5 limits (the backstop)  the game it was     killed, restarted for the next
                                       deciding forfeits;  games; a *strike*
                                       the others are
                                       played again
process exits, is killed, garbles      the same            restarted for the next games;
  its output, fails to start                               a *strike*
live client disconnects                every game in       the match ends
                                       flight forfeits
=====================================  ==================  ===============================

A strike is a costly fault: it costs time (a decision limit, a process start). A side whose
strikes reach ``max_strikes`` **in a row** (no game finished without a fault of its own
between them; several games lost in one lockstep step are one strike) **gives up**: its
games in flight forfeit, and every later game is recorded as its forfeit at once, without
asking it again, or, for a live client (``end_match_on_give_up``), the match ends. While a
side has a strike, the match plays one game at a time, so a sleeping bot costs 15
decision limits in all: 5 for each of three games (the backstop waits 5 limits for an
answer, whatever the batch's size). Games played again because a process was lost in them
without being at fault (:func:`~tacocat.referee.referee_match`) keep the records the same
for every batch size. A game in which both
sides are out is aborted (kept, not rated). The same rule, three strikes in a row, holds
for sandboxed bots, local play and live clients.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from tacocat.engine import Fault

from ._feed import Failure

DEFAULT_MAX_STRIKES: Final = 3


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """How many costly faults in a row a side may have, and what giving up means."""

    max_strikes: int = DEFAULT_MAX_STRIKES
    """Strikes in a row that make a side give up (1: the first one; a smoke test's)."""
    end_match_on_give_up: bool = False
    """Live play: stop the match instead of recording the remaining games as forfeits."""

    def __post_init__(self) -> None:
        if self.max_strikes < 1:
            raise ValueError(f"max_strikes must be at least 1, got {self.max_strikes}")


@dataclass
class SideReport:
    """What happened to one side of a match."""

    name: str
    failures: list[Failure] = field(default_factory=list)
    """Every fault that forfeited a game or more, in order (illegal actions included)."""
    strikes: int = 0
    """Costly faults in a row, now."""
    restarts: int = 0
    gave_up: Failure | None = None
    """Set once the side gave up: the fault recorded for its remaining games."""

    def strike(self, policy: FaultPolicy, failure: Failure) -> bool:
        """Count a costly fault; True when the side gives up now."""
        self.strikes += 1
        if self.strikes < policy.max_strikes or self.gave_up is not None:
            return False
        count = self.strikes
        self.gave_up = Failure(failure.fault, (
            f"gave up after {count} fault{'s' * (count != 1)} in a row; last: "
            f"{failure.fault.value}: {failure.detail}"))
        return True

    def clean_game(self) -> None:
        """A game ended without a fault of this side: the strikes start again from 0."""
        self.strikes = 0


def is_costly(failure: Failure) -> bool:
    """Whether a single game's failure is a strike (a timeout costs a decision limit)."""
    return failure.fault is Fault.TIMEOUT
