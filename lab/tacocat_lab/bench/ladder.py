"""``tacocat bench ladder``: a whole round robin through the real arena, timed.

Starts an embedded Redis and ``tacocat worker`` processes, submits 8 bots (the house bots
and variants of them, as ordinary ``.py`` uploads: each one is smoke-tested, then played
sandboxed through ``python -m tacocat.sdk.host`` like any user's bot), and plays a full round
robin (28 pairings x ``--games-per-pairing`` games) on ``--workers`` workers, then again on
one worker, ``--repeat`` times each, interleaved. Every run starts from an empty Redis and
plays the very same games (the bench ladder's seed key is fixed), so runs differ only in
their workers. The clock runs from the bots joining the ladder to its last result being
recorded, scheduling and recording included. The field: random with three seeds, greedy and
its variants, the engine's default bot, and house:strong when the engine has it
(``--without strong`` for a field whose cost is the arena's rather than one bot's thinking).

Prints progress on stderr and ends with one JSON line on stdout:

- seconds / games_per_second: the ``--workers`` runs (median over ``--repeat`` runs), every
  match playing ``--batch`` games at once;
- speedup_2_vs_1: games per second on ``--workers`` workers over that on one worker;
- in_process_games_per_second: the very same games (same matches, seeds, bots) played in
  this one process by the same match loop, without processes or sandbox, pinned to one
  core; ``same_games`` says whether every record came out byte-identical;
- efficiency: games per second on ``--workers`` workers over ``--workers`` times the
  in-process rate: the share of the machine's engine throughput the arena delivers;
- batch_1_games_per_second: one run on ``--workers`` workers with ``--batch 1`` (one game
  at a time per match, as before batching), for the gain side by side;
- overhead_share: the share of the match jobs' time (as the RQ workers measured it: fork,
  bookkeeping, the job, its result) spent outside games: starting and stopping bots,
  unpacking, recording, RQ itself. ``overhead`` breaks it down.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from tacocat.engine import STANDARD, Bot
from tacocat.referee import DEFAULT_BATCH

if TYPE_CHECKING:
    from tacocat.arena import User

BOTS: Final[dict[str, str]] = {
    # name -> the body of a bot.py; each subclasses a house bot, so the field has a spread.
    "random-a": "from tacocat.engine.bots import RandomBot\n\n\nclass Bench(RandomBot):\n"
                "    def __init__(self) -> None:\n        super().__init__(1)\n",
    "random-b": "from tacocat.engine.bots import RandomBot\n\n\nclass Bench(RandomBot):\n"
                "    def __init__(self) -> None:\n        super().__init__(2)\n",
    "greedy": "from tacocat.engine.bots import GreedyBot\n\n\nclass Bench(GreedyBot):\n"
              "    pass\n",
    "strong": "from tacocat.engine.bots import HOUSE_BOTS\n\n_Base = HOUSE_BOTS['strong']\n\n\n"
              "class Bench(_Base):  # type: ignore[misc,valid-type]\n    pass\n",
    "passive": "from tacocat.engine import Bot\n\n\nclass Bench(Bot):\n    name = 'passive'\n",
    "greedy-keep": "from tacocat.engine.bots import GreedyBot\n\n\nclass Bench(GreedyBot):\n"
                   "    def replace(self, obs):\n        return ()\n",
    "greedy-mixed": "import random\n\nfrom tacocat.engine.bots import GreedyBot, RandomBot\n\n\n"
                    "class Bench(GreedyBot):\n    def __init__(self) -> None:\n"
                    "        self.rng = random.Random(3)\n        self.wild = RandomBot(4)\n\n"
                    "    def attack(self, obs):\n        if self.rng.random() < 0.2:\n"
                    "            return self.wild.attack(obs)\n"
                    "        return super().attack(obs)\n",
    "random-c": "from tacocat.engine.bots import RandomBot\n\n\nclass Bench(RandomBot):\n"
                "    def __init__(self) -> None:\n        super().__init__(5)\n",
    "greedy-b": "from tacocat.engine.bots import GreedyBot\n\n\nclass Bench(GreedyBot):\n"
                "    name = 'greedy-b'\n",
}
FIELD: Final = 8
SECRET: Final = "0123456789abcdef0123456789abcdef"
"""The bench ladder's seed key (normally random per ladder): fixed, so every run deals the
same 5,600 games and runs differ only in their workers."""


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doc = __doc__ or ""
    p = kinds.add_parser("ladder", help="a full round robin of 8 submitted bots on the real "
                                        "workers", description=doc.split("\n\n", 1)[1],
                         formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--workers", type=int, default=2, help="workers of the main runs (default 2)")
    p.add_argument("--games-per-pairing", type=int, default=200, metavar="N",
                   help="games per pairing (default 200: 5,600 games)")
    p.add_argument("--games-per-match", type=int, default=0, metavar="N",
                   help="games per match job (default: all of a pairing's games, one job)")
    p.add_argument("--decision-seconds", type=float, default=1.0, help=argparse.SUPPRESS)
    p.add_argument("--repeat", type=int, default=3, help="runs per worker count, interleaved; "
                                                          "medians are reported (default 3)")
    p.add_argument("--pin", choices=("all", "bots", "none"), default="all",
                   help="core pinning of the workers (see tacocat worker --help)")
    p.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="K",
                   help=f"games of a match played at once (default {DEFAULT_BATCH})")
    p.add_argument("--no-baseline", action="store_true",
                   help="skip the one-worker runs (no speedup figure), the --batch 1 run and "
                        "the in-process run")
    p.add_argument("--without", action="append", default=[], metavar="BOT",
                   choices=sorted(BOTS),
                   help="leave a bot out of the field (the next variant takes its place), "
                        "e.g. --without strong")
    p.add_argument("--verbose", action="store_true", help="show the workers' log lines")
    p.add_argument("--insecure-no-sandbox", action="store_true",
                   help="run the bots without the sandbox")
    p.set_defaults(run=bench_ladder)


@dataclass
class Run:
    workers: int
    seconds: float
    games: int
    stats: dict[str, float]
    batch: int = DEFAULT_BATCH

    @property
    def games_per_second(self) -> float:
        return self.games / self.seconds


def bench_ladder(args: argparse.Namespace) -> int:
    from tacocat.engine import HOUSE_BOTS  # noqa: PLC0415

    gpm = args.games_per_match or args.games_per_pairing
    if args.workers < 1 or args.repeat < 1 or gpm < 2 or args.games_per_pairing % gpm:
        print("tacocat bench ladder: --workers and --repeat must be >= 1, and "
              "--games-per-match must divide --games-per-pairing", file=sys.stderr)
        return 2
    names = [n for n in BOTS if (n != "strong" or "strong" in HOUSE_BOTS)
             and n not in args.without][:FIELD]
    if len(names) < FIELD:
        print(f"tacocat bench ladder: fewer than {FIELD} bots left", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-") as folder:
        bench = _Bench(Path(folder), args, names, gpm)
        try:
            return bench.run()
        finally:
            bench.close()


class _Bench:
    def __init__(self, folder: Path, args: argparse.Namespace, names: Sequence[str],
                 games_per_match: int) -> None:
        from redis import Redis  # noqa: PLC0415

        from tacocat.arena import Arena, EmbeddedValkey  # noqa: PLC0415

        self.args = args
        self.names = list(names)
        self.games_per_match = games_per_match
        self.server = EmbeddedValkey(folder / "redis")
        self.server.start()
        try:
            self.redis = Redis.from_url(self.server.url)
            self.arena = Arena(self.redis)
            self.admin = self._fresh_arena()
        except BaseException:  # a Ctrl-C / SIGTERM while starting: no Redis left behind
            self.server.stop()
            raise
        self.pool: subprocess.Popen[bytes] | None = None
        self.pool_size = 0
        self.pairings = len(self.names) * (len(self.names) - 1) // 2
        self.games = self.pairings * args.games_per_pairing

    def close(self) -> None:
        self._stop_pool()
        self.redis.close()
        self.server.stop()

    def run(self) -> int:
        args = self.args
        _say(f"bench ladder: {len(self.names)} bots ({', '.join(self.names)}), "
             f"{self.pairings} pairings x {args.games_per_pairing} games = {self.games} games, "
             f"{self.games_per_match} games per match job, pinning {args.pin}")
        runs: list[Run] = []
        counts = [args.workers] + ([1] if not args.no_baseline and args.workers != 1 else [])
        for repeat in range(args.repeat):
            for workers in counts:
                # Every run starts from an empty Redis and plays the very same games (same
                # versions, same ladder name and secret, so the same seeds): runs differ in
                # their workers only. The house bots are deterministic for given seeds.
                runs.append(self._run(workers, args.batch, repeat))
        in_process: dict[str, Any] = {}
        batch_1: Run | None = None
        if not args.no_baseline:
            in_process = self._in_process()  # the last run's matches, here, one core
            if args.batch != 1:
                batch_1 = self._run(args.workers, 1, args.repeat)
        self._stop_pool()
        main = [r for r in runs if r.workers == args.workers]
        base = [r for r in runs if r.workers == 1 and args.workers != 1]
        seconds = statistics.median(r.seconds for r in main)
        rate = statistics.median(r.games_per_second for r in main)
        result: dict[str, Any] = {
            "games": self.games, "seconds": round(seconds, 2),
            "games_per_second": round(rate, 1),
            "overhead_share": round(statistics.median(_overhead(r.stats)["total"] for r in main),
                                    4),
            "speedup_2_vs_1": round(rate / statistics.median(r.games_per_second for r in base), 2)
            if base else None,
        }
        if args.workers != 2:
            result[f"speedup_{args.workers}_vs_1"] = result.pop("speedup_2_vs_1")
        result["overhead"] = {k: round(statistics.median(_overhead(r.stats)[k] for r in main), 4)
                              for k in ("bot_processes", "recording", "queue")}
        result["game_ms"] = round(statistics.median(
            1000 * r.stats.get("game_seconds", 0.0) / max(1.0, r.stats.get("games", 0.0))
            for r in main), 2)
        result["bot_start_ms"] = round(statistics.median(
            1000 * r.stats.get("bot_start_seconds", 0.0) / max(1.0, r.stats.get("bot_starts", 0.0))
            for r in main), 1)
        if in_process:
            result["in_process_games_per_second"] = in_process["games_per_second"]
            result["efficiency"] = round(rate / (args.workers * in_process["games_per_second"]),
                                         3)
            result["same_games"] = in_process["same_games"]
        result["batch"] = args.batch
        if batch_1 is not None:
            result["batch_1_games_per_second"] = round(batch_1.games_per_second, 1)
            result["batch_gain"] = round(rate / batch_1.games_per_second, 2)
        result["workers"] = args.workers
        result["pin"] = args.pin
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        result["runs"] = [{"workers": r.workers, "batch": r.batch,
                           "seconds": round(r.seconds, 2),
                           "games_per_second": round(r.games_per_second, 1),
                           "busy": round(r.stats.get("match_job_seconds", 0.0)
                                         / (r.workers * r.seconds), 3),
                           "overhead_share": round(_overhead(r.stats)["total"], 4),
                           "game_ms": round(1000 * r.stats.get("game_seconds", 0.0)
                                            / max(1.0, r.stats.get("games", 0.0)), 2)}
                          for r in [*runs, *([batch_1] if batch_1 else [])]]
        print(json.dumps(result), flush=True)
        return 0

    # -- phases --------------------------------------------------------------------------------

    def _run(self, workers: int, batch: int, repeat: int) -> Run:
        self._stop_pool()
        self.admin = self._fresh_arena()
        self._start_pool(workers, batch)
        self._submit()
        return self._round_robin(workers, batch, repeat)

    def _in_process(self) -> dict[str, Any]:
        """The last run's matches again, in this process on one core: same seeds, same bots
        (their uploads, loaded here), the same match loop without processes or sandbox."""
        from tacocat.referee import play_in_process  # noqa: PLC0415

        matches = self.arena.matches.of_ladder("bench", count=10_000)
        classes = {self.arena.bots.version(v).id: _bot_class(BOTS[self.arena.bots.version(v)
                                                                .bot.split("/", 1)[1]])
                   for m in matches for v in (m.a, m.b)}
        affinity = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(affinity)})
        same = True
        try:
            _say(f"bench ladder: the same {self.games} games in this process, one core")
            started = time.perf_counter()
            played = [play_in_process(classes[m.a], classes[m.b], m.schedule(),
                                      names=(m.a, m.b), rules=STANDARD,
                                      batch=self.args.batch) for m in matches]
            seconds = time.perf_counter() - started
        finally:
            os.sched_setaffinity(0, affinity)
        for match, done in zip(matches, played, strict=True):
            recorded = [r.dumps() for r in self.arena.matches.replays(match.id)]
            same = same and recorded == [g.record.dumps() for g in done.games]
        games = sum(len(done.games) for done in played)
        _say(f"bench ladder: {games} games in {seconds:.1f} s in process "
             f"({games / seconds:.0f} games/s); same records as the workers': {same}")
        return {"games_per_second": round(games / seconds, 1), "same_games": same}

    def _submit(self) -> None:
        """Submit every bot and wait until the workers' smoke tests activated them all."""
        from tacocat.arena import VersionStatus  # noqa: PLC0415

        versions = [self.arena.bots.submit(self.admin, name, "bot.py", BOTS[name].encode()).id
                    for name in self.names]
        deadline = time.monotonic() + 120
        while True:
            states = [self.arena.bots.version(v) for v in versions]
            bad = [v for v in states if v.status is VersionStatus.REJECTED]
            if bad:
                raise SystemExit(f"bench ladder: {bad[0].id} was rejected: {bad[0].reason}")
            if all(v.status is VersionStatus.ACTIVE for v in states):
                break
            if time.monotonic() > deadline:
                raise SystemExit("bench ladder: the smoke tests did not finish in 120 s")
            time.sleep(0.1)
        _say(f"bench ladder: {len(versions)} bots submitted and smoke-tested")

    def _round_robin(self, workers: int, batch: int, repeat: int) -> Run:
        from tacocat.worker import worker_stats  # noqa: PLC0415

        ladder = "bench"
        self.arena.ladders.create(self.admin, ladder, games_per_pairing=self.args.games_per_pairing,
                                  games_per_match=self.games_per_match,
                                  decision_seconds=self.args.decision_seconds)
        self.redis.hset(self.arena.keys.ladder(ladder), "secret", SECRET)
        matches = self.pairings * (self.args.games_per_pairing // self.games_per_match)
        before = worker_stats(self.redis)
        started = time.perf_counter()
        for name in self.names:
            self.arena.ladders.join(self.admin, name, ladder)
        counters = self.arena.keys.counters(ladder)
        shown = 0.0
        while True:
            done, games = (int(x or 0) for x in self.redis.hmget(counters, ["results", "games"]))
            now = time.perf_counter()
            if done >= matches:
                break
            if now - shown >= (0.25 if sys.stderr.isatty() else 5.0):
                shown = now
                _progress(f"{ladder} ({workers} worker{'s' * (workers != 1)}, batch {batch}, "
                          f"run {repeat + 1})", games, self.games, now - started)
            if now - started > 900:
                raise SystemExit(f"bench ladder: {ladder} did not finish in 900 s")
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        # The last jobs' wall time is counted by their RQ workers just after the result.
        deadline = time.monotonic() + 10
        while True:
            after = worker_stats(self.redis)
            counted = after.get("match_jobs", 0.0) - before.get("match_jobs", 0.0)
            if counted >= matches or time.monotonic() > deadline:
                break
            time.sleep(0.02)
        stats = {k: after.get(k, 0.0) - before.get(k, 0.0) for k in after}
        _progress(f"{ladder} ({workers} worker{'s' * (workers != 1)}, batch {batch}, run "
                  f"{repeat + 1})", games, self.games, seconds, end=True)
        return Run(workers, seconds, games, stats, batch)

    def _fresh_arena(self) -> User:
        self.redis.flushall()
        token = self.arena.users.bootstrap_admin()
        assert token is not None
        return self.arena.users.authenticate(token)

    # -- the worker pool -----------------------------------------------------------------------

    def _start_pool(self, workers: int, batch: int) -> None:
        from rq import Worker  # noqa: PLC0415

        self._stop_pool()
        command = [sys.executable, "-m", "tacocat.cli", "worker", "--workers", str(workers),
                   "--batch", str(batch), "--redis-url", self.server.url, "--pin", self.args.pin,
                   "--log-level", "INFO" if self.args.verbose else "WARNING", "--wait", "1"]
        if self.args.insecure_no_sandbox:
            command.append("--insecure-no-sandbox")
        self.pool = subprocess.Popen(command, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.pool_size = workers
        deadline = time.monotonic() + 60
        while len(Worker.all(connection=self.redis)) < workers:
            if self.pool.poll() is not None:
                raise SystemExit(f"bench ladder: tacocat worker exited ({self.pool.returncode})")
            if time.monotonic() > deadline:
                raise SystemExit("bench ladder: the workers did not start in 60 s")
            time.sleep(0.05)

    def _stop_pool(self) -> None:
        if self.pool is None:
            return
        self.pool.send_signal(signal.SIGTERM)
        try:
            self.pool.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(self.pool.pid, signal.SIGKILL)
            self.pool.wait()
        self.pool = None
        # RQ forgets a stopped worker's registration at once; wait so counts stay exact.
        from rq import Worker  # noqa: PLC0415

        deadline = time.monotonic() + 10
        while Worker.all(connection=self.redis) and time.monotonic() < deadline:
            time.sleep(0.05)


def _bot_class(source: str) -> type[Bot]:
    """The one Bot subclass a bench bot's source defines (as the host would load it)."""
    namespace: dict[str, Any] = {"__name__": "tacocat_bench_bot"}
    exec(compile(source, "bot.py", "exec"), namespace)  # our own sources, not a user's
    (found,) = [v for v in namespace.values() if isinstance(v, type) and issubclass(v, Bot)
                and v.__module__ == "tacocat_bench_bot"]
    return found


def _overhead(stats: dict[str, float]) -> dict[str, float]:
    """Shares of the match jobs' time: outside games in total, and by kind."""
    job = stats.get("match_job_seconds", 0.0)
    if job <= 0:
        return {"total": 0.0, "bot_processes": 0.0, "recording": 0.0, "queue": 0.0}
    games = stats.get("game_seconds", 0.0)
    bots = stats.get("bot_start_seconds", 0.0) + stats.get("bot_stop_seconds", 0.0)
    recording = stats.get("record_seconds", 0.0)
    return {"total": 1 - games / job, "bot_processes": bots / job, "recording": recording / job,
            "queue": max(0.0, job - games - bots - recording) / job}


def _progress(ladder: str, games: int, total: int, seconds: float, *, end: bool = False) -> None:
    rate = games / seconds if seconds > 0 else 0.0
    text = (f"bench ladder: {ladder}: {games}/{total} games, {seconds:5.1f} s, "
            f"{rate:6.1f} games/s")
    if sys.stderr.isatty():
        sys.stderr.write("\r" + text + ("\n" if end else ""))
        sys.stderr.flush()
    else:
        _say(text)


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
