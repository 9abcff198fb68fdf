"""``tacocat bench languages``: what a decision and a start cost a bot in each language.

The starters of ``tacocat new-bot --language`` (Python, JavaScript, C: the same strategy in
each) are written into a temporary folder (C built), then, taking turns in every repeat so
all three see the same moments of a shared machine:

- **start**: a bot process started until its ``Hello`` (what a worker pays per bot per
  match, and again for each restart), ``--starts`` times each;
- **decision**: a match of ``--games`` games against ``house:random`` (in this process)
  through the one match loop, the bot in its own process: the bot process's CPU time
  after its start (all its threads, the scheduler's count) per decision it made, decoding
  and encoding included, and the match's wall time per decision.

Medians over ``--repeat`` runs, and each language's ratio to Python's (the same run's).
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Final

from tacocat.cli import build_bot_folder as build
from tacocat.cli import write_bot, write_starter
from tacocat.engine import STANDARD, duplicate_pairs
from tacocat.engine.bots import RandomBot
from tacocat.protocol.manifest import load_manifest, program_argv
from tacocat.referee import HostProcess, InProcessSeat, ProcessSeat, play_match

LANGUAGES: Final = ("python", "javascript", "c")

DESCRIPTION = __doc__.split("\n\n", 1)[1] if __doc__ else ""


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = kinds.add_parser("languages", help="cost per decision and per start of the JavaScript "
                         "and C starters against the Python one", description=DESCRIPTION,
                         formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--games", type=int, default=200, help="games per match (default 200)")
    p.add_argument("--starts", type=int, default=10, help="starts per run (default 10)")
    p.add_argument("--repeat", type=int, default=5, help="runs; medians reported (default 5)")
    p.add_argument("--batch", type=int, default=64, help="games at once (default 64)")
    p.set_defaults(run=bench_languages)


def _host(folder: Path, language: str) -> HostProcess:
    if language == "python":
        return HostProcess(str(folder / "bench.py"))
    manifest = load_manifest(folder)
    return HostProcess(str(folder), command=program_argv(manifest.command, folder), cwd=folder)


def _cpu_seconds(pid: int) -> float:
    """CPU time of every thread of ``pid`` (the scheduler's nanoseconds: ``/proc/PID/stat``'s
    clock ticks are 10 ms, longer than a C bot's whole match)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # a thread that just ended
            continue
    return total / 1e9


def _start_seconds(folder: Path, language: str) -> float:
    host = _host(folder, language)
    began = time.perf_counter()
    host.start()
    took = time.perf_counter() - began
    host.close()
    return took


def _match(folder: Path, language: str, games: int, batch: int, tag: str
           ) -> tuple[float, float, int]:
    """The bot's CPU seconds, the match's wall seconds and the bot's decisions."""
    decisions = [0]

    def count(_: float) -> None:
        decisions[0] += 1

    host = _host(folder, language)
    host.start()
    assert host.pid is not None
    started_cpu = _cpu_seconds(host.pid)  # its start is measured apart
    seat = ProcessSeat(host, 1.0, on_decision=count)
    began = time.perf_counter()
    try:
        play_match((seat, InProcessSeat(lambda: RandomBot(7))),
                   duplicate_pairs(games, f"bench-languages-{tag}"),
                   names=(language, "house:random"), rules=STANDARD, batch=batch)
        wall = time.perf_counter() - began
        cpu = _cpu_seconds(host.pid) - started_cpu
    finally:
        host.close()
    return cpu, wall, decisions[0]


def bench_languages(args: argparse.Namespace) -> int:
    with tempfile.TemporaryDirectory(prefix="tacocat-bench-languages-") as root:
        folders = {}
        for language in LANGUAGES:
            parent = Path(root, language)
            if language == "python":
                folder = write_bot("bench", parent)[0].parent
            else:
                folder = write_starter("bench", language, parent)[0].parent
                build(folder, load_manifest(folder).build)
            folders[language] = folder
        starts: dict[str, list[float]] = {lang: [] for lang in LANGUAGES}
        cpu: dict[str, list[float]] = {lang: [] for lang in LANGUAGES}
        wall: dict[str, list[float]] = {lang: [] for lang in LANGUAGES}
        for language in LANGUAGES:  # warm-up: caches, bytecode, the page cache
            _start_seconds(folders[language], language)
        for run in range(max(args.repeat, 1)):
            for language in LANGUAGES:
                starts[language].append(statistics.median(
                    _start_seconds(folders[language], language) for _ in range(args.starts)))
                used, took, decided = _match(folders[language], language, args.games,
                                             args.batch, str(run))
                cpu[language].append(used / max(decided, 1))
                wall[language].append(took / max(decided, 1))

    def us(values: list[float]) -> float:
        return round(statistics.median(values) * 1e6, 1)

    def ratio(values: dict[str, list[float]], language: str) -> float:
        return round(statistics.median(v / p for v, p in zip(values[language], values["python"],
                                                               strict=True)), 2)

    print(json.dumps({
        "games": args.games, "starts": args.starts, "repeat": args.repeat, "batch": args.batch,
        "load_average": Path("/proc/loadavg").read_text().split()[:3],
        **{language: {
            "start_ms": round(statistics.median(starts[language]) * 1000, 2),
            "start_ratio": ratio(starts, language),
            "decision_cpu_us": us(cpu[language]),
            "decision_cpu_ratio": ratio(cpu, language),
            "decision_wall_us": us(wall[language]),
            "decision_wall_ratio": ratio(wall, language),
        } for language in LANGUAGES}}))
    return 0
