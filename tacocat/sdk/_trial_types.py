"""``tacocat.v1.Trial`` decoded into :class:`tacocat.models.Trial` (an unrated SPRT test on
the arena, ``tacocat test``), here and nowhere else in the SDK."""

from __future__ import annotations

from typing import Final

from tacocat.engine.sprt import Sprt
from tacocat.models import Trial, TrialStatus
from tacocat.protocol.proto.v1 import arena_pb2 as apb

_STATUS: Final = {
    apb.TRIAL_STATUS_WAITING: TrialStatus.WAITING,
    apb.TRIAL_STATUS_RUNNING: TrialStatus.RUNNING,
    apb.TRIAL_STATUS_H0: TrialStatus.H0,
    apb.TRIAL_STATUS_H1: TrialStatus.H1,
    apb.TRIAL_STATUS_EXHAUSTED: TrialStatus.EXHAUSTED,
    apb.TRIAL_STATUS_CANCELLED: TrialStatus.CANCELLED,
    apb.TRIAL_STATUS_FAILED: TrialStatus.FAILED,
}


def trial_from_pb(msg: apb.Trial) -> Trial:
    p = msg.pentanomial
    penta = (p[0], p[1], p[2], p[3], p[4]) if len(p) == 5 else (0, 0, 0, 0, 0)
    return Trial(
        msg.id, msg.owner, msg.candidate, msg.baseline,
        Sprt(msg.elo0, msg.elo1, msg.alpha, msg.beta), msg.max_games,
        msg.games_per_match, msg.decision_seconds,
        _STATUS.get(msg.status, TrialStatus.WAITING), msg.reason, msg.created_at,
        msg.ended_at if msg.HasField("ended_at") else None, msg.matches_created,
        msg.matches_recorded, msg.games, msg.wins, msg.ties, msg.losses, msg.aborted,
        msg.forfeits_a, msg.forfeits_b, penta)
