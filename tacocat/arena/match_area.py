"""``arena.matches``: scheduling, the dispatcher's pass, match records, replays and bot logs.

- scheduling, aborting and recording take no user (the workers': whoever holds the Redis
  connection is trusted);
- a match's bot logs are for the owners of its bots, each their own sides' (or whoever
  opens a link an owner signed).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from tacocat.engine import GameRecord
from tacocat.models import Match, MatchResult, MatchStatus, Side, User

from . import dispatch, ladders, matches, recording, scheduler, standings
from . import logs as logs_
from ._area import Area, area
from ._redis import Clock, Redis
from .errors import NotFound
from .ids import check_name, ladder_of_match
from .keys import Keys
from .logs import MatchLog
from .recording import Recorded
from .scheduler import DEFAULT_ORPHAN_GRACE, DEFAULT_ROUNDS_AHEAD, Enqueue, JobAlive, Scheduling


@dataclass(frozen=True)
class TickReport:
    """What one :meth:`MatchArea.tick` did: matches created and re-enqueued per ladder, and
    the versions whose smoke test was handed out."""

    scheduled: Mapping[str, list[Match]] = field(default_factory=dict)
    requeued: Mapping[str, list[str]] = field(default_factory=dict)
    smoke_tests: list[str] = field(default_factory=list)


@area
class MatchArea(Area):
    """``arena.matches``. ``scheduling`` sets the match order and queue depth
    (:class:`~.scheduler.Scheduling`)."""

    def __init__(self, redis: Redis, keys: Keys, clock: Clock, *,
                 scheduling: Scheduling) -> None:
        super().__init__(redis, keys, clock)
        self.scheduling = scheduling

    # -- scheduling: the workers' dispatcher ---------------------------------------------------

    def schedule(
        self, ladder: str, enqueue: Enqueue, *,
        rounds_ahead: int | None = DEFAULT_ROUNDS_AHEAD,
    ) -> list[Match]:
        """Create and enqueue the ladder's due matches (see :mod:`tacocat.arena.scheduler`),
        in the order and queue depth of this arena's ``scheduling``."""
        policy = self.scheduling
        return scheduler.schedule(self.redis, self.keys, ladder, enqueue,
                                  rounds_ahead=rounds_ahead, queue_depth=policy.queue_depth,
                                  order=policy.order, fairness=policy.fairness,
                                  clock=self.clock)

    def find_orphans(
        self, ladder: str, *, timeout: float | None = None, job_alive: JobAlive | None = None,
        grace: float = DEFAULT_ORPHAN_GRACE,
    ) -> list[str]:
        return scheduler.find_orphans(self.redis, self.keys, ladder, timeout=timeout,
                                      job_alive=job_alive, grace=grace, now=self.clock())

    def requeue_orphans(
        self, ladder: str, enqueue: Enqueue, *, timeout: float | None = None,
        job_alive: JobAlive | None = None, grace: float = DEFAULT_ORPHAN_GRACE,
    ) -> list[str]:
        return scheduler.requeue_orphans(self.redis, self.keys, ladder, enqueue,
                                         timeout=timeout, job_alive=job_alive, grace=grace,
                                         clock=self.clock)

    def tick(
        self, enqueue: Enqueue, *, ladders_due: Iterable[str] | None = None,
        orphan_timeout: float | None = None, job_alive: JobAlive | None = None,
        enqueue_smoke: Enqueue | None = None, smoke_retry_after: float = 300.0,
        rounds_ahead: int | None = DEFAULT_ROUNDS_AHEAD,
    ) -> TickReport:
        """One dispatcher pass: schedule ``ladders_due`` (default all), re-enqueue orphans
        when ``orphan_timeout`` or ``job_alive`` is given, and hand due smoke tests to
        ``enqueue_smoke``. Run it after :meth:`wait_for_tick` and every few seconds."""
        names = ([lad.name for lad in ladders.list_ladders(self.redis, self.keys)]
                 if ladders_due is None else list(ladders_due))
        scheduled: dict[str, list[Match]] = {}
        requeued: dict[str, list[str]] = {}
        for name in names:
            try:
                scheduled[name] = self.schedule(name, enqueue, rounds_ahead=rounds_ahead)
            except NotFound:
                continue  # a stale tick request
            if orphan_timeout is not None or job_alive is not None:
                requeued[name] = self.requeue_orphans(name, enqueue, timeout=orphan_timeout,
                                                      job_alive=job_alive)
        smoke = []
        if enqueue_smoke is not None:
            smoke = dispatch.due_smoke_tests(self.redis, self.keys, now=self.clock(),
                                             retry_after=smoke_retry_after)
            for version in smoke:
                enqueue_smoke(version)
        return TickReport(scheduled, requeued, smoke)

    def wait_for_tick(self, timeout: float = 5.0) -> set[str] | None:
        """Block until something made work due, at most ``timeout`` seconds. Returns the
        ladders to schedule, or None for "all of them" (also on timeout: sweep everything)."""
        asked = dispatch.wait_for_tick(self.redis, self.keys, timeout)
        return None if not asked or dispatch.ALL in asked else asked

    def abort(self, match_id: str, reason: str) -> bool:
        """Give up a scheduled match that keeps failing (the workers' dispatcher does, after
        the same failure several times): ``ABORTED`` with ``reason``, out of the pending
        queue, not rated; the ladder schedules on. False if it was not scheduled (recorded
        or cancelled meanwhile)."""
        done = matches.abort_match(self.redis, self.keys, match_id, reason, self.clock())
        if done:
            dispatch.request_tick(self.redis, self.keys, ladder_of_match(match_id))
        return done

    def record(
        self, match_id: str, result: MatchResult, *, enqueue: Enqueue | None = None,
        on_refit: Callable[[float], None] | None = None,
    ) -> Recorded:
        """Record a played match exactly once (``Recorded.recorded`` is False for a
        duplicate), refit the standings, and with ``enqueue`` schedule what became due.

        ``on_refit``, when given, is called with the seconds each standings refit took
        (``time.perf_counter``; also when it failed), if there was one: the worker's
        ``rating_recompute`` histogram. While another process refits the ladder this call
        skips its refit (:func:`~tacocat.arena.standings.refit_if_free`)."""
        done = recording.record_match(self.redis, self.keys, match_id, result, clock=self.clock)
        ladder = done.match.ladder
        # A duplicate may be the re-run of a job that committed and then lost Redis before
        # its refit: refit whenever the snapshot is behind, so the last match is never missed.
        if done.recorded or standings.is_behind(self.redis, self.keys, ladder):
            standings.refit_if_free(self.redis, self.keys, ladder, clock=self.clock,
                                    on_refit=on_refit)
        if enqueue is not None:
            self.schedule(ladder, enqueue)
        elif done.recorded:
            dispatch.request_tick(self.redis, self.keys, ladder)
        return done

    # -- match records -------------------------------------------------------------------------

    def get(self, match_id: str) -> Match:
        """A match with its result (without replays); :class:`NotFound` if unknown."""
        return matches.get_match(self.redis, self.keys, match_id)

    def of_ladder(
        self, ladder: str, *, status: MatchStatus | None = None, start: int = 0,
        count: int = 100, newest_first: bool = False,
    ) -> list[Match]:
        """The matches of :meth:`page`, without the count."""
        return self.page(ladder, status=status, start=start, count=count,
                         newest_first=newest_first).matches

    def page(
        self, ladder: str, *, status: MatchStatus | None = None, start: int = 0,
        count: int = 100, newest_first: bool = False,
    ) -> matches.MatchPage:
        """A page of the ladder's matches (creation order, or from the newest back) and how
        many the filter selects in all."""
        ladders.get_ladder(self.redis, self.keys, check_name("ladder", ladder))
        return matches.match_page(self.redis, self.keys, ladder, status=status, start=start,
                                  count=count, newest_first=newest_first)

    def replays(self, match_id: str) -> list[GameRecord]:
        """The match's replay records, in game order."""
        return matches.match_replays(self.redis, self.keys, match_id)

    def replays_blob(self, match_id: str) -> bytes:
        """The match's replays as stored: gzip-compressed JSON Lines (a ``.jsonl.gz``)."""
        return matches.match_replays_blob(self.redis, self.keys, match_id)

    # -- bot logs: owners only (tacocat.arena.logs) --------------------------------------------

    def store_logs(self, match_id: str, logs: Mapping[Side, bytes]) -> None:
        """Keep what each side's bot wrote during the match (the worker, once recorded)."""
        logs_.store(self.redis, self.keys, match_id, logs)

    def logs(self, actor: User | None, match_id: str) -> list[MatchLog]:
        """The logs of the sides of ``match_id`` whose bot ``actor`` owns;
        :class:`PermissionDenied` when there is none (anonymous, or another user)."""
        match = self.get(match_id)
        sides = logs_.owned_sides(actor, match)
        if not sides:
            raise logs_.not_yours(match)
        return logs_.read(self.redis, self.keys, match, sides)

    def logs_link(self, actor: User, match_id: str,
                  seconds: float = logs_.LINK_SECONDS) -> tuple[str, float]:
        """A signed ``logs`` parameter showing ``actor``'s sides of the match to whoever
        opens the link, for ``seconds``; returns it with its expiry time."""
        match = self.get(match_id)
        sides = logs_.owned_sides(actor, match)
        if not sides:
            raise logs_.not_yours(match)
        expires = self.clock() + logs_.check_link_seconds(seconds)
        return logs_.sign_link(self.redis, self.keys, match.id, sides, expires), expires

    def logs_by_link(self, match_id: str, token: str) -> list[MatchLog]:
        """The logs a signed link shows; :class:`PermissionDenied` for a forged, altered or
        expired one."""
        match = self.get(match_id)
        sides = logs_.check_link(self.redis, self.keys, match.id, token, self.clock())
        return logs_.read(self.redis, self.keys, match, sides)
