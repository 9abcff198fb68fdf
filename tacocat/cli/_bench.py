"""``tacocat bench``: throughput benchmarks that print one JSON line each."""

from __future__ import annotations

import argparse
import json
import statistics
import time

from tacocat.engine import ENGINE_FORM, STANDARD, duplicate_pairs
from tacocat.engine.bots import RandomBot
from tacocat.referee import DEFAULT_BATCH, play_in_process

from . import (
    _bench_chaos,
    _bench_ladder,
    _bench_load,
    _bench_neighbour,
    _bench_referee,
    _bench_refit,
    _bench_scale,
)

DESCRIPTION = """\
Measure throughput. Prints one JSON line with the result.

  engine   house:random vs house:random in this one process, through the one match
           loop (tacocat.referee, --batch games at once): games per second (the
           median of --repeat runs, after one warm-up run), and which form of the
           engine ran ("compiled (mypyc)" after ./dev setup, or "pure Python")
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
    _bench_refit.add_parser(kinds)
    _bench_chaos.add_parser(kinds)
    _bench_neighbour.add_parser(kinds)


def bench_engine(args: argparse.Namespace) -> int:
    names = ("house:random#1", "house:random#2")

    def one_run(games: int, tag: str) -> float:
        start = time.perf_counter()
        play_in_process(lambda: RandomBot(1), lambda: RandomBot(2),
                        duplicate_pairs(games, f"bench-{tag}"), names=names, rules=STANDARD,
                        batch=args.batch)
        return time.perf_counter() - start

    one_run(min(args.games, 1000), "warmup")
    runs = [one_run(args.games, str(r)) for r in range(max(args.repeat, 1))]
    seconds = statistics.median(runs)
    print(json.dumps({"games": args.games, "seconds": round(seconds, 4),
                      "games_per_second": round(args.games / seconds, 1),
                      "runs": [round(args.games / s, 1) for s in runs],
                      "batch": args.batch, "engine": ENGINE_FORM}))
    return 0
