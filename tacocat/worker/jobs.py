"""The RQ jobs: play one match (a ladder's or a trial's), smoke-test one new version.

A match job (:func:`play_match`, the body is :func:`run_match`):

1. load the match; anything but ``scheduled`` (recorded by an earlier run, or cancelled
   because a version retired) is skipped;
2. unpack both versions' uploads into a private temporary folder, one subfolder per bot;
3. start each bot once, sandboxed, pinned to this worker's core
   (:class:`~tacocat.worker.match.MatchPlayer`), and play ``match.schedule()`` (duplicate
   pairs) through the one match loop, ``batch`` games at once; faults forfeit games, never
   the job;
4. kill both bots' process groups and delete the folder;
5. ``arena.matches.record`` (exactly once: a duplicate run's result is dropped there), which
   also schedules what became due, enqueuing it here; then each bot's stderr, for its owner
   (a failure there costs the logs, never the match);
6. add the job's time split (games, bot starts, recording) to the worker counters, and
   its bots' failures, unless another run recorded the match first (a refused duplicate
   changes no failure count and no bot's stats).

The worker process calls :func:`configure` once; the forked work horses inherit it. With
metrics on, its :class:`JobContext` carries the process's
:class:`~tacocat.worker.metrics.WorkerMetrics`: the jobs time every sandboxed decision
(the seats' ``on_decision``) and the standings refit (``arena.matches.record``'s ``on_refit``).
"""

from __future__ import annotations

import logging
import os
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from redis import Redis
from rq import get_current_job

from tacocat.arena import (
    Arena,
    ArenaError,
    MatchResult,
    MatchStatus,
    NotFound,
    VersionStatus,
    unpack,
)
from tacocat.arena.trials import TrialMatchStatus, Trials, TrialStatus, is_trial_match
from tacocat.engine import (
    STANDARD,
    GameRecord,
    MatchGame,
    Reason,
    Ruleset,
    ScheduledGame,
    duplicate_pairs,
)
from tacocat.protocol import MAX_BATCH
from tacocat.protocol.manifest import ManifestError, check_executable, load_manifest

from . import progress
from ._folders import match_folder
from .bounds import MatchTimeouts, stall_seconds
from .build import BuildFailedError, BuildLimits, build_bot, unpack_built
from .errors import LanguageUnavailableError, SandboxUnavailableError
from .launch import BotSpec, Launcher
from .match import MatchPlayer, MatchRun
from .queue import MatchQueue, stats_key
from .settings import MIB, WorkerSettings

if TYPE_CHECKING:
    from .metrics import WorkerMetrics

log = logging.getLogger("tacocat.worker")

HOUSE_PREFIX: Final = "house:"


@dataclass(frozen=True)
class JobContext:
    """What a job needs from its worker process."""

    settings: WorkerSettings = field(default_factory=WorkerSettings)
    launcher: Launcher = field(default_factory=Launcher)
    worker: str = field(default_factory=lambda: f"{socket.gethostname()}:{os.getpid()}")
    metrics: WorkerMetrics | None = None
    """Where decision and refit times go (None: not measured)."""


_context = JobContext()


def configure(context: JobContext) -> None:
    """Set this process's job context (the worker process does, before its first job)."""
    global _context
    _context = context


def context() -> JobContext:
    return _context


# -- RQ entry points ---------------------------------------------------------------------------


def play_match(match_id: str) -> dict[str, Any]:
    """RQ job: play and record one match (see the module docs); a trial's match (an
    unrated test, :func:`run_trial_match`) has the same job, ids and lease."""
    arena, queue = _job_arena()
    if is_trial_match(match_id):
        report = run_trial_match(arena, queue, match_id, _context)
        return report.to_json()
    return run_match(arena, queue, match_id, _context).to_json()


def smoke_test(version_id: str) -> dict[str, Any]:
    """RQ job: play a new version against a house bot; activate it or reject it."""
    arena, _ = _job_arena()
    return run_smoke_test(arena, version_id, _context).to_json()


def _job_arena() -> tuple[Arena, MatchQueue]:
    job = get_current_job()
    if job is None:
        raise RuntimeError("tacocat.worker jobs run inside an RQ worker; call run_match or "
                           "run_smoke_test directly otherwise")
    redis: Redis = job.connection
    settings = _context.settings
    arena = Arena(redis, prefix=settings.prefix)
    return arena, MatchQueue(
        redis, prefix=settings.prefix, match_queue=settings.match_queue,
        smoke_queue=settings.smoke_queue, job_timeout=settings.job_timeout,
        match_timeout=MatchTimeouts(arena, settings))


# -- matches -----------------------------------------------------------------------------------


@dataclass
class MatchReport:
    """What one match job did (its RQ return value, as JSON)."""

    match: str
    outcome: str
    """``recorded``, ``duplicate`` (another run recorded it first) or ``skipped``."""
    detail: str = ""
    games: int = 0
    seconds: float = 0.0
    game_seconds: float = 0.0
    bot_start_seconds: float = 0.0
    record_seconds: float = 0.0
    wins: int = 0
    ties: int = 0
    losses: int = 0
    forfeits: Mapping[str, Mapping[str, int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v)
                for k, v in self.__dict__.items()}


def run_match(arena: Arena, queue: MatchQueue | None, match_id: str,
              ctx: JobContext | None = None) -> MatchReport:
    """Play and record ``match_id`` (the body of :func:`play_match`, callable directly).

    ``queue`` receives the matches that recording makes due (None: the dispatcher's tick
    picks them up instead).
    """
    ctx = ctx or _context
    settings = ctx.settings
    metrics = ctx.metrics
    started = time.perf_counter()
    try:
        match = arena.matches.get(match_id)
    except NotFound:
        return MatchReport(match_id, "skipped", "no such match")
    if match.status is not MatchStatus.SCHEDULED:
        return MatchReport(match_id, "skipped", f"the match is {match.status.value}")
    ladder = arena.ladders.get(match.ladder)
    _watched(arena.live.start, match, ctx.worker)
    feed = _LiveFeed(lambda lines: _watched(arena.live.add_games, match, lines))
    played = play_versions(arena, ctx, match.a, match.b, match.schedule(), ladder.ruleset,
                           ladder.decision_seconds, ladder.batch, on_game=feed.add,
                           on_progress=feed.tick)
    feed.flush()
    recording = time.perf_counter()
    result = MatchResult.from_records(played.records, match.a, match.b,
                                      recording - started, a_seats=played.a_seats,
                                      worker=ctx.worker, keep_replays=settings.keep_replays,
                                      lines=feed.lines)
    done = arena.matches.record(match.id, result,
                                enqueue=queue.enqueue_match if queue is not None else None,
                                on_refit=metrics.observe_refit if metrics is not None else None)
    if done.recorded:  # a duplicate run's logs are not the recorded games'
        _watched(arena.matches.store_logs, match.id, dict(zip("ab", played.logs, strict=True)))
    _watched(arena.live.end, match)
    ended = time.perf_counter()
    report = MatchReport(
        match.id, "recorded" if done.recorded else "duplicate",
        "" if done.recorded else "another run recorded this match first",
        len(played.records), ended - started, played.timings.games,
        played.timings.bot_start, ended - recording, result.wins, result.ties,
        result.losses, {"a": result.forfeits("a"), "b": result.forfeits("b")},
    )
    _count(arena, played, report)
    _log_match(match.a, match.b, played, report)
    return report


def play_versions(arena: Arena, ctx: JobContext, a: str, b: str,
                  schedule: Sequence[ScheduledGame], rules: Ruleset, time_limit: float,
                  batch: int, on_game: Callable[[MatchGame], None] | None = None,
                  on_progress: Callable[[], None] | None = None) -> MatchRun:
    """Play ``schedule`` between the stored versions ``a`` and ``b``, each unpacked into a
    private folder and sandboxed (ladder and trial matches alike). ``on_game`` gets each
    game as it ends, ``on_progress`` is called after every decision answered (or failed)."""
    settings = ctx.settings
    timed = _decision_hook(ctx.metrics.observe_decision if ctx.metrics is not None else None,
                           on_progress)
    batch = min(batch or settings.batch, MAX_BATCH)
    with match_folder() as folder:
        bots = [_unpack(arena, version, Path(folder) / side, ctx)
                for version, side in ((a, "a"), (b, "b"))]
        progress.expect(stall_seconds(time_limit, batch=batch,
                                      startup_timeout=settings.startup_timeout,
                                      margin=settings.stall_margin))
        with MatchPlayer(ctx.launcher, bots[0], bots[1], rules, time_limit=time_limit,
                         max_strikes=settings.max_strikes,
                         bank_limits_per_game=settings.bank_limits_per_game,
                         batch=batch,
                         startup_timeout=settings.startup_timeout,
                         on_decision=timed) as player:
            return player.play(schedule, on_game=on_game)


def _decision_hook(timed: Callable[[float], None] | None,
                   on_progress: Callable[[], None] | None) -> Callable[[float], None]:
    """The seats' per-decision callback: the metrics' timer, the horse's beat for its
    worker (:mod:`tacocat.worker.progress`), then ``on_progress``."""
    beat = progress.beat

    def hook(seconds: float) -> None:
        if timed is not None:
            timed(seconds)
        beat()
        if on_progress is not None:
            on_progress()

    return hook


LIVE_SEND_SECONDS: Final = 0.25
"""How long a finished game waits for the live copy: until this long after the last send,
at the next game's end or the next decision after that (watchers see it about that much
later), and never past the match's end."""


class _LiveFeed:
    """A match's finished games for watchers, sent together: at most every
    :data:`LIVE_SEND_SECONDS` (the first at once), by :meth:`tick` (called after every
    decision, so that a game held back is not kept waiting for the next game's end, which
    can be a whole game away) and the rest by :meth:`flush`.

    Batched games end in bursts, and a transaction per game cost the job a Redis round trip
    and, with its JSON made twice (the live copy, then the replays), about 0.3 ms of every
    game. The lines made here serve the replays too (``MatchResult.from_records(lines=)``).
    """

    def __init__(self, send: Callable[[list[str]], None],
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.lines: dict[int, tuple[GameRecord, str]] = {}
        self._send = send
        self._clock = clock
        self._pending: list[str] = []
        self._sent_at = -LIVE_SEND_SECONDS

    def add(self, game: MatchGame) -> None:
        line = game.record.dumps()
        self.lines[id(game.record)] = (game.record, line)
        self._pending.append(line)
        self.tick()

    def tick(self) -> None:
        """Send what is held back once :data:`LIVE_SEND_SECONDS` have passed."""
        if self._pending and self._clock() - self._sent_at >= LIVE_SEND_SECONDS:
            self.flush()

    def flush(self) -> None:
        if self._pending:
            lines, self._pending = self._pending, []
            self._sent_at = self._clock()
            self._send(lines)


def _watched(step: Callable[..., None], *args: Any) -> None:
    """A step of the live copy for watchers: a failure there must never cost the match."""
    try:
        step(*args)
    except ArenaError as exc:
        log.warning("live view of a match: %s (the match goes on and will be recorded; only "
                    "its watchers miss this update)", exc)


def _unpack(arena: Arena, version_id: str, folder: Path, ctx: JobContext) -> BotSpec:
    """Write a version's upload into ``folder`` (readable by the sandbox's own uid: the
    parent temporary folder stays private to the worker). A trusted owner's bot (the
    operator's own code, ``WorkerSettings.trusted_owners``) runs outside the sandbox."""
    folder.mkdir(mode=0o755)
    version = arena.bots.version(version_id)
    trusted = version.owner in ctx.settings.trusted_owners
    if not trusted and ctx.settings.sandbox and ctx.settings.sandbox_problem:
        # The host's fault, not the bot's: the job fails (nothing recorded, nobody blamed)
        # and the match or smoke test waits for a worker that can sandbox it.
        raise SandboxUnavailableError(
            f"{version_id} not started: this worker cannot sandbox submitted bots "
            f"({ctx.settings.sandbox_problem}); it waits for a worker that can")
    unpack(version.kind, arena.bots.source(version_id), folder)
    for path in folder.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    folder.chmod(0o755)
    try:
        manifest = load_manifest(folder)
    except ManifestError as exc:  # validated on upload: only an upload from before that
        raise BuildFailedError(str(exc)) from None
    if manifest.is_python:
        return BotSpec(version_id, folder, trusted=trusted)
    missing = manifest.missing_programs()
    if missing:  # the host's fault: the job fails, a worker that has them takes it
        raise LanguageUnavailableError(
            f"{version_id} not started: this worker lacks {', '.join(missing)} for "
            f"{manifest.language} bots (`tacocat worker --check` lists its languages)")
    if manifest.build:
        built = arena.bots.build(version_id)
        limits = BuildLimits(seconds=ctx.settings.build_seconds,
                             folder_bytes=ctx.settings.build_mb * MIB)
        if built is not None:
            unpack_built(built, folder, limits)
        else:
            # A build answers no decision: the horse's stall watch must wait for it.
            progress.expect(limits.seconds + ctx.settings.stall_margin)
            try:
                done = build_bot(ctx.launcher, folder, manifest, trusted=trusted, limits=limits)
            except BuildFailedError as exc:
                arena.bots.store_build(version_id, None, exc.log)
                raise
            arena.bots.store_build(version_id, done.files, done.log)
    program = folder / manifest.command[0]
    if manifest.command[0].startswith("./") and program.is_file():
        program.chmod(0o755)  # a zip's modes are not kept: the command's file must run
    try:
        check_executable(folder, manifest)
    except ManifestError as exc:
        raise BuildFailedError(str(exc)) from None
    return BotSpec(version_id, folder, trusted=trusted, command=manifest.command)


def _count(arena: Arena, played: MatchRun, report: MatchReport) -> None:
    pipe = arena.redis.pipeline(transaction=False)
    key = stats_key(arena.keys.prefix)
    pipe.hincrby(key, "matches", 1)
    pipe.hincrby(key, "games", report.games)
    pipe.hincrbyfloat(key, "match_seconds", report.seconds)
    pipe.hincrbyfloat(key, "game_seconds", report.game_seconds)
    pipe.hincrbyfloat(key, "bot_start_seconds", report.bot_start_seconds)
    pipe.hincrbyfloat(key, "bot_stop_seconds", played.timings.bot_stop)
    pipe.hincrbyfloat(key, "record_seconds", report.record_seconds)
    pipe.hincrby(key, "bot_starts", played.timings.starts)
    if report.outcome == "duplicate":
        pipe.hincrby(key, "duplicates", 1)
    # A run refused as a late duplicate (another run recorded the match first; it was often
    # late because its host paused or lost it) blames no bot: its games count for nothing,
    # and so do its faults. Its time above is work this worker did, blaming no one.
    for side in played.sides if report.outcome == "recorded" else ():
        for failure in side.failures:
            pipe.hincrby(key, f"failures:{failure.fault.value}", 1)
        if side.gave_up is not None:
            pipe.hincrby(key, "gave_up", 1)
    pipe.execute()


def _log_match(a: str, b: str, played: MatchRun, report: MatchReport) -> None:
    faults = [f"{side.name} {', '.join(f'{f.fault.value}' for f in side.failures)}"
              + (" (gave up)" if side.gave_up else "")
              for side in played.sides if side.failures]
    faults_word = "; failures (not counted: a duplicate's games count for nothing): " \
        if report.outcome == "duplicate" else "; failures: "
    log.info("%s %s: %s vs %s, %d games, A %d-%d-%d (W-T-L) in %.2f s (games %.2f s, "
             "bot starts %.2f s, recording %.2f s)%s", report.outcome, report.match, a, b,
             report.games, report.wins, report.ties, report.losses, report.seconds,
             report.game_seconds, report.bot_start_seconds, report.record_seconds,
             faults_word + "; ".join(faults) if faults else "")


# -- a trial's match ---------------------------------------------------------------------------


def run_trial_match(arena: Arena, queue: MatchQueue | None, match_id: str,
                    ctx: JobContext | None = None) -> MatchReport:
    """Play and record one match of a trial (an unrated SPRT test, :mod:`tacocat.arena.trials`);
    ``queue`` gets the trial's next matches.

    It runs as a ladder's match does (same RQ job, job id, lease and orphan re-runs:
    :func:`play_match` hands trial match ids here), plays through the same sandboxed
    :func:`play_versions`, and records through :meth:`Trials.record
    <tacocat.arena.trials.Trials.record>`, exactly once, never into a ladder. A match whose
    trial ended (verdict, cancel) before it started is skipped; one that ends while it plays
    is dropped at recording.
    """
    ctx = ctx or _context
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


# -- smoke tests -------------------------------------------------------------------------------


@dataclass
class SmokeReport:
    version: str
    outcome: str
    """``activated``, ``rejected`` or ``skipped`` (already decided)."""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


def run_smoke_test(arena: Arena, version_id: str, ctx: JobContext | None = None) -> SmokeReport:
    """Play ``settings.smoke_games`` games of the new version against the house bot, through
    the same sandboxed host path as a match; activate it, or reject it with the first
    forfeit's reason. A house bot that fails raises (the worker is broken, not the bot)."""
    ctx = ctx or _context
    settings = ctx.settings
    try:
        version = arena.bots.version(version_id)
    except NotFound:
        return SmokeReport(version_id, "skipped", "no such version")
    if version.status is not VersionStatus.PENDING:
        return SmokeReport(version_id, "skipped", f"already {version.status.value}")
    house = HOUSE_PREFIX + settings.smoke_opponent
    with match_folder("smoke") as folder:
        try:
            candidate = _unpack(arena, version_id, Path(folder) / "bot", ctx)
        except BuildFailedError as exc:
            return _reject(arena, version_id, f"{exc.reason} (the build's log is the owner's: "
                                              f"`tacocat bot build-log {version_id}`)")
        empty = Path(folder) / "house"
        empty.mkdir(mode=0o755)
        opponent = BotSpec(house, empty, house, trusted=True)
        timed = ctx.metrics.observe_decision if ctx.metrics is not None else None
        with MatchPlayer(ctx.launcher, candidate, opponent, STANDARD,
                         time_limit=settings.smoke_decision_seconds, max_strikes=1,
                         bank_limits_per_game=settings.bank_limits_per_game,
                         batch=settings.smoke_games, startup_timeout=settings.startup_timeout,
                         on_decision=timed) as player:
            played = player.play(duplicate_pairs(settings.smoke_games, f"smoke/{version_id}"))
    _, house_side = played.sides
    if house_side.failures:
        raise RuntimeError(f"the smoke test's {house} failed, which is the worker's problem: "
                           f"{house_side.failures[0].fault.value}: "
                           f"{house_side.failures[0].detail}")
    problem = _first_forfeit(played)
    if problem:
        return _reject(arena, version_id, problem)
    pipe = arena.redis.pipeline(transaction=False)
    pipe.hincrby(stats_key(arena.keys.prefix), "smoke_tests", 1)
    arena.bots.activate(version_id)
    pipe.execute()
    log.info("activated %s (smoke test: %d clean games against %s)", version_id,
             len(played.records), house)
    return SmokeReport(version_id, "activated")


def _reject(arena: Arena, version_id: str, problem: str) -> SmokeReport:
    arena.bots.reject(version_id, problem)
    pipe = arena.redis.pipeline(transaction=False)
    pipe.hincrby(stats_key(arena.keys.prefix), "smoke_tests", 1)
    pipe.hincrby(stats_key(arena.keys.prefix), "smoke_rejected", 1)
    pipe.execute()
    log.info("rejected %s: %s", version_id, problem)
    return SmokeReport(version_id, "rejected", problem)


def _first_forfeit(played: MatchRun) -> str:
    """The candidate's first forfeit as a reason its owner can act on, or ''."""
    for index, (record, a_seat) in enumerate(zip(played.records, played.a_seats, strict=True)):
        outcome = record.result
        if outcome.reason is Reason.FORFEIT and outcome.offender == a_seat:
            # The reason is public (bot pages): the bot's own words stay out of it, so say
            # where its owner sees them.
            return (f"smoke game {index + 1} against {played.sides[1].name}: "
                    f"{outcome.detail} (`tacocat play BOT {played.sides[1].name} --logs DIR` "
                    "shows what it printed, tracebacks included)")
        if outcome.reason is Reason.ABORTED:
            return f"smoke game {index + 1} aborted: {outcome.detail}"
    return ""
