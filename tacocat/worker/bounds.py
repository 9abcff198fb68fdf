"""How long a match job may take: derived from the referee's time bank, never a guess.

Every side of a match has a time bank (:mod:`tacocat.referee`'s fault policy), so a match's
worst case is known before it starts: :func:`tacocat.referee.match_bound` (both banks, both
first starts, one step's overshoot each). A match job also unpacks the bots and records the
result; :func:`job_timeout` adds :data:`JOB_MARGIN_FACTOR` and :data:`JOB_MARGIN_SECONDS`
for that and for a loaded machine. :class:`MatchTimeouts` gives the job timeout of a match
by its id (ladder or trial match) for :class:`~tacocat.worker.queue.MatchQueue`, which
enqueues each match with its own: a 2-game match no longer waits an hour to be killed, and
a 200-game match on a slow ladder is no longer killed before it can end.

The same bound says when a work horse is stalled: :func:`stall_seconds`, the longest a
horse that works may go without answering a decision (one step's worst case).
"""

from __future__ import annotations

import math
from typing import Final

from tacocat.arena import Arena, ArenaError
from tacocat.arena.trials import Trials, is_trial_match
from tacocat.protocol import MAX_BATCH
from tacocat.referee import BANK_LIMITS_PER_GAME, PROGRESS_LIMITS, match_bound

from .settings import WorkerSettings

JOB_MARGIN_FACTOR: Final = 1.5
JOB_MARGIN_SECONDS: Final = 60.0
"""Unpacking, recording and the standings refit (seconds, measured: docs/WORKER.md), with
room for a machine several times slower than the bound's."""
STALL_MARGIN_SECONDS: Final = 30.0
"""Beyond one step's worst case before a silent horse counts as stalled: recording and a
refit on a busy Redis happen between two decisions too (``WorkerSettings.stall_margin``)."""


def job_timeout(time_limit: float, games: int, *, batch: int, startup_timeout: float,
                limits_per_game: float = BANK_LIMITS_PER_GAME) -> int:
    """A match job's RQ timeout in whole seconds: its bound plus the margins above."""
    bound = match_bound(time_limit, games, batch=batch, startup_timeout=startup_timeout,
                        limits_per_game=limits_per_game)
    return math.ceil(bound * JOB_MARGIN_FACTOR + JOB_MARGIN_SECONDS)


def stall_seconds(time_limit: float, *, batch: int, startup_timeout: float,
                  margin: float = STALL_MARGIN_SECONDS) -> float:
    """The longest a working horse goes without answering a decision: a frame's answers
    come every :data:`~tacocat.referee.PROGRESS_LIMITS` limits or it breaks, a process start
    takes ``startup_timeout`` at most, a frame ``batch`` limits; twice the worst plus
    ``margin``."""
    step = max(startup_timeout, batch * time_limit, PROGRESS_LIMITS * time_limit)
    return 2 * step + margin


class MatchTimeouts:
    """The job timeout of a match by its id (``settings.job_timeout`` for a match that cannot
    be read: enqueuing must not fail on it)."""

    def __init__(self, arena: Arena, settings: WorkerSettings) -> None:
        self.arena = arena
        self.settings = settings

    def limits(self, match_id: str) -> tuple[float, int, int] | None:
        """The match's decision limit, games and batch (None: unknown)."""
        try:
            if is_trial_match(match_id):
                trials = Trials(self.arena)
                match = trials.get_match(match_id)
                trial = trials.get(match.trial)
                return trial.decision_seconds, match.games, self._batch(0)
            ladder_match = self.arena.matches.get(match_id)
            ladder = self.arena.ladders.get(ladder_match.ladder)
        except ArenaError:
            return None
        return ladder.decision_seconds, ladder_match.games, self._batch(ladder.batch)

    def __call__(self, match_id: str) -> int:
        known = self.limits(match_id)
        if known is None:
            return self.settings.job_timeout
        limit, games, batch = known
        return job_timeout(limit, games, batch=batch,
                           startup_timeout=self.settings.startup_timeout,
                           limits_per_game=self.settings.bank_limits_per_game)

    def _batch(self, ladder_batch: int) -> int:
        """The batch a job plays (as :func:`~tacocat.worker.jobs.play_versions` picks it)."""
        return min(ladder_batch or self.settings.batch, MAX_BATCH)
