"""``tacocat bench chaos``: the arena's exactly-once promise under faults across hosts.

Builds hosts out of Linux network namespaces on one bridge (needs root): Redis on one,
``tacocat serve`` on another where a fault needs it, a ``tacocat worker`` on each of two
more, every one reaching Redis by its address on the bridge. For each fault, on fresh
hosts and an empty Redis: submit bots, play a ladder, inject the fault while matches run,
wait for the ladder to finish and count.

  kill          SIGKILL a random supervisor, RQ worker or work horse --kills times at
                random moments (a killed supervisor is started again)
  pause         SIGSTOP a busy worker host's whole process tree for 3 leases, then SIGCONT
  short_pause   SIGSTOP a busy worker host's tree for 5 s, shorter than the lease (10 s for
                this fault, or --lease if longer): its run records the match, and no bot may
                be charged for the pause (forfeits_charged, target 0)
  partition     take a busy worker host's port on the bridge down for 3 leases, then up
  redis_kill    SIGKILL Redis twice mid-ladder, start it again on the same data
  full_disk     fill Redis' data volume (a 16 MiB tmpfs) for 6 s mid-ladder, then free it
  serve_restart restart `tacocat serve` mid-ladder and during a live game
  slow_network  the whole ladder with every worker reaching Redis over a slow, lossy link
                (+50 ms round trips, 1% of chunks +200 ms; a relay, as there is no netem)
  fsync_cost    record the same matches under appendfsync everysec, everysec + WAITAOF
                (the arena's setting) and always: median ms per recorded match

Prints progress on stderr, a table at the end (stderr), and one JSON line per fault on
stdout: scheduled, recorded, duplicates_refused, lost, double_counted,
games_in_leaderboard vs games_expected, and recovery_seconds (per injection: from a kill
to the victim's match recorded; from the stall to the match recorded; from Redis or space
back to the next result).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from tacocat_lab.chaos.cluster import Cluster
    from tacocat_lab.chaos.ladder import Counts, Ladder

FAULTS: Final = ("kill", "pause", "short_pause", "partition", "redis_kill", "full_disk",
                 "serve_restart", "slow_network", "fsync_cost")


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doc = __doc__ or ""
    p = kinds.add_parser("chaos", help="faults across namespace hosts: lost and double-counted "
                                       "matches (root)", description=doc.split("\n\n", 1)[1],
                         formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--faults", default=",".join(FAULTS), metavar="LIST",
                   help=f"comma-separated, from {', '.join(FAULTS)} (default: all)")
    p.add_argument("--kills", type=int, default=50, help="kills of the kill fault (default 50)")
    p.add_argument("--lease", type=float, default=3.0, help="the workers' --lease (default 3)")
    p.add_argument("--seed", type=int, default=1, help="random seed of the kills (default 1)")
    p.add_argument("--insecure-no-sandbox", action="store_true",
                   help="run the bots without the sandbox")
    p.set_defaults(run=bench_chaos)


def bench_chaos(args: argparse.Namespace) -> int:
    from tacocat_lab.chaos.hosts import NetworkError, check_support  # noqa: PLC0415

    faults = [f.strip() for f in args.faults.split(",") if f.strip()]
    unknown = [f for f in faults if f not in FAULTS]
    if unknown or not faults or args.kills < 1 or args.lease <= 0:
        print(f"tacocat bench chaos: unknown fault {', '.join(unknown)}; choose from "
              f"{', '.join(FAULTS)} (and --kills >= 1, --lease > 0)" if unknown else
              "tacocat bench chaos: name at least one fault, --kills >= 1, --lease > 0",
              file=sys.stderr)
        return 2
    try:
        check_support()
    except NetworkError as exc:
        print(f"tacocat bench chaos: {exc}", file=sys.stderr)
        return 2
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="tacocat-chaos-") as folder:
        for fault in faults:
            started = time.monotonic()
            _say(f"chaos: {fault} ...")
            result = _run(fault, Path(folder) / fault, args)
            _say(f"chaos: {fault} done in {time.monotonic() - started:.0f} s")
            print(json.dumps(result), flush=True)
            results.append(result)
    _table(results)
    return 0 if all(r.get("ok", True) for r in results) else 1


def _run(fault: str, folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    from tacocat_lab.chaos import faults as chaos  # noqa: PLC0415
    from tacocat_lab.chaos.cluster import Cluster, ClusterSettings  # noqa: PLC0415
    from tacocat_lab.chaos.hosts import tmpfs  # noqa: PLC0415
    from tacocat_lab.chaos.ladder import Ladder, LadderSpec  # noqa: PLC0415
    from tacocat_lab.chaos.persistence import record_costs  # noqa: PLC0415

    folder.mkdir(parents=True)
    if fault == "fsync_cost":
        runs = [record_costs(folder / f"run{i}", bots=16) for i in range(3)]
        return {"fault": fault, "record_ms": {mode: round(sorted(r[mode] for r in runs)[1], 2)
                                              for mode in runs[0]}, "runs": 3}
    small = LadderSpec(bots=3, games_per_pairing=32, games_per_match=8)
    inject: dict[str, tuple[LadderSpec, Callable[[Cluster, Ladder], Counts]]] = {
        "kill": (LadderSpec(bots=4, games_per_pairing=96, games_per_match=8),
                 lambda c, lad: chaos.kill_workers(c, lad, args.kills,
                                                   random.Random(args.seed), _say)),
        "pause": (small, lambda c, lad: chaos.pause_worker(c, lad, _say)),
        "short_pause": (small, lambda c, lad: chaos.short_pause(c, lad, _say)),
        "partition": (small, lambda c, lad: chaos.partition_worker(c, lad, _say, factor=3.0)),
        "redis_kill": (small, lambda c, lad: chaos.kill_redis(c, lad, _say, kills=2)),
        "full_disk": (small, lambda c, lad: chaos.fill_disk(c, lad, _say)),
        "serve_restart": (small, lambda c, lad: chaos.restart_serve(c, lad, _say)),
        "slow_network": (small, lambda c, lad: chaos.slow_network(c, lad, _say)),
    }
    spec, run = inject[fault]
    volume: contextlib.AbstractContextManager[Path | None] = (
        tmpfs(folder, chaos.REDIS_VOLUME_KB) if fault == "full_disk" else contextlib.nullcontext())
    with volume as redis_dir:
        # The short pause must be shorter than the lease (its match is not re-run).
        lease = max(args.lease, 2 * chaos.SHORT_PAUSE) if fault == "short_pause" else args.lease
        settings = ClusterSettings(lease=lease, sandbox=not args.insecure_no_sandbox,
                                         serve=fault in ("full_disk", "serve_restart"),
                                         redis_dir=redis_dir, slow_link=fault == "slow_network")
        with Cluster(folder / "hosts", settings) as cluster:
            ladder = Ladder(cluster, spec)
            ladder.start()
            counts = run(cluster, ladder)
    result = counts.to_json()
    # A host's pause charged to a bot is a wrong result too (the target is 0).
    result["ok"] = counts.ok and not counts.notes.get("forfeits_charged", 0)
    if fault == "short_pause":
        _say(f"chaos: short_pause: {counts.notes['forfeits_charged']} forfeit(s) charged during "
             f"the pause (target 0), {counts.notes['failures_counted']} bot failure(s) counted")
    return result


def _table(results: list[dict[str, Any]]) -> None:
    head = ("fault", "injected", "scheduled", "recorded", "refused dup", "lost", "double",
            "games board/expected", "recovery s (median, max)")
    rows = [head]
    for r in results:
        if r["fault"] == "fsync_cost":
            rows.append((r["fault"], "", "", "", "", "", "", "",
                         " ".join(f"{k} {v} ms" for k, v in r["record_ms"].items())))
            continue
        recovery = r["recovery_seconds"]
        rows.append((r["fault"], str(r["injections"]), str(r["scheduled"]), str(r["recorded"]),
                     str(r["duplicates_refused"]), str(r["lost"]), str(r["double_counted"]),
                     f"{r['games_in_leaderboard']}/{r['games_expected']}",
                     f"{statistics.median(recovery):.1f}, {max(recovery):.1f}"
                     if recovery else "-"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        _say("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)))


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)
