"""A trial's match (an unrated SPRT test, :mod:`tacocat.arena.trials`) on a worker.

It runs as the ladder's match job does (same RQ job, job id, lease and orphan re-runs:
:func:`tacocat.worker.jobs.play_match` hands trial match ids here), plays through the same
sandboxed :func:`~tacocat.worker.playing.play_versions`, and records through
:meth:`Trials.record <tacocat.arena.trials.Trials.record>`, exactly once, never into a
ladder. A match whose trial ended (verdict, cancel) before it started is skipped; one that
ends while it plays is dropped at recording.
"""

from __future__ import annotations

import logging
import time

from tacocat.arena import Arena, MatchResult, NotFound
from tacocat.arena.trials import TrialMatchStatus, Trials, TrialStatus
from tacocat.engine import STANDARD

from .playing import JobContext, MatchReport, context, play_versions
from .queue import MatchQueue

log = logging.getLogger("tacocat.worker")


def run_trial_match(arena: Arena, queue: MatchQueue | None, match_id: str,
                    ctx: JobContext | None = None) -> MatchReport:
    """Play and record one trial match; ``queue`` gets the trial's next matches."""
    ctx = ctx or context()
    trials = Trials(arena)
    started = time.perf_counter()
    try:
        match = trials.get_match(match_id)
        trial = trials.get(match.trial)
    except NotFound:
        return MatchReport(match_id, "skipped", "no such test match")
    if match.status is not TrialMatchStatus.SCHEDULED:
        return MatchReport(match_id, "skipped", f"the match is {match.status.value}")
    if trial.status is not TrialStatus.RUNNING:
        return MatchReport(match_id, "skipped", f"test {trial.id} is {trial.status.value}")
    played = play_versions(arena, ctx, match.a, match.b, match.schedule(), STANDARD,
                           trial.decision_seconds, 0)
    recording = time.perf_counter()
    result = MatchResult.from_records(played.records, match.a, match.b, recording - started,
                                      a_seats=played.a_seats, worker=ctx.worker,
                                      keep_replays=ctx.settings.keep_replays)
    outcome = trials.record(match.id, result,
                            enqueue=queue.enqueue_match if queue is not None else None)
    ended = time.perf_counter()
    words = {TrialMatchStatus.RECORDED: ("recorded", ""),
             TrialMatchStatus.DROPPED: ("dropped", f"test {trial.id} ended while it played"),
             None: ("duplicate", "another run recorded this match first")}[outcome]
    log.info("%s %s (test %s): %s vs %s, %d games, A %d-%d-%d (W-T-L) in %.2f s", words[0],
             match.id, trial.id, match.a, match.b, len(played.records), result.wins,
             result.ties, result.losses, ended - started)
    return MatchReport(match.id, *words, len(played.records), ended - started,
                       played.timings.games, played.timings.bot_start, ended - recording,
                       result.wins, result.ties, result.losses,
                       {"a": result.forfeits("a"), "b": result.forfeits("b")})
