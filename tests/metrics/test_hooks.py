"""The decision and refit histograms are fed by explicit hooks, observed for real.

Each test plays real games (a live client over gRPC against the referee, sandboxed bot
processes in a match job) with the metrics handed in explicitly on a fresh registry, then
reads the values back from that registry: one observation per decision, from the request to
the answer, a failed decision (a timeout) included; one per standings refit.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import grpc.aio
import pytest
import redis as redis_py
from prometheus_client import REGISTRY, CollectorRegistry

from tacocat.arena import MatchStatus
from tacocat.engine import STANDARD, Fault, Observation, duplicate_pairs
from tacocat.engine.bots import GreedyBot
from tacocat.sdk import connect
from tacocat.server import FinishedGame, RecordLog, RefereeConfig, RefereeService
from tacocat.server.metrics import ServerMetrics
from tacocat.worker import BotSpec, JobContext, Launcher, MatchPlayer, WorkerSettings, run_match
from tacocat.worker.metrics import WorkerMetrics
from tests.live_referee import ThreadReferee
from tests.server.test_referee import observations_by_seat
from tests.worker.worker_helpers import SANDBOX, good_bot, make_field, source

pytestmark = pytest.mark.timeout(90)

LIVE = {"transport": "live"}
SANDBOXED = {"transport": "sandbox"}


def live_decisions(games: Sequence[FinishedGame]) -> int:
    """Decisions the live seats made in ``games`` (replayed from the records)."""
    total = 0
    for game in games:
        seen = observations_by_seat(game.record)
        total += sum(len(seen[seat]) for seat in (0, 1) if game.live_seats[seat])
    return total


class ServiceThread:
    """A bare :class:`RefereeService` (no :class:`RefereeServer`) with the given metrics, on
    an event loop in a daemon thread."""

    def __init__(self, metrics: ServerMetrics, time_limit: float) -> None:
        self.records = RecordLog()
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

        async def start() -> tuple[grpc.aio.Server, int]:
            service = RefereeService(RefereeConfig(port=0, time_limit=time_limit), None,
                                     [self.records], metrics=metrics)
            server = grpc.aio.server()
            server.add_generic_rpc_handlers((service.handler(),))
            port = server.add_insecure_port("127.0.0.1:0")
            await server.start()
            return server, port

        self.server, port = self.call(start())
        self.address = f"127.0.0.1:{port}"

    def call(self, coroutine: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(30)

    def close(self) -> None:
        self.call(self.server.stop(0))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


@pytest.fixture
def fresh_referee() -> Iterator[tuple[ServiceThread, CollectorRegistry]]:
    registry = CollectorRegistry()
    referee = ServiceThread(ServerMetrics(registry), time_limit=0.3)
    yield referee, registry
    referee.close()


class SlowFirst(GreedyBot):
    """Greedy, but sleeps ``delay`` seconds before its first decision (past the limit)."""

    def __init__(self, delay: float) -> None:
        super().__init__()
        self.delay = delay
        self.slept = False

    def _first(self) -> None:
        if not self.slept:
            self.slept = True
            time.sleep(self.delay)

    def replace(self, obs: Observation) -> Sequence[int]:
        self._first()
        return super().replace(obs)

    def duel(self, obs: Observation) -> int:
        self._first()
        return super().duel(obs)


# -- live: the referee's seats --------------------------------------------------------------


def test_every_live_decision_is_observed_on_the_referees_registry(
        fresh_referee: tuple[ServiceThread, CollectorRegistry]) -> None:
    referee, registry = fresh_referee
    assert registry.get_sample_value("tacocat_decision_seconds_count", LIVE) == 0
    results = connect(GreedyBot(), referee.address, games=2, opponent="house:greedy")
    assert len(results) == 2
    games = referee.records.games()
    decisions = live_decisions(games)
    assert decisions > 20  # a game is about 75 decisions, about half of them the client's
    assert registry.get_sample_value("tacocat_decision_seconds_count", LIVE) == decisions
    seconds = registry.get_sample_value("tacocat_decision_seconds_sum", LIVE)
    assert seconds is not None and 0 < seconds < decisions * 0.3
    # The house bot (an InProcessSeat) and the sandbox transport are not observed here.
    assert registry.get_sample_value("tacocat_decision_seconds_count", SANDBOXED) is None


def test_a_live_timeout_is_observed_as_a_decision(
        fresh_referee: tuple[ServiceThread, CollectorRegistry]) -> None:
    referee, registry = fresh_referee
    connect(SlowFirst(0.8), referee.address, games=1, opponent="house:greedy")
    (game,) = referee.records.games()
    assert game.record.result.fault is Fault.TIMEOUT
    # One decision: the one that timed out (the game ended there), after the 0.3 s limit.
    assert registry.get_sample_value("tacocat_decision_seconds_count", LIVE) == 1
    seconds = registry.get_sample_value("tacocat_decision_seconds_sum", LIVE)
    assert seconds is not None and 0.299 <= seconds < 0.8
    assert registry.get_sample_value("tacocat_decision_seconds_bucket",
                                     {**LIVE, "le": "0.25"}) == 0


def test_the_referee_server_observes_live_decisions_on_the_default_registry() -> None:
    """``RefereeServer`` (what ``tacocat serve`` runs) hands its referee the process-wide
    :func:`~tacocat.server.metrics.server_metrics`, exported on the default registry."""
    referee = ThreadReferee(time_limit=0.3)
    try:
        before = REGISTRY.get_sample_value("tacocat_decision_seconds_count", LIVE) or 0.0
        connect(GreedyBot(), referee.address, games=2, opponent="house:greedy")
        decisions = live_decisions(referee.server.records.games())
    finally:
        referee.stop()
    assert decisions > 20
    after = REGISTRY.get_sample_value("tacocat_decision_seconds_count", LIVE)
    assert after == before + decisions


def test_a_referee_server_given_metrics_reports_there_only() -> None:
    registry = CollectorRegistry()
    referee = ThreadReferee(metrics=ServerMetrics(registry), time_limit=0.3)
    try:
        before = REGISTRY.get_sample_value("tacocat_decision_seconds_count", LIVE)
        connect(GreedyBot(), referee.address, games=2, opponent="house:greedy")
        decisions = live_decisions(referee.server.records.games())
    finally:
        referee.stop()
    assert decisions > 20
    assert registry.get_sample_value("tacocat_decision_seconds_count", LIVE) == decisions
    assert REGISTRY.get_sample_value("tacocat_decision_seconds_count", LIVE) == before


# -- sandbox: a match job's bot processes, and the refit -------------------------------------


SETTINGS = WorkerSettings(lease=3, sandbox=SANDBOX)

SLOW_FIRST_DUEL = source("""
    import time

    from tacocat.engine.bots import GreedyBot


    class SlowFirstDuel(GreedyBot):
        slept = False

        def duel(self, obs):
            if not self.slept:
                self.slept = True
                time.sleep(2.0)
            return super().duel(obs)
""")


def _context(metrics: WorkerMetrics | None) -> JobContext:
    return JobContext(SETTINGS, Launcher(SETTINGS.sandbox_policy(), sandbox=SANDBOX), "test",
                      metrics)


def test_a_match_job_observes_every_sandboxed_decision_and_the_refit(
        redis: redis_py.Redis) -> None:
    registry = CollectorRegistry()
    metrics = WorkerMetrics(registry)
    field = make_field(redis)
    arena = field.arena
    arena.ladders.create(field.admin, "main", games_per_pairing=4, games_per_match=4)
    for owner, bot, base in (("ann", "greedy", "GreedyBot"), ("bob", "random", "RandomBot")):
        arena.bots.activate(field.submit(owner, bot, good_bot(owner, base)))
        field.join(owner, bot, "main")
    (match,) = arena.matches.schedule("main", lambda job: None)

    report = run_match(arena, None, match.id, _context(metrics))

    assert report.outcome == "recorded" and report.games == 4
    records = arena.matches.replays(match.id)
    decisions = sum(len(seen) for r in records for seen in observations_by_seat(r).values())
    assert decisions > 40
    # Both sides are bot processes: every one of their decisions is observed, nothing else.
    assert registry.get_sample_value("tacocat_decision_seconds_count", SANDBOXED) == decisions
    assert registry.get_sample_value("tacocat_decision_seconds_count", LIVE) is None
    assert registry.get_sample_value("tacocat_rating_recompute_seconds_count") == 1
    refit = registry.get_sample_value("tacocat_rating_recompute_seconds_sum")
    assert refit is not None and refit > 0

    # A second run of the recorded match is skipped: no games, no refit.
    assert arena.matches.get(match.id).status is MatchStatus.RECORDED
    assert run_match(arena, None, match.id, _context(metrics)).outcome == "skipped"
    assert registry.get_sample_value("tacocat_decision_seconds_count", SANDBOXED) == decisions
    assert registry.get_sample_value("tacocat_rating_recompute_seconds_count") == 1


def test_a_sandboxed_timeout_is_observed_as_a_decision(tmp_path: Path) -> None:
    def bot(name: str, data: bytes) -> BotSpec:
        folder = tmp_path / name
        folder.mkdir(mode=0o755)
        (folder / "bot.py").write_bytes(data)
        (folder / "bot.py").chmod(0o644)
        return BotSpec(name, folder)

    seconds: list[float] = []
    with MatchPlayer(_context(None).launcher, bot("good@1", good_bot("good")),
                     bot("slow@1", SLOW_FIRST_DUEL), STANDARD, time_limit=0.3,
                     max_strikes=1, on_decision=seconds.append) as player:
        played = player.play(duplicate_pairs(1, "timeout"))
    (record,) = played.records
    assert record.result.fault is Fault.TIMEOUT
    # Clean decisions take milliseconds; the one that timed out took the limit.
    slow = [s for s in seconds if s >= 0.25]
    assert len(slow) == 1 and 0.299 <= slow[0] < 2.0, seconds
    assert len(seconds) > 1
