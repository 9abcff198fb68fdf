"""A trial's matches (unrated SPRT tests, :mod:`tacocat.arena.trials`); the trial itself,
:class:`~tacocat.models.Trial`, is :mod:`tacocat.models`'s."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from tacocat.engine import ScheduledGame, duplicate_pairs


class TrialMatchStatus(str, Enum):
    SCHEDULED = "scheduled"
    RECORDED = "recorded"
    DROPPED = "dropped"
    """Played after the trial ended: kept out of its counts."""


@dataclass(frozen=True)
class TrialMatch:
    """Match ``number`` (0-based) of a trial: candidate A against baseline B."""

    id: str
    trial: str
    number: int
    a: str
    b: str
    games: int
    seed: str
    status: TrialMatchStatus

    def schedule(self) -> tuple[ScheduledGame, ...]:
        return duplicate_pairs(self.games, self.seed)


def is_trial_match(match_id: str) -> bool:
    """Whether a match id is a trial's (``T17.3.DIGEST``); ladder names are lowercase."""
    return match_id[:1] == "T"
