"""``tacocat bench``: throughput benchmarks that print one JSON line each."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Sequence

from tacocat.engine import ENGINE_FORM, STANDARD, Round, duplicate_pairs
from tacocat.engine.bots import RandomBot
from tacocat.referee import DEFAULT_BATCH, play_in_process

from . import (
    _bench_chaos,
    _bench_ladder,
    _bench_load,
    _bench_neighbour,
    _bench_referee,
    _bench_scale,
)
from ._plain_game import play_plain_games

DESCRIPTION = """\
Measure throughput. Prints one JSON line with the result.

  engine   house:random vs house:random in this one process, through the one match
           loop (tacocat.referee, --batch games at once): games per second (the
           median of --repeat runs, after one warm-up run), and which form of the
           engine ran ("compiled (mypyc)" after ./dev setup, or "pure Python");
           interleaved with it, the same number of games of a plain implementation of
           RULES.md (tacocat/cli/_plain_game.py) with the same random policy: its
           games per second, both sides' decisions per game, and "ratio": the
           engine's decisions per second over the plain one's, the median of the
           per-run ratios (per decision, so that a few longer games weigh nothing)
  referee  live decisions per second and turnaround through one gRPC referee process,
           with --clients live clients in separate processes on loopback
  ladder   a full round robin of 8 submitted bots through Redis, RQ workers and the
           sandbox, on 2 workers and on 1: games per second, speedup, overhead share
  load     --clients live clients for --seconds against one server while a ladder runs
           on the workers: errors, p50/p99 decision latency, lost ladder results
  scale    --bots bots in one ladder through the real arena (Redis, scheduler,
           recording, refits) with results drawn from known strengths, no bot
           processes: throughput, latencies, refit time, convergence, waits
  chaos    faults across hosts made of network namespaces (root): worker kills, pauses,
           partitions, Redis killed, a full Redis disk, serve restarted: lost and
           double-counted matches (0 expected) and recovery times
  neighbour  sandboxed match times on core 0 alone, then with a background-spinning bot
           playing on core 1: p50/p99 side by side
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("bench", help="run a benchmark (engine, ...)", description=DESCRIPTION,
                       formatter_class=argparse.RawTextHelpFormatter)
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    e = kinds.add_parser("engine", help="games per second of the rules engine, one process")
    e.add_argument("--games", type=int, default=5000, help="games per run (default 5000)")
    e.add_argument("--repeat", type=int, default=3, help="timed runs; the median is reported")
    e.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="K",
                   help=f"games played at once (default {DEFAULT_BATCH})")
    e.set_defaults(run=bench_engine)
    _bench_referee.add_parser(kinds)
    _bench_ladder.add_parser(kinds)
    _bench_load.add_parser(kinds)
    _bench_scale.add_parser(kinds)
    _bench_chaos.add_parser(kinds)
    _bench_neighbour.add_parser(kinds)


def bench_engine(args: argparse.Namespace) -> int:
    names = ("house:random#1", "house:random#2")

    def engine_run(games: int, tag: str) -> tuple[float, int]:
        start = time.perf_counter()
        played = play_in_process(lambda: RandomBot(1), lambda: RandomBot(2),
                                 duplicate_pairs(games, f"bench-{tag}"), names=names,
                                 rules=STANDARD, batch=args.batch)
        seconds = time.perf_counter() - start
        return seconds, sum(_decisions(game.record.rounds) for game in played.games)

    def plain_run(games: int, tag: str) -> tuple[float, int]:
        start = time.perf_counter()
        _, decisions = play_plain_games(games, f"bench-{tag}")
        return time.perf_counter() - start, decisions

    engine_run(min(args.games, 1000), "warmup")
    plain_run(min(args.games, 300), "warmup")
    # Interleaved, so that both sides see the same moments of a shared machine.
    runs = [(engine_run(args.games, str(r)), plain_run(args.games, str(r)))
            for r in range(max(args.repeat, 1))]
    engine_seconds = statistics.median(e for (e, _), _ in runs)
    plain_seconds = statistics.median(p for _, (p, _) in runs)
    print(json.dumps({
        "games": args.games, "seconds": round(engine_seconds, 4),
        "games_per_second": round(args.games / engine_seconds, 1),
        "runs": [round(args.games / e, 1) for (e, _), _ in runs],
        "batch": args.batch, "engine": ENGINE_FORM,
        "plain_games_per_second": round(args.games / plain_seconds, 1),
        "ratio": round(statistics.median((ed / e) / (pd / p) for (e, ed), (p, pd) in runs), 2),
        "decisions_per_game": round(runs[0][0][1] / args.games, 1),
        "plain_decisions_per_game": round(runs[0][1][1] / args.games, 1)}))
    return 0


def _decisions(rounds: Sequence[Round]) -> int:
    """The decisions a game's record shows: replaces, duel cards, attacks and answers."""
    return sum(2 + 2 * len(r.duels) + 2 * len(r.tricks) for r in rounds)
