"""Matches whose runs keep failing: counted per way of failing, and aborted after a few.

A match job's run can fail without a result: it ran past its job timeout, its work horse
was killed (out of memory, a signal) or stalled (:mod:`tacocat.worker.progress`), its
worker went away, or the job raised. The dispatcher finds such a match an orphan and runs
it again (:meth:`Dispatcher.step <tacocat.worker.dispatcher.Dispatcher.step>`); first it
asks :func:`last_failure` how the last run ended and counts it with :func:`count_failure`
(``{prefix}worker:failures:{match}``, a hash: a count per way of failing and its last
description). When one way reaches ``max_failures`` (:data:`DEFAULT_MAX_FAILURES`), the
match is not run again: the arena records it ``aborted`` with that description
(:meth:`arena.matches.abort <tacocat.arena.MatchArea.abort>`), and the ladder goes on.

Counted per way, not in all: a match whose worker was killed once, ran past its timeout once
and hit a stall once has met three different accidents, not one fault of its own. A match
whose job vanished from a queue (a Valkey restart) or was never started is not counted:
nothing of it ran.

The descriptions are public (its bots' owners read them): fixed sentences made here, never
an exception's text, which the worker's log keeps.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from redis import Redis
from rq.exceptions import NoSuchJobError
from rq.job import Job, JobStatus

from .queue import match_job_id

DEFAULT_MAX_FAILURES: Final = 3
FAILURES_TTL: Final = 7 * 24 * 3600
STALLED_META: Final = "tacocat_stalled"
"""A job's meta field: set by the worker that killed its stalled horse, with the seconds it
waited for progress."""


@dataclass(frozen=True)
class RunFailure:
    """How one run of a match ended without a result."""

    kind: str
    """``timeout``, ``killed``, ``stalled``, ``lost`` or ``error:<exception class>``."""
    description: str
    """A public sentence: what happened, for owners and operators."""


def failures_key(prefix: str, match_id: str) -> str:
    return f"{prefix}worker:failures:{match_id}"


def last_failure(redis: Redis, match_id: str) -> RunFailure | None:
    """How the match's job's last run failed, or None when it did not run (gone from the
    queue, never started: nothing to hold against the match)."""
    try:
        job = Job.fetch(match_job_id(match_id), connection=redis)
    except NoSuchJobError:
        return None
    status = job.get_status(refresh=False)
    if status == JobStatus.STARTED:  # "started" with its lease gone: its worker died
        return RunFailure("lost", "the worker playing it went away (it stopped renewing its "
                                  "lease: killed, or its machine stalled)")
    if status != JobStatus.FAILED:
        return None
    stalled = job.meta.get(STALLED_META)
    if stalled is not None:
        return RunFailure("stalled", f"the worker process playing it stalled (no progress "
                                     f"for {float(stalled):.0f} s) and was stopped")
    result = job.latest_result()
    text = (result.exc_string or "") if result is not None else ""
    if "JobTimeoutException" in text:
        return RunFailure("timeout", f"it ran past its job timeout of {job.timeout} s")
    if "Work-horse terminated unexpectedly" in text:
        return RunFailure("killed", "the worker process playing it died (killed by a signal "
                                    "or for lack of memory)")
    lines = [line for line in text.strip().splitlines() if line.strip()]
    name = lines[-1].split(":", 1)[0].rsplit(".", 1)[-1].strip() if lines else "an error"
    name = name if name.isidentifier() else "an error"
    return RunFailure(f"error:{name}", f"the match job failed with {name} (the worker's log "
                                       "has the traceback)")


def count_failure(redis: Redis, prefix: str, match_id: str, failure: RunFailure) -> int:
    """Count one failed run; returns how many runs of the match failed that way."""
    key = failures_key(prefix, match_id)
    pipe = redis.pipeline(transaction=True)
    pipe.hincrby(key, failure.kind, 1)
    pipe.hset(key, f"last:{failure.kind}", failure.description)
    pipe.expire(key, FAILURES_TTL)
    count, _, _ = pipe.execute()
    return int(count)


def abort_reason(failure: RunFailure, count: int) -> str:
    """Why the match was aborted, for its page and its bots' owners."""
    return (f"{failure.description}; {count} runs failed this way, so it is not played "
            "again (not rated; the ladder goes on)")
