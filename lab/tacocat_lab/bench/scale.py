"""``tacocat bench scale``: a big ladder through the real arena, with synthetic results.

Starts an embedded Redis and drives the real arena on it: ``--bots`` bots are submitted,
activated (no smoke game: nothing runs a bot) and entered in one ladder; the real scheduler
creates the matches in its order, tops the queue up to ``--queue-depth``; ``--workers``
threads take matches off the queue in order and record a result drawn from the bots' true
strengths (each game an independent draw with the Elo model's expected score; duplicate
pairs are not correlated and no replays are stored) through the real ``arena.matches.record``, which
refits the standings as a worker does (one refit at a time, through the lease). Halfway (see
``--entrant-at``) a new bot joins. The run ends when the round robin is complete or
``--max-matches`` are recorded (or, with ``--until-converged``, once every bot has converged
and the entrant is rated).

By default it runs twice on the same seeds, the arena's order (``converge``) and plain
round-robin order (``round-robin``), and prints one JSON line on stdout: the converge run's
figures, with the round-robin run's under ``"round_robin"``. Progress goes to stderr.

- matches_per_second: matches scheduled and recorded per second of the run, refits included;
- record_p50_ms / record_p99_ms: one result's commit (``arena.matches.record`` minus its refit);
- refit_p50_s / refit_max_s: one standings refit (read counters, fit, store the snapshot);
- redis_bytes_per_match: Redis memory growth per recorded match (no replays stored);
- converged_at: recorded matches until every bot's true rating lies within its interval,
  widened to a simultaneous (Bonferroni) 95% interval for all the bots at once, and every
  interval is under ±--field-margin Elo (before that the prior's wide intervals would hold
  the truth trivially); None: not within the run. Checked on the stored snapshots, about
  every --check-every seconds;
- max_error: the largest |rating - truth| over the bots at the end (Elo);
- entrant_matches_to_50: the new entrant's recorded matches until its interval is under ±50;
  entrant_first_wait: ladder matches recorded between its joining and its first result;
- longest_wait: the most ladder matches recorded between two results of one bot (or between
  the start, or its joining, and its first); longest_wait_rounds: the most scheduling rounds
  between two of a bot's matches being created (the fairness bound's unit);
- ladder_page_ms / ladder_page_last_ms: rendering the web ladder page at the end (what its
  handler does: read the ladder, standings, crosstable, history and render the HTML), for
  the first page and for the last standings page and crosstable block; median of 5.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import queue
import random
import signal
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from statistics import NormalDist
from types import FrameType
from typing import TYPE_CHECKING, Any, Final

from ._help import doc_parser

if TYPE_CHECKING:
    from tacocat.arena import Arena, MatchResult, Order, User

LADDER: Final = "scale"
SECRET: Final = "5ca1e5ca1e5ca1e5ca1e5ca1e5ca1e5c"
TARGET_MARGIN: Final = 50.0
"""The ±Elo the new entrant's 95% interval must be under to count as settled."""


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = doc_parser(kinds, "scale", "a ladder of --bots bots through the real arena, results "
                   "simulated", __doc__)
    p.add_argument("--bots", type=int, default=50, help="bots in the ladder (default 50)")
    p.add_argument("--games-per-pairing", type=int, default=10, metavar="G",
                   help="games per pairing (default 10)")
    p.add_argument("--games-per-match", type=int, default=2, metavar="M",
                   help="games per match (default 2: one duplicate pair)")
    p.add_argument("--max-matches", type=int, default=0, metavar="N",
                   help="stop after N recorded matches (default: the whole round robin)")
    p.add_argument("--until-converged", action="store_true",
                   help="end each run once every bot has converged (and the entrant's "
                        "interval is under ±50) instead of at the end of the round robin")
    p.add_argument("--order", choices=("both", "converge", "round-robin"), default="both",
                   help="the scheduling order(s) to run (default both, same seeds)")
    p.add_argument("--workers", type=int, default=2, help="worker threads (default 2)")
    p.add_argument("--queue-depth", type=int, default=0, metavar="N",
                   help="pending matches the scheduler tops up to (default 2 x bots)")
    p.add_argument("--spread", type=float, default=200.0,
                   help="standard deviation of the true ratings, Elo (default 200)")
    p.add_argument("--entrant-at", type=float, default=0.5, metavar="SHARE",
                   help="share of the planned matches after which a new bot joins "
                        "(default 0.5; 0 = no entrant)")
    p.add_argument("--check-every", type=float, default=0.5, metavar="SECONDS",
                   help="how often the convergence check reads the snapshot (default 0.5)")
    p.add_argument("--field-margin", type=float, default=100.0, metavar="ELO",
                   help="the ±Elo every bot's interval must be under to count as converged "
                        "(default 100)")
    p.add_argument("--seed", type=int, default=1, help="seed of strengths and results")
    p.set_defaults(run=bench_scale)


def bench_scale(args: argparse.Namespace) -> int:
    from tacocat.arena import Order  # noqa: PLC0415

    problem = _check(args)
    if problem:
        print(f"tacocat bench scale: {problem}", file=sys.stderr)
        return 2
    orders = [Order.CONVERGE, Order.ROUND_ROBIN] if args.order == "both" else [Order(args.order)]
    # SIGTERM and SIGHUP unwind like Ctrl-C, so the embedded Redis is stopped on the way out.
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        with tempfile.TemporaryDirectory(prefix="tacocat-scale-") as folder:
            from redis import Redis  # noqa: PLC0415

            from tacocat.arena import EmbeddedValkey  # noqa: PLC0415

            with EmbeddedValkey(Path(folder) / "redis") as server:
                client = Redis.from_url(server.url)
                try:
                    runs = [_Run(client, args, order).run() for order in orders]
                finally:
                    client.close()
    except KeyboardInterrupt:
        print("tacocat bench scale: interrupted", file=sys.stderr)
        return 130
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    result = dict(runs[0])
    if len(runs) > 1:
        result["round_robin"] = runs[1]
    print(json.dumps(result), flush=True)
    return 0


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _check(args: argparse.Namespace) -> str | None:
    if args.bots < 2:
        return "--bots must be at least 2"
    if args.games_per_match < 2 or args.games_per_match % 2:
        return "--games-per-match must be even and at least 2 (duplicate pairs)"
    if args.games_per_pairing % args.games_per_match:
        return "--games-per-match must divide --games-per-pairing"
    if args.workers < 1 or args.max_matches < 0 or args.queue_depth < 0:
        return "--workers must be >= 1; --max-matches and --queue-depth >= 0"
    if not 0 <= args.entrant_at < 1:
        return "--entrant-at must be a share in [0, 1)"
    return None


@dataclass
class _Tally:
    """What the worker threads measured (appended under the lock)."""

    record_seconds: list[float] = field(default_factory=list)
    refit_seconds: list[float] = field(default_factory=list)
    seqs: dict[str, list[int]] = field(default_factory=dict)  # version -> its results' seqs
    lock: threading.Lock = field(default_factory=threading.Lock)


class _Run:
    def __init__(self, client: Any, args: argparse.Namespace, order: Order) -> None:
        from tacocat.arena import Arena, Scheduling  # noqa: PLC0415

        self.args = args
        self.order = order
        self.redis = client
        depth = args.queue_depth or 2 * args.bots
        self.arena: Arena = Arena(client, scheduling=Scheduling(queue_depth=depth, order=order))
        rng = random.Random(args.seed)
        self.truth = {f"bot{i:04d}": rng.gauss(0.0, args.spread) for i in range(args.bots)}
        self.entrant_truth = rng.gauss(0.0, args.spread)
        field_size = args.bots + (1 if args.entrant_at else 0)
        pairings = field_size * (field_size - 1) // 2
        self.planned = pairings * (args.games_per_pairing // args.games_per_match)
        if args.max_matches:
            self.planned = min(self.planned, args.max_matches)
        self.queue: queue.Queue[str] = queue.Queue()
        self.tally = _Tally()
        self.stop = threading.Event()
        self.versions: dict[str, str] = {}  # version -> bot name
        self.entrant: str | None = None
        self.entrant_joined_at = 0
        self.converged_at: int | None = None
        self.entrant_settled: int | None = None
        self.schedule_rounds = 0
        self.served_rounds: dict[str, list[int]] = {}  # version -> rounds that served it

    def run(self) -> dict[str, Any]:
        self.redis.flushall()
        admin = self._setup()
        memory_before = int(self.redis.info("memory")["used_memory"])
        _say(f"bench scale ({self.order.value}): {self.args.bots} bots, {self.planned} matches "
             f"of {self.args.games_per_match} games planned")
        threads = [threading.Thread(target=self._work, name=f"sim-worker-{i}", daemon=True)
                   for i in range(self.args.workers)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        try:
            self._dispatch(admin, started)
        finally:
            self.stop.set()
            for thread in threads:
                thread.join()
        seconds = time.perf_counter() - started
        recorded = self._recorded()
        memory = int(self.redis.info("memory")["used_memory"]) - memory_before
        final = self._refit_and_check()
        report = self._report(recorded, seconds, memory, final)
        report.update(self._page_render_ms())
        return report

    # -- setup ---------------------------------------------------------------------------------

    def _setup(self) -> User:
        token = self.arena.users.bootstrap_admin()
        assert token is not None
        admin = self.arena.users.authenticate(token)
        self.arena.ladders.create(admin, LADDER, games_per_pairing=self.args.games_per_pairing,
                                  games_per_match=self.args.games_per_match)
        # Fixed seed key: both orders deal the same matches (and so the same results).
        self.redis.hset(self.arena.keys.ladder(LADDER), "secret", SECRET)
        for number, name in enumerate(self.truth):
            self._enter(admin, name)
            if number % 100 == 99:
                _say(f"bench scale: {number + 1}/{len(self.truth)} bots entered")
        return admin

    def _enter(self, admin: User, name: str) -> str:
        source = f"# {name}\nfrom tacocat.engine.bots import RandomBot as Bot\n".encode()
        version = self.arena.bots.submit(admin, name, "bot.py", source)
        self.arena.bots.activate(version.id)
        self.arena.ladders.join(admin, name, LADDER)
        self.versions[version.id] = name
        with self.tally.lock:
            self.tally.seqs[version.id] = []
        return version.id

    # -- the dispatcher (main thread) ----------------------------------------------------------

    def _dispatch(self, admin: User, started: float) -> None:
        shown = checked = time.perf_counter()
        entrant_due = int(self.args.entrant_at * self.planned) if self.args.entrant_at else None
        depth = self.arena.scheduling.queue_depth or 0
        while True:
            recorded = self._recorded()
            if recorded >= self.planned:
                return
            if (self.args.until_converged and self.converged_at is not None
                    and (entrant_due is None or self.entrant_settled is not None)):
                _say(f"bench scale ({self.order.value}): converged at {self.converged_at} "
                     f"matches, stopping ({recorded} recorded)")
                return
            if entrant_due is not None and recorded >= entrant_due and self.entrant is None:
                self.entrant = self._enter(admin, "entrant")
                self.truth["entrant"] = self.entrant_truth
                self.entrant_joined_at = recorded
            if self.queue.qsize() < depth // 2:
                created = self.arena.matches.schedule(LADDER, self.queue.put)
                if created:
                    self.schedule_rounds += 1
                    for match in created:
                        for version in (match.a, match.b):
                            self.served_rounds.setdefault(version, []).append(
                                self.schedule_rounds)
            now = time.perf_counter()
            if now - checked >= self.args.check_every:
                checked = now
                self._check_convergence()
            if now - shown >= 5.0:
                shown = now
                rate = recorded / (now - started)
                _say(f"bench scale ({self.order.value}): {recorded}/{self.planned} matches, "
                     f"{now - started:6.1f} s, {rate:6.1f} matches/s")
            time.sleep(0.01)

    # -- the workers ---------------------------------------------------------------------------

    def _work(self) -> None:
        from tacocat.arena import MatchStatus  # noqa: PLC0415

        while not self.stop.is_set():
            try:
                match_id = self.queue.get(timeout=0.05)
            except queue.Empty:
                continue
            match = self.arena.matches.get(match_id)
            if match.status is not MatchStatus.SCHEDULED:
                continue
            result = self._result(match.id, self.versions[match.a], self.versions[match.b],
                                  match.games)
            refits: list[float] = []
            begun = time.perf_counter()
            done = self.arena.matches.record(match_id, result, on_refit=refits.append)
            elapsed = time.perf_counter() - begun
            with self.tally.lock:
                self.tally.record_seconds.append(elapsed - sum(refits))
                self.tally.refit_seconds.extend(refits)
                if done.recorded:
                    self.tally.seqs[match.a].append(done.seq)
                    self.tally.seqs[match.b].append(done.seq)

    def _result(self, match_id: str, bot_a: str, bot_b: str, games: int) -> MatchResult:
        """Games drawn from the true strengths; the same match gets the same games in every
        run (seeded by the match id), so orders differ only in which matches come first."""
        from tacocat.arena import MatchGameResult, MatchResult  # noqa: PLC0415
        from tacocat.arena.ratings import expected_score  # noqa: PLC0415
        from tacocat.engine import Reason  # noqa: PLC0415

        digest = hashlib.sha256(f"{self.args.seed}/{match_id}".encode()).digest()
        rng = random.Random(digest)
        p = expected_score(self.truth[bot_a], self.truth[bot_b])
        return MatchResult(tuple(
            MatchGameResult(i % 2, Reason.GOAL, "a" if rng.random() < p else "b")
            for i in range(games)), seconds=0.0, worker="bench-scale")

    # -- measuring -----------------------------------------------------------------------------

    def _recorded(self) -> int:
        raw = self.redis.hget(self.arena.keys.counters(LADDER), "results")
        return int(raw or 0)

    def _snapshot(self) -> tuple[int, dict[str, tuple[float, float]]]:
        version, raw = self.redis.hmget(self.arena.keys.standings(LADDER), ["version", "ratings"])
        ratings = {v: (r, m) for v, (r, m) in json.loads(raw).items()} if raw else {}
        return int(version or 0), ratings

    def _check_convergence(self) -> dict[str, float]:
        """Check the stored snapshot against the truth; remember the first settled one."""
        version, ratings = self._snapshot()
        names = {v: self.versions[v] for v in ratings if v in self.versions}
        if not names:
            return {}
        mean = statistics.fmean(self.truth[n] for n in names.values())
        errors = {v: abs(ratings[v][0] - (1500.0 + self.truth[n] - mean))
                  for v, n in names.items()}
        # Every bot at once: a 95% simultaneous interval is each one's at 1 - 0.05 / N.
        widen = NormalDist().inv_cdf(1 - 0.025 / len(names)) / NormalDist().inv_cdf(0.975)
        field_ = [v for v in self.versions if v != self.entrant]
        settled = all(v in ratings and ratings[v][1] < self.args.field_margin
                      and errors[v] <= ratings[v][1] * widen for v in field_)
        if settled and self.converged_at is None:
            self.converged_at = version
        if (self.entrant is not None and self.entrant_settled is None
                and self.entrant in ratings and ratings[self.entrant][1] < TARGET_MARGIN):
            with self.tally.lock:
                self.entrant_settled = sum(
                    1 for s in self.tally.seqs[self.entrant] if s <= version)
        return {"max_error": max(errors.values()),
                "max_margin": max(m for _, m in ratings.values())}

    def _refit_and_check(self) -> dict[str, float]:
        from tacocat.arena import standings  # noqa: PLC0415

        standings.update_standings(self.redis, self.arena.keys, LADDER)
        return self._check_convergence()

    def _page_render_ms(self) -> dict[str, float]:
        from tacocat.web import LadderView, Static, ladder_page, load_ladder  # noqa: PLC0415

        last = LadderView(page=10**5, block=10**5)  # clamped to the last ones
        static = Static()
        out = {}
        for name, view in (("ladder_page_ms", LadderView()),
                           ("ladder_page_last_ms", last)):
            runs = []
            for _ in range(5):
                started = time.perf_counter()
                snap = load_ladder(self.arena, LADDER, view=view)
                ladder_page(static, snap, "/events")
                runs.append(1000 * (time.perf_counter() - started))
            out[name] = round(statistics.median(runs), 1)
        return out

    def _report(self, recorded: int, seconds: float, memory: int,
                final: dict[str, float]) -> dict[str, Any]:
        tally = self.tally
        longest, who = 0, ""
        for version, seqs in tally.seqs.items():
            start = self.entrant_joined_at if version == self.entrant else 0
            marks = [start, *sorted(seqs)]
            gap = max((b - a for a, b in zip(marks, marks[1:], strict=False)), default=0)
            if gap > longest:
                longest, who = gap, self.versions[version]
        entrant_seqs = sorted(tally.seqs.get(self.entrant or "", []))
        record_ms = sorted(1000 * s for s in tally.record_seconds)
        refits = tally.refit_seconds or [0.0]
        return {
            "order": self.order.value, "bots": self.args.bots,
            "games_per_pairing": self.args.games_per_pairing,
            "games_per_match": self.args.games_per_match, "workers": self.args.workers,
            "planned_matches": self.planned, "recorded_matches": recorded,
            "seconds": round(seconds, 1),
            "matches_per_second": round(recorded / seconds, 1),
            "record_p50_ms": round(_quantile(record_ms, 0.5), 2),
            "record_p99_ms": round(_quantile(record_ms, 0.99), 2),
            "refits": len(tally.refit_seconds),
            "refit_p50_s": round(statistics.median(refits), 3),
            "refit_max_s": round(max(refits), 3),
            "redis_bytes_per_match": round(memory / max(recorded, 1)),
            "converged_at": self.converged_at,
            "max_error": round(final.get("max_error", math.nan), 1),
            "max_margin": round(final.get("max_margin", math.nan), 1),
            "entrant_joined_at": self.entrant_joined_at if self.entrant else None,
            "entrant_first_wait": (entrant_seqs[0] - self.entrant_joined_at
                                   if entrant_seqs else None),
            "entrant_matches_to_50": self.entrant_settled,
            "longest_wait": longest, "longest_wait_bot": who,
            "schedule_rounds": self.schedule_rounds,
            "longest_wait_rounds": max(
                (b - a for rounds in self.served_rounds.values()
                 for a, b in zip(rounds, rounds[1:], strict=False)), default=0),
            "load_average": round(os.getloadavg()[0], 2),
        }


def _quantile(ordered: list[float], q: float) -> float:
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
