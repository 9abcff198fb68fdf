"""The arena's one entry point: :class:`Arena`, what the gRPC API, the CLI and workers call.

It wraps the stores (users, bots, ladders, matches, scheduler, recording, standings) with
the authorization rules, so those live in one place:

- every ``actor``/``user`` argument is a :class:`User` from :meth:`Arena.authenticate`;
- creating users, and tokens for other users, takes an admin; so does creating a ladder;
- only a bot's owner may submit versions of it; its owner or an admin may enter it in a
  ladder;
- worker-side calls (activate/reject a version, schedule, record) take no user: whoever
  holds the Redis connection is trusted.

Refusals are distinct :class:`~tacocat.arena.errors.ArenaError` subclasses
(``Unauthenticated``, ``PermissionDenied``, ``NotFound``, ``AlreadyExists``,
``InvalidArgument``, ``FailedPrecondition``), each with a ``status`` naming its gRPC code.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ParamSpec, TypeVar

import redis as redis_py

from tacocat.engine import GameRecord, Ruleset
from tacocat.models import (
    BotInfo,
    BotVersion,
    Entry,
    Ladder,
    LadderStatus,
    Leaderboard,
    Match,
    MatchResult,
    MatchStatus,
    Side,
    TokenInfo,
    User,
    VersionStatus,
)

from . import (
    bots,
    dispatch,
    ladders,
    live,
    matches,
    ratelimit,
    recording,
    scheduler,
    standings,
    users,
)
from . import logs as logs_
from ._redis import Clock, Redis, as_unavailable, check_client, default_clock
from .errors import InvalidArgument, NotFound, PermissionDenied, RateLimited
from .ids import bot_id, check_name, ladder_of_match, split_bot_id
from .keys import DEFAULT_PREFIX, Keys
from .logs import MatchLog
from .ratelimit import NO_LIMITS, RateLimit, RateLimits, describe_wait
from .recording import EloReplay, LogEntry, Recorded
from .results import dumps_json
from .scheduler import (
    DEFAULT_ORPHAN_GRACE,
    DEFAULT_ROUNDS_AHEAD,
    DEFAULT_SCHEDULING,
    Enqueue,
    JobAlive,
    Scheduling,
)
from .submissions import DEFAULT_LIMITS, SubmissionLimits, validate_submission

_P = ParamSpec("_P")
_R = TypeVar("_R")


def _unavailable(method: Callable[_P, _R]) -> Callable[_P, _R]:
    """Turn a lost Redis (after redis-py's own retries), or one refusing writes (a full
    disk), into :class:`RedisUnavailable`, so API callers see one arena error type per
    condition."""

    @functools.wraps(method)
    def wrapper(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(*args, **kwargs)
        except redis_py.RedisError as exc:
            unavailable = as_unavailable(exc)
            if unavailable is None:
                raise
            raise unavailable from exc

    return wrapper


_T = TypeVar("_T", bound=type)


def _wrap_public_methods(cls: _T) -> _T:
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and callable(member):
            setattr(cls, name, _unavailable(member))
    return cls


@dataclass(frozen=True)
class TickReport:
    """What one :meth:`Arena.tick` did: matches created and re-enqueued per ladder, and the
    versions whose smoke test was handed out."""

    scheduled: Mapping[str, list[Match]] = field(default_factory=dict)
    requeued: Mapping[str, list[str]] = field(default_factory=dict)
    smoke_tests: list[str] = field(default_factory=list)


@_wrap_public_methods
class Arena:
    """The arena on one Redis. Cheap to create; thread-safe as far as the client is.

    ``redis`` must not decode responses (``decode_responses=False``, as RQ needs too).
    ``prefix`` namespaces every key (default ``tacocat:``); ``limits`` bound uploads;
    ``rate_limits`` bound how fast users may submit (default none: a library caller is
    trusted; ``tacocat serve`` passes :data:`~tacocat.arena.ratelimit.DEFAULT_RATE_LIMITS`);
    ``scheduling`` sets the match order and queue depth (:class:`~.scheduler.Scheduling`);
    ``clock`` (seconds since the epoch) exists for tests. A Redis that stays unreachable
    through redis-py's retries raises :class:`RedisUnavailable` from any method.
    """

    def __init__(
        self, redis: Redis, *, prefix: str = DEFAULT_PREFIX,
        limits: SubmissionLimits = DEFAULT_LIMITS, rate_limits: RateLimits = NO_LIMITS,
        clock: Clock = default_clock, scheduling: Scheduling = DEFAULT_SCHEDULING,
    ) -> None:
        check_client(redis)
        self.scheduling = scheduling
        self.redis = redis
        self.keys = Keys(prefix)
        self.limits = limits
        self.rate_limits = rate_limits
        self.clock = clock

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Arena:
        """An arena on a new client for ``url`` (``redis://``, ``rediss://``, ``unix://``)."""
        return cls(redis_py.Redis.from_url(url), **kwargs)

    def __repr__(self) -> str:
        return f"Arena({self.redis!r}, prefix={self.keys.prefix!r})"

    # -- users and tokens ----------------------------------------------------------------------

    def bootstrap_admin(self, name: str = users.ADMIN) -> str | None:
        """Create the admin and its token on first start: returns the plaintext token once
        (print it), None ever after."""
        return users.bootstrap_admin(self.redis, self.keys, name=name, clock=self.clock)

    def authenticate(self, token: str | None) -> User:
        """The user holding ``token``; :class:`Unauthenticated` for none, a malformed, an
        unknown or a revoked one."""
        return users.authenticate(self.redis, self.keys, token)

    def create_user(self, actor: User, name: str, *, admin: bool = False) -> User:
        """Create a user (admins only)."""
        self._require_admin(actor, "create users")
        return users.create_user(self.redis, self.keys, name, admin=admin, clock=self.clock)

    def register_user(self, name: str, *, client: str, label: str = "") -> tuple[User, str]:
        """Self-service: a new non-admin user and its first token (plaintext, shown once),
        for the anonymous ``client`` (``ip:ADDRESS``: the rate limit's subject). Whether
        registration is open is the server's decision, not checked here."""
        limit = self.rate_limits.registrations
        if limit is not None:
            self.take_rate(ratelimit.REGISTER, client, limit,
                           what=f"registrations from {client.removeprefix('ip:')}")
        user = users.create_user(self.redis, self.keys, name, admin=False, clock=self.clock)
        token = users.issue_token(self.redis, self.keys, user.name, label=label,
                                  clock=self.clock)
        return user, token

    def get_user(self, name: str) -> User:
        return users.get_user(self.redis, self.keys, name)

    def list_users(self, actor: User) -> list[User]:
        self._require_admin(actor, "list users")
        return users.list_users(self.redis, self.keys)

    def create_token(self, actor: User, user: str | None = None, *, label: str = "") -> str:
        """A new token for ``user`` (default: the actor); returns the plaintext, shown once.
        A token for another user takes an admin."""
        target = self._self_or_admin(actor, user, "create tokens")
        return users.issue_token(self.redis, self.keys, target, label=label, clock=self.clock)

    def list_tokens(self, actor: User, user: str | None = None) -> list[TokenInfo]:
        target = self._self_or_admin(actor, user, "list tokens")
        return users.list_tokens(self.redis, self.keys, target)

    def revoke_token(self, actor: User, token_id: str, user: str | None = None) -> None:
        target = self._self_or_admin(actor, user, "revoke tokens")
        users.revoke_token(self.redis, self.keys, target, token_id)

    # -- bots and versions ---------------------------------------------------------------------

    def submit_bot(self, user: User, bot: str, filename: str, data: bytes) -> BotVersion:
        """Validate an upload and store it as the next version of ``bot``, status pending.

        ``bot`` is a bot name (the user's own bot, created on first submission) or
        ``owner/name``, which must be the user's. The smoke game that activates or rejects
        the version is the worker's (:meth:`due_smoke_tests`, :meth:`activate_version`).
        """
        owner, name = self._bot_ref(user, bot)
        if owner != user.name:
            raise PermissionDenied(
                f"bot {bot_id(owner, name)!r} belongs to {owner!r}; only its owner may "
                f"submit versions. Submit under your own name, e.g. {user.name}/{name}"
            )
        # Charged before validation: checking a zip is the expensive part of a submission.
        limit = self.rate_limits.submissions
        if limit is not None and not user.admin:
            self.take_rate(ratelimit.SUBMIT, user.name, limit, what="submissions",
                           whose=repr(user.name))
        submission = validate_submission(filename, data, self.limits)
        version = bots.submit_version(self.redis, self.keys, owner, name, submission,
                                      clock=self.clock)
        dispatch.request_tick(self.redis, self.keys)
        return version

    def take_rate(self, kind: str, subject: str, limit: RateLimit, *, cost: int = 1,
                  what: str = "calls", whose: str = "") -> None:
        """Take ``cost`` from the token bucket ``(kind, subject)`` or raise
        :class:`RateLimited` saying when to retry (see :mod:`tacocat.arena.ratelimit`)."""
        wait = ratelimit.take(self.redis, self.keys, kind, subject, limit, cost=cost,
                              now=self.clock())
        if wait > 0:
            owner = f" by {whose}" if whose else ""
            raise RateLimited(
                f"too many {what}{owner}: the limit is {limit.describe()}; "
                f"{describe_wait(wait)}", wait)

    def get_bot(self, bot: str) -> BotInfo:
        """The bot ``owner/name``."""
        split_bot_id(bot)
        return bots.get_bot(self.redis, self.keys, bot)

    def list_bots(self, owner: str | None = None) -> list[BotInfo]:
        return bots.list_bots(self.redis, self.keys, owner)

    def list_versions(self, bot: str) -> list[BotVersion]:
        """The versions of ``owner/name``, oldest first."""
        split_bot_id(bot)
        return bots.list_versions(self.redis, self.keys, bot)

    def get_version(self, version: str) -> BotVersion:
        return bots.get_version(self.redis, self.keys, version)

    def version_source(self, version: str) -> bytes:
        """The uploaded bytes; unpack them with :func:`tacocat.arena.submissions.unpack`."""
        return bots.version_source(self.redis, self.keys, version)

    def store_build(self, version: str, files: bytes | None, log: bytes) -> None:
        """Keep a version's build (the worker): the built folder as a tar (``None``: the
        build failed) and what it printed, for the owner."""
        bots.store_build(self.redis, self.keys, version, files, log)

    def version_build(self, version: str) -> bytes | None:
        """The version's built folder (a tar), if a worker built it."""
        return bots.version_build(self.redis, self.keys, version)[0]

    def build_log(self, actor: User, version: str) -> bytes:
        """What the version's build printed: its owner's (or an admin's) to read."""
        found = self.get_version(version)
        if actor.name != split_bot_id(found.bot)[0] and not actor.admin:
            raise PermissionDenied(f"the build log of {version} is its owner's")
        log = bots.version_build(self.redis, self.keys, version)[1]
        if log is None:
            raise NotFound(f"{version} has no build log (no build step, or not built yet)")
        return log

    def pending_versions(self) -> list[BotVersion]:
        return bots.pending_versions(self.redis, self.keys)

    def due_smoke_tests(self, *, retry_after: float = 300.0) -> list[str]:
        """Pending versions whose smoke test should be started now (each handed out once,
        again after ``retry_after`` seconds without a decision)."""
        return dispatch.due_smoke_tests(self.redis, self.keys, now=self.clock(),
                                        retry_after=retry_after)

    def activate_version(self, version: str) -> BotVersion:
        """Mark a pending version active (it passed its smoke game). If it is now the bot's
        newest active version it plays in all the bot's ladders and the one it replaces
        retires (its scheduled matches are cancelled; its records stay)."""
        decided, retired = bots.decide_version(self.redis, self.keys, version,
                                               VersionStatus.ACTIVE, clock=self.clock)
        for ladder in ladders.bot_ladders(self.redis, self.keys, decided.bot):
            if retired is not None:
                playing = set(ladders.playing_versions(self.redis, self.keys, ladder))
                scheduler.cancel_retired(self.redis, self.keys, ladder, playing,
                                         now=self.clock())
            self._changed(ladder, "versions")
        return decided

    def reject_version(self, version: str, reason: str) -> BotVersion:
        """Mark a pending version rejected (its smoke game failed); ``reason`` is shown to
        its owner, so say what happened (``"timeout: no answer within 1.0 s"``)."""
        if not reason.strip():
            raise InvalidArgument("a rejection needs a reason the bot's owner can act on")
        decided, _ = bots.decide_version(self.redis, self.keys, version,
                                         VersionStatus.REJECTED, reason, clock=self.clock)
        return decided

    # -- ladders -------------------------------------------------------------------------------

    def create_ladder(
        self, actor: User, name: str, *, ruleset: Ruleset | Mapping[str, Any] | None = None,
        games_per_pairing: int = ladders.DEFAULT_GAMES_PER_PAIRING,
        games_per_match: int = ladders.DEFAULT_GAMES_PER_MATCH,
        decision_seconds: float = ladders.DEFAULT_DECISION_SECONDS, batch: int = 0,
    ) -> Ladder:
        """Create a ladder (admins only). ``ruleset``: default the standard rules; ``batch``
        games of a match at once (0: the workers' default)."""
        self._require_admin(actor, "create ladders")
        return ladders.create_ladder(
            self.redis, self.keys, name, created_by=actor.name, ruleset=ruleset,
            games_per_pairing=games_per_pairing, games_per_match=games_per_match,
            decision_seconds=decision_seconds, batch=batch, clock=self.clock,
        )

    def get_ladder(self, name: str) -> Ladder:
        return ladders.get_ladder(self.redis, self.keys, check_name("ladder", name))

    def list_ladders(self) -> list[Ladder]:
        return ladders.list_ladders(self.redis, self.keys)

    def join_ladder(self, user: User, bot: str, ladder: str) -> Entry:
        """Enter a bot in a ladder (its owner, or an admin). Its newest active version
        plays, now or once one is active."""
        owner, name = self._bot_ref(user, bot)
        found = bots.get_bot(self.redis, self.keys, bot_id(owner, name))
        if found.owner != user.name and not user.admin:
            raise PermissionDenied(
                f"bot {found.id!r} belongs to {found.owner!r}; only its owner (or an admin) "
                "may enter it in a ladder"
            )
        check_name("ladder", ladder)
        entry = ladders.join_ladder(self.redis, self.keys, ladder, found.id, clock=self.clock)
        self._changed(ladder, "versions")
        return entry

    def bot_ladders(self, bot: str) -> list[str]:
        """The ladders ``owner/name`` joined, by name."""
        split_bot_id(bot)
        return ladders.bot_ladders(self.redis, self.keys, bot)

    def entries(self, ladder: str) -> list[Entry]:
        ladders.get_ladder(self.redis, self.keys, check_name("ladder", ladder))
        return ladders.entries(self.redis, self.keys, ladder)

    # -- scheduling and matches ----------------------------------------------------------------

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
        names = [lad.name for lad in self.list_ladders()] if ladders_due is None else list(
            ladders_due)
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
            smoke = self.due_smoke_tests(retry_after=smoke_retry_after)
            for version in smoke:
                enqueue_smoke(version)
        return TickReport(scheduled, requeued, smoke)

    def wait_for_tick(self, timeout: float = 5.0) -> set[str] | None:
        """Block until something made work due, at most ``timeout`` seconds. Returns the
        ladders to schedule, or None for "all of them" (also on timeout: sweep everything)."""
        asked = dispatch.wait_for_tick(self.redis, self.keys, timeout)
        return None if not asked or dispatch.ALL in asked else asked

    def abort_match(self, match_id: str, reason: str) -> bool:
        """Give up a scheduled match that keeps failing (the workers' dispatcher does, after
        the same failure several times): ``ABORTED`` with ``reason``, out of the pending
        queue, not rated; the ladder schedules on. False if it was not scheduled (recorded
        or cancelled meanwhile)."""
        done = matches.abort_match(self.redis, self.keys, match_id, reason, self.clock())
        if done:
            dispatch.request_tick(self.redis, self.keys, ladder_of_match(match_id))
        return done

    def get_match(self, match_id: str) -> Match:
        """A match with its result (without replays); :class:`NotFound` if unknown."""
        return matches.get_match(self.redis, self.keys, match_id)

    def list_matches(
        self, ladder: str, *, status: MatchStatus | None = None, start: int = 0,
        count: int = 100, newest_first: bool = False,
    ) -> list[Match]:
        return self.match_page(ladder, status=status, start=start, count=count,
                               newest_first=newest_first).matches

    def match_page(
        self, ladder: str, *, status: MatchStatus | None = None, start: int = 0,
        count: int = 100, newest_first: bool = False,
    ) -> matches.MatchPage:
        """A page of the ladder's matches (creation order, or from the newest back) and how
        many the filter selects in all."""
        ladders.get_ladder(self.redis, self.keys, check_name("ladder", ladder))
        return matches.match_page(self.redis, self.keys, ladder, status=status, start=start,
                                  count=count, newest_first=newest_first)

    def match_replays(self, match_id: str) -> list[GameRecord]:
        """The match's replay records, in game order."""
        return matches.match_replays(self.redis, self.keys, match_id)

    def match_replays_blob(self, match_id: str) -> bytes:
        """The match's replays as stored: gzip-compressed JSON Lines (a ``.jsonl.gz``)."""
        return matches.match_replays_blob(self.redis, self.keys, match_id)

    # -- bot logs: owners only (tacocat.arena.logs) ----------------------------------------------

    def store_match_logs(self, match_id: str, logs: Mapping[Side, bytes]) -> None:
        """Keep what each side's bot wrote during the match (the worker, once recorded)."""
        logs_.store(self.redis, self.keys, match_id, logs)

    def match_logs(self, actor: User | None, match_id: str) -> list[MatchLog]:
        """The logs of the sides of ``match_id`` whose bot ``actor`` owns;
        :class:`PermissionDenied` when there is none (anonymous, or another user)."""
        match = self.get_match(match_id)
        sides = logs_.owned_sides(actor, match)
        if not sides:
            raise logs_.not_yours(match)
        return logs_.read(self.redis, self.keys, match, sides)

    def match_logs_link(self, actor: User, match_id: str,
                        seconds: float = logs_.LINK_SECONDS) -> tuple[str, float]:
        """A signed ``logs`` parameter showing ``actor``'s sides of the match to whoever
        opens the link, for ``seconds``; returns it with its expiry time."""
        match = self.get_match(match_id)
        sides = logs_.owned_sides(actor, match)
        if not sides:
            raise logs_.not_yours(match)
        expires = self.clock() + logs_.check_link_seconds(seconds)
        return logs_.sign_link(self.redis, self.keys, match.id, sides, expires), expires

    def match_logs_by_link(self, match_id: str, token: str) -> list[MatchLog]:
        """The logs a signed link shows; :class:`PermissionDenied` for a forged, altered or
        expired one."""
        match = self.get_match(match_id)
        sides = logs_.check_link(self.redis, self.keys, match.id, token, self.clock())
        return logs_.read(self.redis, self.keys, match, sides)

    def record_match(
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

    # -- standings -----------------------------------------------------------------------------

    def leaderboard(self, ladder: str) -> Leaderboard:
        """Standings: rating ± 95% interval, live Elo, W/T/L, forfeits, crosstable."""
        check_name("ladder", ladder)
        return standings.leaderboard(self.redis, self.keys, ladder, clock=self.clock)

    def ladder_status(self, ladder: str) -> LadderStatus:
        return standings.ladder_status(self.redis, self.keys, check_name("ladder", ladder))

    def recent_matches(self, ladder: str, count: int = 20) -> list[LogEntry]:
        ladders.get_ladder(self.redis, self.keys, check_name("ladder", ladder))
        return standings.recent_matches(self.redis, self.keys, ladder, count)

    def recompute_ratings(self, ladder: str, *, store: bool = False) -> EloReplay:
        """Replay the results log into live Elo and compare (``store``: repair)."""
        ladders.get_ladder(self.redis, self.keys, ladder)
        return recording.recompute_ratings(self.redis, self.keys, ladder, store=store)

    # -- matches being played now (see tacocat.arena.live) ------------------------------------

    def start_live(self, match: Match, worker: str = "") -> None:
        """``match`` starts playing (the worker says so, for people watching)."""
        live.start_live(self.redis, self.keys, match.ladder, match.id, a=match.a, b=match.b,
                        total=match.games, worker=worker, clock=self.clock)

    def add_live_game(self, match: Match, record: GameRecord) -> None:
        live.add_live_game(self.redis, self.keys, match.ladder, match.id, record)

    def add_live_games(self, match: Match, lines: Sequence[str]) -> None:
        """Finished games of ``match``, as :meth:`GameRecord.dumps` lines, for watchers."""
        live.add_live_games(self.redis, self.keys, match.ladder, match.id, lines)

    def end_live(self, match: Match) -> None:
        live.end_live(self.redis, self.keys, match.ladder, match.id)

    def live_matches(self, ladder: str) -> list[live.LiveMatch]:
        """The ladder's matches being played now, oldest first."""
        return live.live_matches(self.redis, self.keys, check_name("ladder", ladder),
                                 clock=self.clock)

    def live_match(self, match_id: str) -> tuple[Match, live.LiveMatch | None]:
        """A match, and how far it got if it is being played now."""
        match = self.get_match(match_id)
        return match, live.live_match(self.redis, self.keys, match.ladder, match.id)

    def live_games(self, match: Match, start: int = 0) -> list[GameRecord]:
        """The finished games of a match being played, from game ``start`` (0-based) on."""
        return live.live_games(self.redis, self.keys, match.ladder, match.id, start)

    def events_channel(self, ladder: str) -> str:
        """The pub/sub channel of the ladder's change events (JSON messages, see
        :mod:`tacocat.arena.standings`)."""
        return self.keys.events(check_name("ladder", ladder))

    # -- internals -----------------------------------------------------------------------------

    def _changed(self, ladder: str, event: str) -> None:
        """Announce a change of what plays, and ask the dispatcher to schedule."""
        self.redis.publish(self.keys.events(ladder),
                           dumps_json({"event": event, "ladder": ladder}))
        dispatch.request_tick(self.redis, self.keys, ladder)

    @staticmethod
    def _require_admin(actor: User, what: str) -> None:
        if not actor.admin:
            raise PermissionDenied(f"only admins may {what}; {actor.name!r} is not an admin")

    @staticmethod
    def _self_or_admin(actor: User, user: str | None, what: str) -> str:
        target = actor.name if user is None else check_name("user", user)
        if target != actor.name and not actor.admin:
            raise PermissionDenied(
                f"{actor.name!r} may {what} only for itself; for {target!r} ask an admin"
            )
        return target

    @staticmethod
    def _bot_ref(user: User, bot: str) -> tuple[str, str]:
        """``(owner, name)`` from ``name`` (the user's bot) or ``owner/name``."""
        if isinstance(bot, str) and "/" in bot:
            return split_bot_id(bot)
        return user.name, check_name("bot", bot)
