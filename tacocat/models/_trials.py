"""Trials: unrated SPRT tests of a candidate version against a baseline (``tacocat test``).
Their report and verdict are the local run's (:mod:`tacocat.engine.sprt`), word for word."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum

from tacocat.engine.sprt import Pentanomial, Sprt, stop_words


class TrialStatus(str, Enum):
    WAITING = "waiting"
    """The candidate waits for its smoke test."""
    RUNNING = "running"
    H0 = "H0"
    """Accepted H0: the candidate is not ``elo1`` stronger than the baseline."""
    H1 = "H1"
    """Accepted H1: the candidate is at least ``elo1`` stronger."""
    EXHAUSTED = "exhausted"
    """``max_games`` played without a verdict."""
    CANCELLED = "cancelled"
    FAILED = "failed"
    """A version could not play (``reason`` says why)."""

    @property
    def open(self) -> bool:
        return self in (TrialStatus.WAITING, TrialStatus.RUNNING)


@dataclass(frozen=True)
class Trial:
    """A test of ``candidate`` (A) against ``baseline`` (B) and where it stands. ``penta``
    counts the candidate's pairs LL, LD, WL or DD, WD, WW
    (:class:`~tacocat.engine.sprt.Pentanomial`); ``wins``/``ties``/``losses`` are the
    candidate's games."""

    id: str
    owner: str
    candidate: str
    baseline: str
    sprt: Sprt
    max_games: int
    games_per_match: int
    decision_seconds: float
    status: TrialStatus
    reason: str
    created_at: float
    ended_at: float | None
    matches_created: int
    matches_recorded: int
    games: int
    wins: int
    ties: int
    losses: int
    aborted: int
    forfeits_a: int
    forfeits_b: int
    penta: tuple[int, int, int, int, int]

    @property
    def pentanomial(self) -> Pentanomial:
        return Pentanomial(list(self.penta))

    @property
    def llr(self) -> float:
        return self.sprt.llr(self.pentanomial)

    @property
    def elo(self) -> tuple[float, float]:
        """The candidate's Elo over the baseline and its 95% half-width."""
        return self.pentanomial.elo()

    @property
    def matches_total(self) -> int:
        return math.ceil(self.max_games / self.games_per_match)

    def line(self) -> str:
        """The live report: games, score, Elo ± 95%, LLR with its bounds (as
        ``tacocat play --sprt``)."""
        return self.sprt.line(self.pentanomial, self.games)

    def verdict(self) -> str:
        """The final words (or where it stands while open, or why it stopped)."""
        return stop_words(self.status.value, self.reason, self.sprt, self.pentanomial,
                          self.games)
