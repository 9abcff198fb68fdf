"""The chaos ladder: bots submitted to an arena on a cluster, a ladder they play, and what
the arena holds afterwards (:class:`Counts`).

The promise checked is the arena's: every scheduled match recorded exactly once (``lost``
and ``double_counted`` zero) and the leaderboard's game count equal to matches x games,
whatever happened to the workers, the network or Redis.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any, Final

from tacocat.arena import Arena, User, VersionStatus
from tacocat.arena.recording import read_log
from tacocat.worker.queue import worker_stats

from .cluster import Cluster, reply_text
from .procs import ChaosError, wait_for

LADDER: Final = "chaos"


def bot_source(tag: str, delay: float) -> bytes:
    """A greedy bot that takes ``delay`` seconds per decision (a match lasts long enough
    for a fault to land inside it)."""
    return (f"import time\n\nfrom tacocat.engine.bots import GreedyBot\n\n\n"
            f"class Chaos(GreedyBot):\n    label = {tag!r}\n\n"
            f"    def replace(self, obs):\n        time.sleep({delay})\n"
            f"        return super().replace(obs)\n\n"
            f"    def attack(self, obs):\n        time.sleep({delay})\n"
            f"        return super().attack(obs)\n").encode()


@dataclass(frozen=True)
class LadderSpec:
    bots: int = 3
    games_per_pairing: int = 24
    games_per_match: int = 8
    delay: float = 0.002
    """Seconds per bot decision: with the default, a match lasts about a second."""
    smoke: bool = True
    """Smoke-test the bots through the workers (False: activate them at once; quicker)."""

    @property
    def matches(self) -> int:
        pairs = self.bots * (self.bots - 1) // 2
        return pairs * (self.games_per_pairing // self.games_per_match)

    @property
    def games(self) -> int:
        return self.matches * self.games_per_match


@dataclass
class Counts:
    """One fault's figures (the JSON line of ``tacocat bench chaos``)."""

    fault: str
    injections: int = 0
    scheduled: int = 0
    expected: int = 0
    recorded: int = 0
    duplicates_refused: int = 0
    lost: int = 0
    double_counted: int = 0
    games_in_leaderboard: int = 0
    games_expected: int = 0
    recovery_seconds: list[float] = field(default_factory=list)
    seconds: float = 0.0
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return (self.lost == 0 and self.double_counted == 0 and self.recorded == self.expected
                and self.games_in_leaderboard == self.games_expected)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["recovery_seconds"] = [round(s, 2) for s in self.recovery_seconds]
        data["recovery_max"] = round(max(self.recovery_seconds), 2) \
            if self.recovery_seconds else None
        data["seconds"] = round(self.seconds, 1)
        return data


class Ladder:
    """The chaos ladder on a cluster: bots submitted and smoke-tested, then joined."""

    def __init__(self, cluster: Cluster, spec: LadderSpec) -> None:
        self.cluster = cluster
        self.arena: Arena = cluster.arena
        self.spec = spec
        self.started = 0.0
        self.duplicates_before = 0.0
        self.tokens: list[str] = []

    def start(self, *, timeout: float = 90) -> None:
        arena = self.arena
        # ``tacocat serve`` on the serve host made the admin already and saved its token.
        token = arena.users.bootstrap_admin() or self.cluster.admin_token()
        admin = arena.users.authenticate(token)
        arena.ladders.create(admin, LADDER, games_per_pairing=self.spec.games_per_pairing,
                             games_per_match=self.spec.games_per_match, decision_seconds=2.0)
        users: list[User] = []
        for i in range(self.spec.bots):
            arena.users.create(admin, f"u{i}")
            self.tokens.append(arena.users.create_token(admin, f"u{i}"))
            users.append(arena.users.authenticate(self.tokens[-1]))
        versions = [arena.bots.submit(user, "bot", "bot.py",
                                      bot_source(f"b{i}", self.spec.delay)).id
                    for i, user in enumerate(users)]

        def decided() -> bool:
            states = [arena.bots.version(v) for v in versions]
            rejected = [v for v in states if v.status is VersionStatus.REJECTED]
            if rejected:
                raise ChaosError(f"{rejected[0].id} was rejected: {rejected[0].reason}")
            return all(v.status is VersionStatus.ACTIVE for v in states)

        if not self.spec.smoke:
            for version in versions:
                arena.bots.activate(version)
        wait_for(decided, timeout, "the smoke tests", interval=0.1)
        self.duplicates_before = worker_stats(self.cluster.redis).get("duplicates", 0.0)
        self.started = time.monotonic()
        for user in users:
            arena.ladders.join(user, "bot", LADDER)

    def recorded(self) -> int:
        return int(self.cluster.redis.hget(self.arena.keys.counters(LADDER), "results") or 0)

    def done(self) -> bool:
        return self.recorded() >= self.spec.matches and \
            self.arena.ladders.status(LADDER).matches_pending == 0

    def wait_done(self, timeout: float) -> None:
        try:
            wait_for(self.done, timeout, f"the ladder's {self.spec.matches} matches",
                     interval=0.1)
        except ChaosError as exc:
            raise ChaosError(f"{exc}; unrecorded: {self.diagnose()}; {self.situation()}") \
                from None

    def situation(self) -> str:
        """What a stuck ladder's cluster looks like: the ladder's counters, the dispatcher
        lock, each host's processes and the end of its log (when nothing is pending, the
        question is who should have scheduled the next round)."""
        from tacocat.worker.dispatcher import lock_key  # noqa: PLC0415

        redis = self.cluster.redis
        counters = {reply_text(k): reply_text(v)
                    for k, v in redis.hgetall(self.arena.keys.counters(LADDER)).items()}
        lock = lock_key(self.arena.keys.prefix)
        holder = redis.get(lock)
        lines = [f"counters {counters}",
                 f"dispatcher lock {reply_text(holder) if holder else None} "
                 f"(ttl {redis.pttl(lock)} ms)"]
        for host in self.cluster.workers.values():
            tail = host.text.splitlines()[-8:]
            lines.append(f"{host.host}: supervisor {host.supervisor}, rq workers "
                         f"{host.rq_workers()}, starts {host.starts}; log ends: "
                         + " | ".join(tail))
        return "; ".join(lines)

    def diagnose(self) -> list[dict[str, Any]]:
        """The matches not yet recorded, with what RQ and the leases say of their jobs."""
        from rq.job import Job  # noqa: PLC0415

        from tacocat.worker.queue import MATCH_QUEUE, match_job_id  # noqa: PLC0415

        redis, keys = self.cluster.redis, self.arena.keys
        queued = {reply_text(m) for m in redis.lrange(f"rq:queue:{MATCH_QUEUE}", 0, -1)}
        leases = self.cluster.leases()
        found = []
        for raw in redis.zrange(keys.pending(LADDER), 0, -1):
            match = reply_text(raw)
            job = match_job_id(match)
            status = redis.hget(Job.key_for(job), "status")
            found.append({"match": match, "job_status": reply_text(status) if status else None,
                          "in_queue": job in queued, "lease": leases.get(match)})
        return found

    def wait_recorded(self, matches: list[str], timeout: float) -> float:
        """Wait until every one of ``matches`` is recorded; returns when (wall clock)."""
        return wait_for(lambda: recorded_at(self, matches), timeout,
                        f"matches {matches} to be recorded")

    def counts(self, fault: str) -> Counts:
        """Count what the arena holds now (call after :meth:`wait_done`, or after a deadline:
        whatever is missing then counts as lost)."""
        redis, keys, spec = self.cluster.redis, self.arena.keys, self.spec
        log = read_log(redis, keys, LADDER)
        distinct = {e.match for e in log}
        status = self.arena.ladders.status(LADDER)
        board = self.arena.ladders.leaderboard(LADDER)
        in_board = sum(s.games for s in board.standings) // 2
        recorded_flags = sum(
            1 for m in distinct if redis.hget(keys.match(LADDER, m), "status") == b"recorded")
        # Counted twice: a match in the results log more than once, or counters that add up
        # to more than the distinct matches behind them.
        double = (len(log) - len(distinct)) + max(0, status.matches_recorded - len(distinct)) \
            + max(0, sum(s.matches for s in board.standings) // 2 - len(distinct))
        return Counts(
            fault=fault, scheduled=status.matches_scheduled, expected=spec.matches,
            recorded=recorded_flags,
            duplicates_refused=int(worker_stats(redis).get("duplicates", 0.0)
                                   - self.duplicates_before),
            lost=max(0, spec.matches - len(distinct)), double_counted=double,
            games_in_leaderboard=in_board, games_expected=spec.games,
            seconds=time.monotonic() - self.started)


def recorded_at(ladder: Ladder, matches: list[str]) -> float | None:
    """When the last of ``matches`` was recorded (the arena's wall clock), None if one is not
    recorded yet."""
    keys, redis = ladder.arena.keys, ladder.cluster.redis
    times = [redis.hget(keys.match(LADDER, m), "recorded_at") for m in matches]
    return None if any(t is None for t in times) else max(float(t) for t in times)  # type: ignore[arg-type]
