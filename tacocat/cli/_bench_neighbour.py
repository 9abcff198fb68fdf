"""``tacocat bench neighbour``: match times on one core, with and without a hostile bot's
background spinners in a match on the other core (docs/SECURITY.md, "one bound per bot")."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import threading
import time
from pathlib import Path

from tacocat.engine import STANDARD, Fault, duplicate_pairs
from tacocat.worker import BotSpec, Launcher, MatchPlayer, WorkerSettings

_GOOD = "from tacocat.engine.bots import GreedyBot\n\n\nclass Good(GreedyBot):\n    pass\n"
_SPINNER_SOURCE = '''import os
import threading

from tacocat.engine.bots import GreedyBot

_started = False


def _spin():
    n = 0
    while True:
        n += 1


class Spinner(GreedyBot):
    """Answers in time, leaves three children and two threads spinning."""

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


def bench_neighbour(args: argparse.Namespace) -> int:
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        print("bench neighbour needs two cores; this process may use only", cpus)
        return 2
    policy = WorkerSettings().sandbox_policy()
    measured, spinner_forfeits = {}, 0
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-") as folder:
        root = Path(folder)
        root.chmod(0o755)
        a, b = _bot(root, "a", _GOOD), _bot(root, "b", _GOOD)
        spinner, victim = _bot(root, "spinner", _SPINNER_SOURCE), _bot(root, "victim", _GOOD)
        timed = Launcher(policy, sandbox=True, cpu=cpus[0])
        other = Launcher(policy, sandbox=True, cpu=cpus[1])
        for phase in ("alone", "spinner_on_other_core"):
            stop = threading.Event()
            forfeits: list[int] = []

            def neighbour(stop: threading.Event = stop, forfeits: list[int] = forfeits) -> None:
                n = 0
                while not stop.is_set():
                    forfeits.append(_match(other, victim, spinner, args.games,
                                           args.time_limit, f"n{n}")[1])
                    n += 1

            thread = threading.Thread(target=neighbour, daemon=True)
            if phase != "alone":
                thread.start()
                time.sleep(1.0)  # its spinners are running
            times = []
            for m in range(args.matches):
                times.append(_match(timed, a, b, args.games, args.time_limit, f"m{m}")[0])
                print(f"{phase}: match {m + 1}/{args.matches} {times[-1]:.3f} s", end="\r",
                      flush=True)
            stop.set()
            if thread.is_alive():
                thread.join()
            spinner_forfeits += sum(forfeits)
            measured[phase] = _quantiles(times)
            print(json.dumps({"phase": phase, "matches": args.matches, "games": args.games,
                              **measured[phase]}))
    base, loaded = measured["alone"], measured["spinner_on_other_core"]
    print(json.dumps({"p50_ratio": round(loaded["p50"] / base["p50"], 3),
                      "p99_ratio": round(loaded["p99"] / base["p99"], 3),
                      "spinner_timeouts": spinner_forfeits,
                      "load_average": os.getloadavg()[0]}))
    return 0
