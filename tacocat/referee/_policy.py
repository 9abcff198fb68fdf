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

**The time bank** bounds a match: besides its limit per decision, each side has a total for
the whole match (as Kaggle's "overage time"): :data:`BANK_LIMITS_PER_GAME` decision limits
per game, one game's worth more to spare (:func:`match_bank`). What counts against it is
what the seat measured: each decision's time, the time waited on a frame that broke, and
the starts of restarted processes (:attr:`Seat.spent <tacocat.referee.Seat.spent>`). A side
whose bank runs out gives up at once on ``timeout`` (the reason says what it used and what
its bank was): its games in flight and every later game forfeit without asking it again.
So a bot that answers every decision legally but slowly can no longer stretch a match
without end: :func:`match_bound` is a match's worst-case duration, which the workers' job
timeout is derived from. The numbers, and why honest bots never meet the bank:
docs/WORKER.md, "Time bank".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from tacocat.engine import Fault

from ._feed import Failure

DEFAULT_MAX_STRIKES: Final = 3
BANK_LIMITS_PER_GAME: Final = 10.0
"""A side's time bank, in decision limits per game of its match (a mean over the match: one
game may take more, if others take less). A game has about 38 decisions per side (63 at
the 99th percentile) and 7.4 duels: a quarter of the limit on every decision of a typical
game, or 55% of it on every duel of the longest, fits."""


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """How many costly faults in a row a side may have, and what giving up means."""

    max_strikes: int = DEFAULT_MAX_STRIKES
    """Strikes in a row that make a side give up (1: the first one; a smoke test's)."""
    end_match_on_give_up: bool = False
    """Live play: stop the match instead of recording the remaining games as forfeits."""
    bank_limits_per_game: float | None = BANK_LIMITS_PER_GAME
    """The time bank per game, in decision limits (:func:`match_bank`); None: no bank (a
    bot stepped through in a debugger)."""

    def __post_init__(self) -> None:
        if self.max_strikes < 1:
            raise ValueError(f"max_strikes must be at least 1, got {self.max_strikes}")
        if self.bank_limits_per_game is not None and self.bank_limits_per_game <= 0:
            raise ValueError("bank_limits_per_game must be positive (or None: no bank), got "
                             f"{self.bank_limits_per_game}")

    def bank(self, time_limit: float | None, games: int) -> TimeBank | None:
        """A side's bank for a match of ``games`` at ``time_limit`` seconds per decision
        (None without a limit or a bank: nothing is measured then)."""
        if time_limit is None or self.bank_limits_per_game is None:
            return None
        return TimeBank(match_bank(time_limit, games, self.bank_limits_per_game),
                        time_limit, games)


def match_bank(time_limit: float, games: int,
               limits_per_game: float = BANK_LIMITS_PER_GAME) -> float:
    """A side's time bank in seconds: ``limits_per_game`` decision limits for each game, and
    for one game more (short matches and smoke tests have a long game's worth to spare)."""
    return (games + 1) * limits_per_game * time_limit


def match_bound(time_limit: float, games: int, *, batch: int, startup_timeout: float,
                limits_per_game: float = BANK_LIMITS_PER_GAME) -> float:
    """The longest a match can take, in seconds, besides the referee's own work (the engine
    and the pipes: milliseconds a game).

    Per side: its first start (up to ``startup_timeout``), its bank (every decision, the
    waits on frames that broke and the restarts count against it), and what one step can
    overshoot the bank by: the frame in flight when the bank runs out (``batch`` decisions
    at most the limit each) or a restart (``startup_timeout``). The two sides think at the
    same time, so the sum of both is an upper bound.
    """
    overshoot = max(batch * time_limit, startup_timeout)
    side = startup_timeout + match_bank(time_limit, games, limits_per_game) + overshoot
    return 2 * side


@dataclass
class TimeBank:
    """One side's time bank for a match: what it may spend in all, in seconds."""

    seconds: float
    time_limit: float
    games: int

    def overdrawn(self, spent: float) -> Failure | None:
        """The side's timeout once ``spent`` (what its seat measured so far) exceeds the
        bank; None while it has time left."""
        if spent <= self.seconds:
            return None
        # Only the referee's numbers: how far past the bank it went is the bot's to choose
        # (a channel out of the sandbox into the public record).
        return Failure(Fault.TIMEOUT, (
            f"used up its time bank of {self.seconds:.3g} s for this match "
            f"({self.seconds / self.time_limit:g} decision limits of {self.time_limit:g} s "
            f"for {self.games} game{'s' * (self.games != 1)}); its remaining games forfeit"))


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

    def run_out(self, failure: Failure) -> None:
        """The side's time bank ran out: it gives up now (``failure`` says why)."""
        self.failures.append(failure)
        if self.gave_up is None:
            self.gave_up = failure

    def clean_game(self) -> None:
        """A game ended without a fault of this side: the strikes start again from 0."""
        self.strikes = 0


def is_costly(failure: Failure) -> bool:
    """Whether a single game's failure is a strike (a timeout costs a decision limit)."""
    return failure.fault is Fault.TIMEOUT
