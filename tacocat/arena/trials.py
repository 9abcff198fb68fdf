"""Unrated SPRT tests on the arena's workers: "is my new version better than that one?"

A *trial* (the CLI calls it a test: ``tacocat test mybot.py --against mybot@3``; the code
says trial so that no module is mistaken for the test suite) plays a candidate version
against a baseline version in matches scheduled like ladder matches: duplicate pairs from a
secret seed, idempotent match ids, sandboxed on the workers, each recorded exactly once,
until the sequential test (:class:`tacocat.engine.sprt.Sprt`, pentanomial over the
pairs) accepts H0 or H1 or ``max_games`` are played. A trial touches no ladder key: it never
changes a rating, a standing, a ladder's counters or its results log.

Rules (enforced here, the facade):

- only a candidate's owner may create a trial of it; the baseline is any *active* version
  (the owner's own, or another bot's: versions are public, their code is not);
- the candidate may still be pending (just uploaded): the trial waits for its smoke test
  and fails if the smoke test rejects it;
- anyone may read a trial (like ladder matches); only its owner or an admin cancels it;
- cancelling (or a verdict) stops scheduling at once: matches still queued are skipped, a
  match being played finishes and its result is dropped, so the report is the one at the
  moment of the decision.

The Redis steps are :mod:`._trial_store`'s.
"""

from __future__ import annotations

from typing import Final

from tacocat.engine.sprt import Sprt
from tacocat.engine.stats import StatsError
from tacocat.models import BotVersion, MatchResult, Trial, TrialStatus, User, VersionStatus

from . import _trial_store as store
from ._area import unavailable
from .arena import Arena
from .errors import FailedPrecondition, InvalidArgument, PermissionDenied
from .ids import shown, split_version_id
from .ladders import DEFAULT_DECISION_SECONDS, check_settings
from .scheduler import DEFAULT_ORPHAN_GRACE, Enqueue, JobAlive
from .trial_models import TrialMatch, TrialMatchStatus, is_trial_match

__all__ = ["Trial", "TrialMatch", "TrialMatchStatus", "TrialStatus", "Trials", "is_trial_match",
           "make_sprt"]

DEFAULT_MAX_GAMES: Final = 20_000
DEFAULT_GAMES_PER_MATCH: Final = 20
MAX_GAMES: Final = 100_000
IN_FLIGHT: Final = 4
"""Matches of one trial queued or playing at once: enough to keep a few workers busy,
few enough that a verdict wastes little and ladders sharing the queue wait little."""
MAX_OPEN_TRIALS: Final = 5
"""Trials one user may have waiting or running at once (workers are shared)."""


def make_sprt(elo0: float, elo1: float, alpha: float, beta: float) -> Sprt:
    try:
        return Sprt(elo0, elo1, alpha, beta)
    except StatsError as exc:
        raise InvalidArgument(f"bad SPRT bounds: {exc}") from None


class Trials:
    """The trials of one :class:`Arena` (cheap: make one where needed)."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena
        self.redis = arena.redis
        self.keys = store.TrialKeys(arena.keys.prefix)

    # -- users' calls ----------------------------------------------------------------------

    @unavailable
    def create(self, actor: User, candidate: str, baseline: str, *, sprt: Sprt | None = None,
               max_games: int = DEFAULT_MAX_GAMES,
               games_per_match: int = DEFAULT_GAMES_PER_MATCH,
               decision_seconds: float = DEFAULT_DECISION_SECONDS) -> Trial:
        """Start a trial of ``candidate`` (the actor's version) against ``baseline``."""
        sprt = sprt or Sprt()
        # A ladder's bounds on matches and time: a test's matches are played the same way.
        check_settings(games_per_match, games_per_match, decision_seconds)
        if isinstance(max_games, bool) or not isinstance(max_games, int) or not (
                2 <= max_games <= MAX_GAMES and max_games % 2 == 0):
            raise InvalidArgument(f"the games of a test are an even number from 2 to "
                                  f"{MAX_GAMES:,}, got {shown(max_games)}")
        mine = self._version(candidate, "candidate")
        if mine.owner != actor.name:
            raise PermissionDenied(
                f"{mine.id} belongs to {mine.owner!r}; only its owner may test it. Test a "
                f"version of your own bot against it instead: --against {mine.id}")
        if mine.status is VersionStatus.REJECTED:
            raise FailedPrecondition(f"{mine.id} was rejected by its smoke test "
                                     f"({mine.reason}); fix the bot and submit it again")
        other = self._version(baseline, "baseline")
        if other.id == mine.id:
            raise InvalidArgument(f"a test needs two different versions; {mine.id} against "
                                  "itself can only measure noise")
        if other.status is not VersionStatus.ACTIVE:
            raise FailedPrecondition(
                f"the baseline {other.id} is {other.status.value}"
                + (f" ({other.reason})" if other.reason else "")
                + "; only versions that passed their smoke test can be tested against")
        if sum(1 for t in self.find(owner=actor.name) if t.status.open) >= MAX_OPEN_TRIALS:
            raise FailedPrecondition(
                f"{actor.name!r} has {MAX_OPEN_TRIALS} tests waiting or running already (the "
                "workers are shared); cancel one (`tacocat test --cancel ID`) or wait")
        trial = store.create(self.redis, self.keys, actor.name, mine.id, other.id, sprt,
                             max_games=max_games, games_per_match=games_per_match,
                             decision_seconds=float(decision_seconds), now=self.arena.clock())
        from . import dispatch  # noqa: PLC0415 - keeps this module's imports the facade's

        dispatch.request_tick(self.redis, self.arena.keys)
        return trial

    @unavailable
    def get(self, trial_id: str) -> Trial:
        return store.get(self.redis, self.keys, trial_id)

    @unavailable
    def find(self, *, owner: str | None = None, version: str | None = None,
             bot: str | None = None, count: int = 100) -> list[Trial]:
        """Newest first; only ``owner``'s, or those with ``version`` (or a version of
        ``bot``) on either side. Reads every trial: fine for thousands, not for millions."""
        return store.list_trials(self.redis, self.keys, owner=owner, version=version,
                                 bot=bot, count=count)

    @unavailable
    def cancel(self, actor: User, trial_id: str) -> Trial:
        """Stop scheduling (its owner or an admin); a trial that ended stays as it is."""
        trial = store.get(self.redis, self.keys, trial_id)
        if trial.owner != actor.name and not actor.admin:
            raise PermissionDenied(f"test {trial.id} belongs to {trial.owner!r}; only its "
                                   "owner (or an admin) may cancel it")
        return store.end(self.redis, self.keys, trial.id, TrialStatus.CANCELLED,
                         f"by {actor.name}", now=self.arena.clock())

    def events_channel(self, trial_id: str) -> str:
        return self.keys.events(trial_id)

    # -- the workers' calls -----------------------------------------------------------------

    @unavailable
    def get_match(self, match_id: str) -> TrialMatch:
        return store.get_match(self.redis, self.keys, match_id)

    @unavailable
    def tick(self, enqueue: Enqueue, *, job_alive: JobAlive | None = None,
             grace: float = DEFAULT_ORPHAN_GRACE) -> list[str]:
        """One dispatcher pass over the open trials: start those whose versions are ready,
        create and enqueue what is due, re-enqueue orphans; returns the enqueued ids."""
        enqueued = []
        for trial_id in store.open_trials(self.redis, self.keys):
            trial = self._advance(store.get(self.redis, self.keys, trial_id))
            if trial.status is TrialStatus.RUNNING:
                enqueued += self.schedule(trial.id, enqueue)
                if job_alive is not None:
                    enqueued += store.requeue_orphans(self.redis, self.keys, trial.id, enqueue,
                                                      job_alive, grace, self.arena.clock())
        return enqueued

    @unavailable
    def schedule(self, trial_id: str, enqueue: Enqueue) -> list[str]:
        """Create the trial's next matches (up to :data:`IN_FLIGHT` pending) and enqueue them."""
        created = store.create_matches(self.redis, self.keys, trial_id, IN_FLIGHT,
                                       now=self.arena.clock())
        for match_id in created:
            enqueue(match_id)
        return created

    @unavailable
    def record(self, match_id: str, result: MatchResult, *,
               enqueue: Enqueue | None = None) -> TrialMatchStatus | None:
        """Count a played match exactly once and decide; None for a duplicate, DROPPED if
        the trial had ended. With ``enqueue``, schedule what became due."""
        outcome = store.record(self.redis, self.keys, match_id, result, now=self.arena.clock())
        if enqueue is not None and outcome is TrialMatchStatus.RECORDED:
            self.schedule(store.get_match(self.redis, self.keys, match_id).trial, enqueue)
        return outcome

    # -- internals ----------------------------------------------------------------------------

    def _advance(self, trial: Trial) -> Trial:
        """A waiting trial starts once its candidate is active, fails if it was rejected."""
        if trial.status is not TrialStatus.WAITING:
            return trial
        candidate = self.arena.bots.version(trial.candidate)
        if candidate.status is VersionStatus.PENDING:
            return trial
        if candidate.status is VersionStatus.REJECTED:
            return store.end(self.redis, self.keys, trial.id, TrialStatus.FAILED,
                             f"{candidate.id} was rejected by its smoke test: "
                             f"{candidate.reason}", now=self.arena.clock())
        return store.start(self.redis, self.keys, trial.id)

    def _version(self, ref: str, what: str) -> BotVersion:
        split_version_id(ref)
        try:
            return self.arena.bots.version(ref)
        except LookupError:
            bot = ref.rpartition("@")[0]
            try:
                count = self.arena.bots.get(bot).versions
            except LookupError:
                raise store.not_found(f"no bot {bot!r} (the {what} {ref}); `tacocat bot "
                                      "list` shows the bots") from None
            raise store.not_found(
                f"no version {ref} (the {what}): {bot} has "
                + (f"versions 1 to {count}" if count > 1 else f"{count} version")
                + f"; `tacocat bot versions {bot}` lists them") from None
