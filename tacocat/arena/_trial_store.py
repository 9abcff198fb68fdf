"""The Redis steps of trials (:mod:`tacocat.arena.trials`): keys, create, schedule, record.

Every step that reads and then writes a trial runs as an optimistic transaction (``WATCH``
the trial's keys, read, compute in Python, ``MULTI``/``EXEC``, again on a conflict): the
SPRT's arithmetic exists once, in :mod:`tacocat.engine.sprt`, and a result is counted, and
the verdict decided, in one atomic step with it. A trial's keys share the hash tag
``{T17}``, so each step touches one Cluster slot.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from collections.abc import Callable, Mapping
from typing import Final, TypeVar

from redis.client import Pipeline
from redis.exceptions import WatchError

from tacocat.engine import Reason
from tacocat.engine.sprt import Pentanomial, Sprt
from tacocat.models import MatchResult, Trial, TrialStatus

from ._redis import Redis, scored, text, text_map
from .errors import Contention, InvalidArgument, NotFound
from .ids import shown
from .results import dumps_json
from .scheduler import Enqueue, JobAlive
from .trial_models import TrialMatch, TrialMatchStatus

_ATTEMPTS: Final = 50
_T = TypeVar("_T")


class TrialKeys:
    """The key names of trials (the rest of the schema is :class:`~tacocat.arena.keys.Keys`;
    docs/ARENA.md lists both)."""

    __slots__ = ("prefix",)

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    @property
    def counter(self) -> str:
        """String: the last trial number handed out."""
        return f"{self.prefix}trials:counter"

    @property
    def all(self) -> str:
        """Zset: every trial id, by number."""
        return f"{self.prefix}trials"

    @property
    def open(self) -> str:
        """Set: trials waiting or running (what the dispatcher looks at)."""
        return f"{self.prefix}trials:open"

    def trial(self, trial_id: str) -> str:
        """Hash: the :class:`Trial` fields, its counts and its secret seed key."""
        return f"{self.prefix}trial:{{{trial_id}}}"

    def pending(self, trial_id: str) -> str:
        """Zset: the trial's scheduled, unrecorded match ids, by last enqueue time."""
        return f"{self.prefix}trial:{{{trial_id}}}:pending"

    def match(self, trial_id: str, match_id: str) -> str:
        """Hash: a trial match's fields; once recorded its ``result`` (JSON)."""
        return f"{self.prefix}trial:{{{trial_id}}}:match:{match_id}"

    def replays(self, trial_id: str, match_id: str) -> str:
        """String: the match's replays, gzip of JSON Lines."""
        return f"{self.prefix}trial:{{{trial_id}}}:replays:{match_id}"

    def events(self, trial_id: str) -> str:
        """Pub/sub channel: ``{"event": "trial", "trial": ID}`` after every change."""
        return f"{self.prefix}trial:{{{trial_id}}}:events"


def not_found(message: str) -> NotFound:
    return NotFound(message)


def check_trial_id(trial_id: object) -> str:
    if not (isinstance(trial_id, str) and trial_id[:1] == "T" and trial_id[1:].isdigit()
            and len(trial_id) <= 20):
        raise InvalidArgument(f"test id {shown(trial_id)} must look like T17 "
                              "(`tacocat test --list` shows yours)")
    return trial_id


def trial_of_match(match_id: str) -> str:
    trial_id, dot, rest = match_id.partition(".")
    if not dot or rest.count(".") != 1:
        raise InvalidArgument(f"trial match id {shown(match_id)} must look like T17.3.DIGEST")
    return check_trial_id(trial_id)


def match_id(trial_id: str, number: int) -> str:
    """``T17.3.DIGEST``: the ladder match id's shape, so the worker's job ids, leases and
    orphan checks apply unchanged (no ladder name starts with an upper-case letter)."""
    digest = hashlib.sha256(f"{trial_id}\n{number}".encode()).hexdigest()[:16]
    return f"{trial_id}.{number}.{digest}"


def _transact(redis: Redis, watch: list[str], step: Callable[[Pipeline], _T]) -> _T:
    """Run ``step`` (reads, then ``pipe.multi()`` and writes) under ``WATCH watch`` until no
    other client changed those keys in between."""
    with redis.pipeline(transaction=True) as pipe:
        for _ in range(_ATTEMPTS):
            try:
                pipe.watch(*watch)  # type: ignore[no-untyped-call]
                return step(pipe)
            except WatchError:
                continue
    raise Contention(f"a test changed {_ATTEMPTS} times while being updated; retry")


# -- trials ----------------------------------------------------------------------------------


def create(redis: Redis, keys: TrialKeys, owner: str, candidate: str, baseline: str,
           sprt: Sprt, *, max_games: int, games_per_match: int, decision_seconds: float,
           now: float) -> Trial:
    number = int(redis.incr(keys.counter))
    trial_id = f"T{number}"
    fields: dict[bytes | bytearray | memoryview[int] | str | int | float,
                 bytes | bytearray | memoryview[int] | str | int | float] = {
        "id": trial_id, "owner": owner, "candidate": candidate, "baseline": baseline,
        "elo0": repr(sprt.elo0), "elo1": repr(sprt.elo1), "alpha": repr(sprt.alpha),
        "beta": repr(sprt.beta), "max_games": str(max_games),
        "games_per_match": str(games_per_match), "decision_seconds": repr(decision_seconds),
        "status": TrialStatus.WAITING.value, "reason": "", "created_at": repr(now),
        "secret": secrets.token_hex(16),
    }
    pipe = redis.pipeline(transaction=True)
    pipe.hset(keys.trial(trial_id), mapping=fields)
    pipe.zadd(keys.all, {trial_id: number})
    pipe.sadd(keys.open, trial_id)
    pipe.execute()
    return get(redis, keys, trial_id)


def get(redis: Redis, keys: TrialKeys, trial_id: str) -> Trial:
    fields = text_map(redis.hgetall(keys.trial(check_trial_id(trial_id))))
    if not fields:
        raise NotFound(f"no test {trial_id!r} (`tacocat test --list` shows yours)")
    return parse_trial(fields)


def parse_trial(fields: Mapping[str, str]) -> Trial:
    def count(name: str) -> int:
        return int(fields.get(name) or 0)

    ended = fields.get("ended_at")
    return Trial(
        fields["id"], fields["owner"], fields["candidate"], fields["baseline"],
        Sprt(float(fields["elo0"]), float(fields["elo1"]), float(fields["alpha"]),
             float(fields["beta"])),
        int(fields["max_games"]), int(fields["games_per_match"]),
        float(fields["decision_seconds"]), TrialStatus(fields["status"]), fields["reason"],
        float(fields["created_at"]), float(ended) if ended else None,
        count("created"), count("recorded"), count("games"), count("wins"), count("ties"),
        count("losses"), count("aborted"), count("forfeits_a"), count("forfeits_b"),
        (count("p0"), count("p1"), count("p2"), count("p3"), count("p4")),
    )


def list_trials(redis: Redis, keys: TrialKeys, *, owner: str | None, version: str | None,
                bot: str | None, count: int) -> list[Trial]:
    ids = [text(t) for t in redis.zrevrange(keys.all, 0, -1)]
    found = []
    for start in range(0, len(ids), 200):
        pipe = redis.pipeline(transaction=False)
        for trial_id in ids[start:start + 200]:
            pipe.hgetall(keys.trial(trial_id))
        for raw in pipe.execute():
            trial = parse_trial(text_map(raw))
            sides = (trial.candidate, trial.baseline)
            if (owner is None or trial.owner == owner) and (
                    version is None or version in sides) and (
                    bot is None or bot in (v.rpartition("@")[0] for v in sides)):
                found.append(trial)
                if len(found) >= count:
                    return found
    return found


def open_trials(redis: Redis, keys: TrialKeys) -> list[str]:
    return sorted((text(t) for t in redis.smembers(keys.open)), key=lambda t: int(t[1:]))


def start(redis: Redis, keys: TrialKeys, trial_id: str) -> Trial:
    """waiting -> running (no-op otherwise)."""
    def step(pipe: Pipeline) -> None:
        if text(pipe.hget(keys.trial(trial_id), "status")) != TrialStatus.WAITING.value:
            return
        pipe.multi()
        pipe.hset(keys.trial(trial_id), "status", TrialStatus.RUNNING.value)
        _announce(pipe, keys, trial_id)
        pipe.execute()

    _transact(redis, [keys.trial(trial_id)], step)
    return get(redis, keys, trial_id)


def end(redis: Redis, keys: TrialKeys, trial_id: str, status: TrialStatus, reason: str, *,
        now: float) -> Trial:
    """An open trial ends with ``status`` (no-op for one that ended already)."""
    def step(pipe: Pipeline) -> None:
        if not TrialStatus(text(pipe.hget(keys.trial(trial_id), "status"))).open:
            return
        pipe.multi()
        _ending(pipe, keys, trial_id, status, reason, now)
        _announce(pipe, keys, trial_id)
        pipe.execute()

    _transact(redis, [keys.trial(trial_id)], step)
    return get(redis, keys, trial_id)


def _ending(pipe: Pipeline, keys: TrialKeys, trial_id: str, status: TrialStatus, reason: str,
            now: float) -> None:
    pipe.hset(keys.trial(trial_id), mapping={"status": status.value, "reason": reason,
                                             "ended_at": repr(now)})
    pipe.srem(keys.open, trial_id)
    # Queued matches are skipped by the workers; forgetting them stops orphan re-runs.
    pipe.delete(keys.pending(trial_id))


def _announce(pipe: Pipeline, keys: TrialKeys, trial_id: str) -> None:
    pipe.publish(keys.events(trial_id), dumps_json({"event": "trial", "trial": trial_id}))


# -- matches -------------------------------------------------------------------------------


def create_matches(redis: Redis, keys: TrialKeys, trial_id: str, in_flight: int, *,
                   now: float) -> list[str]:
    """Create the next matches of a running trial, up to ``in_flight`` pending; returns
    their ids. Concurrent calls create each match once (the numbers are consecutive)."""
    def step(pipe: Pipeline) -> list[str]:
        fields = text_map(pipe.hgetall(keys.trial(trial_id)))
        if not fields or fields["status"] != TrialStatus.RUNNING.value:
            return []
        pending = int(pipe.zcard(keys.pending(trial_id)))
        created = int(fields.get("created") or 0)
        max_games, per_match = int(fields["max_games"]), int(fields["games_per_match"])
        made: list[str] = []
        pipe.multi()
        while pending + len(made) < in_flight and created * per_match < max_games:
            mid = match_id(trial_id, created)
            games = min(per_match, max_games - created * per_match)
            seed = hmac.new(fields["secret"].encode(), mid.encode(),
                            hashlib.sha256).hexdigest()[:24]
            pipe.hset(keys.match(trial_id, mid), mapping={
                "id": mid, "trial": trial_id, "number": str(created),
                "a": fields["candidate"], "b": fields["baseline"], "games": str(games),
                "seed": seed, "status": TrialMatchStatus.SCHEDULED.value,
                "enqueued_at": repr(now)})
            pipe.zadd(keys.pending(trial_id), {mid: now})
            made.append(mid)
            created += 1
        if made:
            pipe.hset(keys.trial(trial_id), "created", str(created))
            pipe.execute()
        else:
            pipe.reset()
        return made

    return _transact(redis, [keys.trial(trial_id), keys.pending(trial_id)], step)


def get_match(redis: Redis, keys: TrialKeys, mid: str) -> TrialMatch:
    fields = text_map(redis.hgetall(keys.match(trial_of_match(mid), mid)))
    if not fields:
        raise NotFound(f"no test match {mid!r}")
    return TrialMatch(fields["id"], fields["trial"], int(fields["number"]), fields["a"],
                      fields["b"], int(fields["games"]), fields["seed"],
                      TrialMatchStatus(fields["status"]))


def record(redis: Redis, keys: TrialKeys, mid: str, result: MatchResult, *,
           now: float) -> TrialMatchStatus | None:
    """Count ``result`` once, and end the trial if the SPRT decides or the games ran out.
    Returns None for a match recorded (or dropped) already, DROPPED for a trial that ended
    before this result arrived, else RECORDED."""
    trial_id = trial_of_match(mid)
    trial_key, match_key = keys.trial(trial_id), keys.match(trial_id, mid)

    def step(pipe: Pipeline) -> TrialMatchStatus | None:
        status = text(pipe.hget(match_key, "status"))
        if not status:
            raise NotFound(f"no test match {mid!r}")
        if status != TrialMatchStatus.SCHEDULED.value:
            return None
        expected = int(text(pipe.hget(match_key, "games")))
        if len(result.games) != expected:
            raise InvalidArgument(f"match {mid} has {expected} games; the result has "
                                  f"{len(result.games)}")
        trial = parse_trial(text_map(pipe.hgetall(trial_key)))
        pipe.multi()
        pipe.zrem(keys.pending(trial_id), mid)
        if trial.status is not TrialStatus.RUNNING:
            pipe.hset(match_key, mapping={"status": TrialMatchStatus.DROPPED.value,
                                          "recorded_at": repr(now)})
            pipe.execute()
            return TrialMatchStatus.DROPPED
        penta = _add_pairs(trial.pentanomial, result)
        counts = {
            "recorded": trial.matches_recorded + 1, "games": trial.games + len(result.games),
            "wins": trial.wins + result.wins, "ties": trial.ties + result.ties,
            "losses": trial.losses + result.losses,
            "aborted": trial.aborted + result.aborted,
            "forfeits_a": trial.forfeits_a + sum(result.forfeits("a").values()),
            "forfeits_b": trial.forfeits_b + sum(result.forfeits("b").values()),
            **{f"p{i}": c for i, c in enumerate(penta.counts)},
        }
        pipe.hset(trial_key, mapping={k: str(v) for k, v in counts.items()})
        pipe.hset(match_key, mapping={
            "status": TrialMatchStatus.RECORDED.value, "recorded_at": repr(now),
            "result": json.dumps(result.summary_json(), separators=(",", ":"))})
        if result.replays:
            pipe.set(keys.replays(trial_id, mid), result.replays)
        verdict = trial.sprt.verdict(trial.sprt.llr(penta))
        if verdict.value in (TrialStatus.H0.value, TrialStatus.H1.value):
            _ending(pipe, keys, trial_id, TrialStatus(verdict.value),
                    f"LLR crossed its bound after {counts['games']} games", now)
        elif counts["recorded"] == trial.matches_total:
            _ending(pipe, keys, trial_id, TrialStatus.EXHAUSTED,
                    f"all {trial.max_games} games played", now)
        _announce(pipe, keys, trial_id)
        pipe.execute()
        return TrialMatchStatus.RECORDED

    return _transact(redis, [trial_key, match_key], step)


def _add_pairs(penta: Pentanomial, result: MatchResult) -> Pentanomial:
    """The counts with the result's duplicate pairs added (A is the candidate). A pair with
    an aborted game tells nothing about the bots and is left out, as its game is unrated."""
    added = Pentanomial(list(penta.counts))
    games = result.games
    for first, second in zip(games[0::2], games[1::2], strict=False):
        if first.reason is not Reason.ABORTED and second.reason is not Reason.ABORTED:
            added.add_pair(first.score_a, second.score_a)
    return added


def requeue_orphans(redis: Redis, keys: TrialKeys, trial_id: str, enqueue: Enqueue,
                    job_alive: JobAlive, grace: float, now: float) -> list[str]:
    """Enqueue again the pending matches whose job is gone (a worker died), as the ladders'
    :func:`~tacocat.arena.scheduler.requeue_orphans` does."""
    requeued = []
    for mid, enqueued_at in scored(redis.zrange(keys.pending(trial_id), 0, -1,
                                                withscores=True)):
        if now - enqueued_at > grace and not job_alive(mid) and redis.zadd(
                keys.pending(trial_id), {mid: now}, xx=True, ch=True):
            enqueue(mid)
            requeued.append(mid)
    return requeued
