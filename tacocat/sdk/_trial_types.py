"""What :class:`~tacocat.sdk.ArenaClient`'s trial calls return: an unrated SPRT test on the
arena (``tacocat test``), decoded from ``tacocat.v1.Trial`` at the edge. Its report and
verdict are the local run's (:mod:`tacocat.engine.sprt`), word for word."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Final

from tacocat.engine.sprt import Pentanomial, Sprt, stop_words
from tacocat.protocol.proto.v1 import arena_pb2 as apb


class TrialStatus(str, Enum):
    WAITING = "waiting"
    """The candidate waits for its smoke test."""
    RUNNING = "running"
    H0 = "H0"
    """Accepted H0: the candidate is not ``elo1`` stronger than the baseline."""
    H1 = "H1"
    """Accepted H1: the candidate is at least ``elo1`` stronger."""
    EXHAUSTED = "exhausted"
    """The games ran out without a verdict."""
    CANCELLED = "cancelled"
    FAILED = "failed"

    @property
    def open(self) -> bool:
        return self in (TrialStatus.WAITING, TrialStatus.RUNNING)


_STATUS: Final = {
    apb.TRIAL_STATUS_WAITING: TrialStatus.WAITING,
    apb.TRIAL_STATUS_RUNNING: TrialStatus.RUNNING,
    apb.TRIAL_STATUS_H0: TrialStatus.H0,
    apb.TRIAL_STATUS_H1: TrialStatus.H1,
    apb.TRIAL_STATUS_EXHAUSTED: TrialStatus.EXHAUSTED,
    apb.TRIAL_STATUS_CANCELLED: TrialStatus.CANCELLED,
    apb.TRIAL_STATUS_FAILED: TrialStatus.FAILED,
}


@dataclass(frozen=True)
class Trial:
    """A test of ``candidate`` (A) against ``baseline`` (B); counts are A's."""

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
    penta: tuple[int, ...]

    @property
    def pentanomial(self) -> Pentanomial:
        return Pentanomial(list(self.penta))

    @property
    def llr(self) -> float:
        return self.sprt.llr(self.pentanomial)

    def line(self) -> str:
        """The live report: games, score, Elo ± 95%, LLR with its bounds (as local SPRT)."""
        return self.sprt.line(self.pentanomial, self.games)

    def verdict(self) -> str:
        return stop_words(self.status.value, self.reason, self.sprt, self.pentanomial,
                          self.games)

    @classmethod
    def from_pb(cls, msg: apb.Trial) -> Trial:
        penta = tuple(msg.pentanomial) if len(msg.pentanomial) == 5 else (0, 0, 0, 0, 0)
        return cls(
            msg.id, msg.owner, msg.candidate, msg.baseline,
            Sprt(msg.elo0, msg.elo1, msg.alpha, msg.beta), msg.max_games,
            msg.games_per_match, msg.decision_seconds,
            _STATUS.get(msg.status, TrialStatus.WAITING), msg.reason, msg.created_at,
            msg.ended_at if msg.HasField("ended_at") else None, msg.matches_created,
            msg.matches_recorded, msg.games, msg.wins, msg.ties, msg.losses, msg.aborted,
            msg.forfeits_a, msg.forfeits_b, penta)
