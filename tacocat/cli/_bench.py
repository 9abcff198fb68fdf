"""``tacocat bench``: throughput benchmarks that print one JSON line each."""

from __future__ import annotations

import argparse
import json
import statistics
import textwrap
import time
from collections.abc import Callable, Sequence

from tacocat.engine import ENGINE_FORM, STANDARD, Round, duplicate_pairs
from tacocat.engine.bots import RandomBot
from tacocat.referee import DEFAULT_BATCH, play_in_process

from . import (
    _bench_chaos,
    _bench_ladder,
    _bench_languages,
    _bench_load,
    _bench_neighbour,
    _bench_referee,
    _bench_refit,
    _bench_scale,
)
from ._plain_game import play_plain_games
from ._serve import settle_heap

ENGINE_DESCRIPTION = """\
house:random vs house:random in this one process, through the one match
loop (tacocat.referee, --batch games at once): games per second (the
median of --repeat runs, after one warm-up run), and which form of the
engine ran ("compiled (mypyc)" after ./dev setup, or "pure Python");
taking turns with it (200 games each), the same number of games of a plain
implementation of RULES.md (tacocat/cli/_plain_game.py) with the same
random policy: its games per second, both sides' decisions per game, and
"ratio": the engine's decisions per CPU second over the plain one's, the
median of the per-run ratios (per decision, so that a few longer games
weigh nothing; CPU seconds, which a busy machine inflates less than wall)
"""

DESCRIPTION = f"""\
Measure throughput. Prints one JSON line with the result.

  engine   {textwrap.indent(ENGINE_DESCRIPTION, ' ' * 11).strip()}
  referee  live decisions per second and turnaround through one gRPC referee process,
           with --clients live clients in separate processes on loopback
  ladder   a full round robin of 8 submitted bots through Redis, RQ workers and the
           sandbox, on 2 workers and on 1: games per second, speedup, overhead share
  load     --clients live clients for --seconds against one server while a ladder runs
           on the workers: errors, p50/p99 decision latency, lost ladder results
  scale    --bots bots in one ladder through the real arena (Redis, scheduler,
           recording, refits) with results drawn from known strengths, no bot
           processes: throughput, latencies, refit time, convergence, waits
  refit    a ladder of --bots bots whose every pairing met: the refit (reads included)
           cold and after one more result, the fit alone, the status and the ladder page
  chaos    faults across hosts made of network namespaces (root): worker kills, pauses,
           partitions, Redis killed, a full Redis disk, serve restarted: lost and
           double-counted matches (0 expected) and recovery times
  neighbour  sandboxed match times on core 0 alone, then with a background-spinning bot
           playing on core 1: p50/p99 side by side
  languages  the JavaScript and C starters against the Python one: a bot process's start
           (to its Hello) and its CPU per decision, medians and ratios
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help="run a benchmark (engine, ...)", description=DESCRIPTION,
                       formatter_class=argparse.RawTextHelpFormatter)
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    e = kinds.add_parser("engine", help="games per second of the rules engine, one process",
                         description=ENGINE_DESCRIPTION,
                         formatter_class=argparse.RawTextHelpFormatter)
    e.add_argument("--games", type=int, default=5000, help="games per run (default 5000)")
    e.add_argument("--repeat", type=int, default=3, help="timed runs; the median is reported")
    e.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="K",
                   help=f"games played at once (default {DEFAULT_BATCH})")
    e.set_defaults(run=bench_engine)
    _bench_referee.add_parser(kinds)
    _bench_ladder.add_parser(kinds)
    _bench_load.add_parser(kinds)
    _bench_scale.add_parser(kinds)
    _bench_refit.add_parser(kinds)
    _bench_chaos.add_parser(kinds)
    _bench_neighbour.add_parser(kinds)
    _bench_languages.add_parser(kinds)


_CHUNK = 200
"""Games per turn when the engine and the plain baseline take turns within a run."""


def bench_engine(args: argparse.Namespace) -> int:
    settle_heap()  # as the workers and the referee do: this process plays a long run
    names = ("house:random#1", "house:random#2")

    def engine_games(games: int, tag: str) -> int:
        played = play_in_process(lambda: RandomBot(1), lambda: RandomBot(2),
                                 duplicate_pairs(games, f"bench-{tag}"), names=names,
                                 rules=STANDARD, batch=args.batch)
        return sum(_decisions(game.record.rounds) for game in played.games)

    def plain_games(games: int, tag: str) -> int:
        return play_plain_games(games, f"bench-{tag}")

    sides = {"engine": engine_games, "plain": plain_games}
    engine_games(min(args.games, 1000), "warmup")
    plain_games(min(args.games, 300), "warmup")
    runs: list[dict[str, _Tally]] = []
    for r in range(max(args.repeat, 1)):
        # Both sides take turns in chunks, so that both see the same moments of a shared
        # machine; each side plays the same deals in every run.
        tally = {side: _Tally() for side in sides}
        for first in range(0, args.games, _CHUNK):
            count = min(_CHUNK, args.games - first)
            for side, play in sides.items():
                tally[side].add(play, count, f"{r}/{first}")
        runs.append(tally)
    median_run = sorted(runs, key=lambda t: t["engine"].wall)[len(runs) // 2]
    engine, plain = median_run["engine"], median_run["plain"]
    print(json.dumps({
        "games": args.games, "seconds": round(engine.wall, 4),
        "games_per_second": round(args.games / engine.wall, 1),
        "runs": [round(args.games / t["engine"].wall, 1) for t in runs],
        "batch": args.batch, "engine": ENGINE_FORM,
        "plain_games_per_second": round(args.games / plain.wall, 1),
        "ratio": round(statistics.median(t["engine"].rate / t["plain"].rate for t in runs), 2),
        "decisions_per_game": round(engine.decisions / args.games, 1),
        "plain_decisions_per_game": round(plain.decisions / args.games, 1)}))
    return 0


class _Tally:
    """One side's share of a run: wall and CPU seconds, decisions."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0
        self.decisions = 0

    def add(self, play: Callable[[int, str], int], games: int, tag: str) -> None:
        wall, cpu = time.perf_counter(), time.process_time()
        self.decisions += play(games, tag)
        self.cpu += time.process_time() - cpu
        self.wall += time.perf_counter() - wall

    @property
    def rate(self) -> float:
        """Decisions per CPU second of this process: what the ratio compares (other
        processes on a shared machine inflate wall time far more than this)."""
        return self.decisions / self.cpu


def _decisions(rounds: Sequence[Round]) -> int:
    """The decisions a game's record shows: replaces, duel cards, attacks and answers."""
    return sum(2 + 2 * len(r.duels) + 2 * len(r.tricks) for r in rounds)
