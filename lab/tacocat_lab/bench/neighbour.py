"""``tacocat bench neighbour``: match times on one core, with and without a hostile bot's
background spinners in a match on the other core (docs/SECURITY.md, "one bound per bot")."""

from __future__ import annotations

import argparse
import json
import multiprocessing
import multiprocessing.synchronize
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tacocat.engine import STANDARD, Fault, duplicate_pairs
from tacocat.worker import BotSpec, Launcher, MatchPlayer, WorkerSettings

_GOOD = "from tacocat.engine.bots import GreedyBot\n\n\nclass Good(GreedyBot):\n    pass\n"
_SPINNER_SOURCE = '''import os
import threading

from tacocat.engine.bots import GreedyBot

_started = False


def _spin():
    try:  # onto every core, as a hostile bot would (the sandbox refuses it)
        os.sched_setaffinity(0, range(os.cpu_count() or 1))
    except OSError:
        pass
    n = 0
    while True:
        n += 1


class Spinner(GreedyBot):
    """Answers in time, leaves three children and two threads spinning on every core."""

    def duel(self, obs):
        global _started
        if not _started:
            _started = True
            for _ in range(3):
                if os.fork() == 0:
                    _spin()
            for _ in range(2):
                threading.Thread(target=_spin, daemon=True).start()
        return super().duel(obs)
'''


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = kinds.add_parser(
        "neighbour", help="match times on one core with a spinner on the other",
        description="Sandboxed matches (greedy vs greedy, --games each) on core 0, timed "
                    "one by one: first alone, then while matches of a bot that leaves "
                    "children and threads spinning run on core 1. Prints one JSON line "
                    "per phase (p50, p99, max) and their ratios. Needs bubblewrap and two "
                    "cores.")
    p.add_argument("--matches", type=int, default=30, help="timed matches per phase")
    p.add_argument("--games", type=int, default=20, help="games per match (default 20)")
    p.add_argument("--time-limit", type=float, default=1.0, help="seconds per decision")
    p.set_defaults(run=bench_neighbour)


def _bot(root: Path, name: str, source: str) -> BotSpec:
    folder = root / name
    folder.mkdir(mode=0o755)
    (folder / "bot.py").write_text(source)
    (folder / "bot.py").chmod(0o644)
    return BotSpec(f"{name}@1", folder)


def _match(launcher: Launcher, a: BotSpec, b: BotSpec, games: int, limit: float,
           seed: str) -> tuple[float, int]:
    """Seconds of one match (bot starts included) and the spinner side's timeouts."""
    started = time.perf_counter()
    with MatchPlayer(launcher, a, b, STANDARD, time_limit=limit) as player:
        played = player.play(duplicate_pairs(games, seed))
    timeouts = sum(r.result.fault is Fault.TIMEOUT for r in played.records)
    return time.perf_counter() - started, timeouts


def _quantiles(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    return {"p50": round(statistics.median(ordered), 4), "p99": round(p99, 4),
            "max": round(ordered[-1], 4)}


def _neighbour(cpu: int, folder: str, games: int, limit: float,
               stop: multiprocessing.synchronize.Event, timeouts: Any) -> None:
    """Another worker: pinned to ``cpu``, it plays the spinner's matches until ``stop``."""
    os.sched_setaffinity(0, {cpu})
    launcher = Launcher(WorkerSettings().sandbox_policy(), sandbox=True, cpu=cpu)
    victim, spinner = (BotSpec(f"{name}@1", Path(folder) / name) for name in ("victim",
                                                                            "spinner"))
    n = 0
    while not stop.is_set():
        timeouts.value += _match(launcher, victim, spinner, games, limit, f"n{n}")[1]
        n += 1


def bench_neighbour(args: argparse.Namespace) -> int:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("bench neighbour needs two cores; this process may use only", cpus)
        return 2
    measured = {}
    spawn = multiprocessing.get_context("spawn")
    timeouts = spawn.Value("i", 0)
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-") as folder:
        root = Path(folder)
        root.chmod(0o755)
        a, b = _bot(root, "a", _GOOD), _bot(root, "b", _GOOD)
        _bot(root, "spinner", _SPINNER_SOURCE)
        _bot(root, "victim", _GOOD)
        # As a worker with --pinning all: this referee and its bots on one core.
        os.sched_setaffinity(0, {cpus[0]})
        timed = Launcher(WorkerSettings().sandbox_policy(), sandbox=True, cpu=cpus[0])
        for phase in ("alone", "spinner_on_other_core"):
            stop = spawn.Event()
            other = spawn.Process(target=_neighbour, args=(cpus[1], folder, args.games,
                                                           args.time_limit, stop, timeouts))
            if phase != "alone":
                other.start()
                time.sleep(2.0)  # its first match started, its spinners run
            times = []
            try:
                for m in range(args.matches):
                    times.append(_match(timed, a, b, args.games, args.time_limit, f"m{m}")[0])
                    print(f"{phase}: match {m + 1}/{args.matches} {times[-1]:.3f} s",
                          file=sys.stderr, flush=True)
            finally:
                stop.set()
                if other.is_alive():
                    other.join(60)
                    if other.is_alive():
                        other.kill()
            measured[phase] = _quantiles(times)
            print(json.dumps({"phase": phase, "matches": args.matches, "games": args.games,
                              **measured[phase]}))
    base, loaded = measured["alone"], measured["spinner_on_other_core"]
    print(json.dumps({"p50_ratio": round(loaded["p50"] / base["p50"], 3),
                      "p99_ratio": round(loaded["p99"] / base["p99"], 3),
                      "spinner_timeout_forfeits": timeouts.value,
                      "load_average": os.getloadavg()[0]}))
    return 0
