"""``tacocat bench``: throughput benchmarks that print one JSON line each.

``tacocat``'s ``bench`` command is a hook that calls :func:`add_parser` when this package is
installed (``./dev setup``, or ``pip install -e lab/``); each benchmark is a module here with
an ``add_parser(kinds)`` of its own.
"""

from __future__ import annotations

import argparse
import textwrap

from . import chaos, engine, ladder, languages, load, neighbour, referee, refit, scale

__all__ = ["DESCRIPTION", "add_parser"]

DESCRIPTION = f"""\
Measure throughput. Prints one JSON line with the result.

  engine   {textwrap.indent(engine.ENGINE_DESCRIPTION, ' ' * 11).strip()}
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
    """Add ``bench`` and its benchmarks to the ``tacocat`` command's subcommands."""
    p = sub.add_parser("bench", help="run a benchmark (engine, ...)", description=DESCRIPTION,
                       formatter_class=argparse.RawTextHelpFormatter)
    kinds = p.add_subparsers(dest="kind", required=True, metavar="KIND")
    for bench in (engine, referee, ladder, load, scale, refit, chaos, neighbour, languages):
        bench.add_parser(kinds)
