"""``tacocat bench referee``: live decisions per second through one referee process.

Starts ``tacocat serve`` as its own process, then ``--clients`` live clients spread over
``--procs`` client processes (each runs its share as concurrent streams on one event loop,
one gRPC connection per client), all on loopback. Every client plays ``--games`` games
against ``house:greedy`` with the SDK's ``connect_async`` and a greedy bot that notes when
each of its decisions ends and the next one begins.

- decisions_per_second: live decisions (round trips) answered while every client was
  playing, i.e. over the window from the last client's first decision to the first
  client's last one; house-bot decisions made inside the referee are not counted.
- p50_ms / p99_ms: the client's wait between answering and being asked again (within a
  game): the referee's turnaround including both network legs and the house bot's moves.

- baseline_decisions_per_second / baseline_p50_ms / baseline_p99_ms: the same clients,
  processes and streams against a plain grpc.aio echo server (one message each way per
  round trip, of the sizes the game protocol sends), measured the same way in the same
  invocation; ratio = decisions_per_second / baseline_decisions_per_second.
- with --echo-work-us N, also echo_work_decisions_per_second / echo_work_p99_ms: the same
  echo with N microseconds of CPU spent on each message in the server before it answers,
  and echo_work_ratio (over the plain echo): what that much work per decision costs any
  grpc.aio server here, to compare with what the referee spends (a diagnostic; the plain
  echo above stays the baseline).
- server_cpu_us / clients_cpu_us (and baseline_...): CPU microseconds per decision of the
  server process and of all client processes together (from /proc and each client's
  process_time, over its whole run): where the time goes on each side.

The whole run is repeated ``--repeat`` times against the same referee (and the echo runs
interleaved with them); the figures are the medians over runs (per-run figures are in
"runs").
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tacocat.engine import Observation, Outcome, Ruleset
from tacocat.engine.bots import GreedyBot

from . import echo

DESCRIPTION = __doc__.split("\n\n", 1)[1] if __doc__ else ""


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = kinds.add_parser("referee", help="live decisions per second through the gRPC referee",
                         description=DESCRIPTION,
                         formatter_class=argparse.RawTextHelpFormatter)
    r.add_argument("--clients", type=int, default=64, help="live clients (default 64)")
    r.add_argument("--procs", type=int, default=0,
                   help="client processes (default: one per 16 clients)")
    r.add_argument("--games", type=int, default=16, help="games per client per run")
    r.add_argument("--repeat", type=int, default=3, help="runs; medians are reported")
    r.add_argument("--opponent", default="house:greedy",
                   help="house:NAME, or 'live' to pair the clients with each other")
    r.add_argument("--echo-work-us", type=float, default=0.0, metavar="N",
                   help="also run the echo with N us of CPU per message in its server")
    r.set_defaults(run=bench_referee)


def bench_referee(args: argparse.Namespace) -> int:
    if args.clients < 1 or args.games < 1:
        print("tacocat bench referee: --clients and --games must be at least 1", file=sys.stderr)
        return 2
    procs = args.procs or max(1, (args.clients + 15) // 16)
    command = [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0",
               "--time-limit", "30", "--log-level", "WARNING", "--max-games", "100000",
               "--no-arena", "--no-rate-limits",  # a benchmark, not abuse: no limits
               "--max-matches-per-player", str(args.clients + 1)]
    live = args.opponent == "live"
    if live:
        command += [arg for i in range(args.clients) for arg in ("--player", f"c{i}=t{i}")]
    referee = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert referee.stdout is not None
        line = referee.stdout.readline()
        if "listening on" not in line:
            print(f"tacocat bench referee: the referee did not start: {line!r}", file=sys.stderr)
            return 1
        address = line.rsplit(" ", 1)[1].strip()
        request_bytes, action_bytes = echo.message_sizes()
        runs: list[dict[str, float]] = []
        baselines: list[dict[str, float]] = []
        worked: list[dict[str, float]] = []
        rounds = None
        for _ in range(max(1, args.repeat)):
            runs.append(_one_run(address, referee.pid, args.clients, procs, args.games,
                                 args.opponent))
            # As many round trips per client as a referee client made in its run.
            rounds = rounds or round(runs[-1]["round_trips_per_client"])
            baselines.append(_echo_run(args.clients, procs, rounds, request_bytes,
                                       action_bytes))
            if args.echo_work_us > 0:
                worked.append(_echo_run(args.clients, procs, rounds, request_bytes,
                                        action_bytes, args.echo_work_us))
    finally:
        referee.terminate()
        referee.wait(10)
    rate = statistics.median(r["decisions_per_second"] for r in runs)
    base = statistics.median(r["decisions_per_second"] for r in baselines)
    extra: dict[str, Any] = {}
    if worked:
        work_rate = statistics.median(r["decisions_per_second"] for r in worked)
        extra = {"echo_work_us": args.echo_work_us,
                 "echo_work_decisions_per_second": round(work_rate, 1),
                 "echo_work_p99_ms": round(statistics.median(r["p99_ms"] for r in worked), 2),
                 "echo_work_ratio": _ratio(work_rate, base), "echo_work_runs": worked}
    print(json.dumps({
        "clients": args.clients,
        "decisions_per_second": round(rate, 1),
        "p50_ms": round(statistics.median(r["p50_ms"] for r in runs), 2),
        "p99_ms": round(statistics.median(r["p99_ms"] for r in runs), 2),
        "baseline_decisions_per_second": round(base, 1),
        "baseline_p50_ms": round(statistics.median(r["p50_ms"] for r in baselines), 2),
        "baseline_p99_ms": round(statistics.median(r["p99_ms"] for r in baselines), 2),
        "ratio": _ratio(rate, base),
        **{f"{prefix}{side}_cpu_us": round(statistics.median(r[f"{side}_cpu_us"] for r in rs))
           for prefix, rs in (("", runs), ("baseline_", baselines))
           for side in ("server", "clients")},
        "message_bytes": {"request": request_bytes, "action": action_bytes},
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "runs": runs,
        "baseline_runs": baselines,
        **extra,
    }))
    return 0


def _ratio(rate: float, base: float) -> float | None:
    """``rate / base``; None when a run too short to overlap measured nothing."""
    return round(rate / base, 3) if base > 0 else None


def _echo_run(clients: int, procs: int, rounds: int, request_bytes: int,
              action_bytes: int, work_us: float = 0.0) -> dict[str, float]:
    """The baseline: the same clients against a plain echo server (or one spending
    ``work_us`` of CPU per message), measured alike."""
    with tempfile.TemporaryDirectory(prefix="tacocat-echo-") as folder:
        port_file = Path(folder) / "port"
        server = subprocess.Popen([sys.executable, "-c", echo.SERVER_MAIN,
                                   str(port_file), str(request_bytes), str(work_us)])
        try:
            deadline = time.monotonic() + 30
            while not port_file.exists() or not port_file.read_text():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("tacocat bench referee: the echo server did not start")
                time.sleep(0.02)
            address = f"127.0.0.1:{port_file.read_text()}"
            shares = [clients // procs + (1 if i < clients % procs else 0)
                      for i in range(procs)]
            workers = [subprocess.Popen([sys.executable, "-c", echo.CLIENT_MAIN,
                                         address, str(share), str(rounds), str(action_bytes)],
                                        stdout=subprocess.PIPE, text=True)
                       for share in shares]
            return _measured(server.pid, workers)
        finally:
            server.terminate()
            server.wait(10)


def _one_run(address: str, server_pid: int, clients: int, procs: int, games: int,
             opponent: str) -> dict[str, float]:
    shares = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    workers = []
    first = 0
    for share in shares:
        workers.append(subprocess.Popen(
            [sys.executable, "-c", _CLIENT_MAIN, address, str(first), str(share), str(games),
             opponent], stdout=subprocess.PIPE, text=True))
        first += share
    return _measured(server_pid, workers)


def _measured(server_pid: int, workers: Sequence[subprocess.Popen[str]]) -> dict[str, float]:
    """One run's figures, with the CPU each side spent per decision."""
    before = _cpu_seconds(server_pid)
    reports = _collect(workers)
    server_cpu = _cpu_seconds(server_pid) - before
    clients_cpu = sum(r.pop("cpu") for r in reports if "cpu" in r)
    timed = [r for r in reports if "times" in r]
    figures = _summarise(timed)
    decisions = max(1, sum(len(r["times"]) for r in timed))
    figures["server_cpu_us"] = round(server_cpu / decisions * 1e6, 1)
    figures["clients_cpu_us"] = round(clients_cpu / decisions * 1e6, 1)
    return figures


def _cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` so far, all threads (0 where /proc has
    no such file: the figure is then meaningless, not an error)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _collect(workers: Sequence[subprocess.Popen[str]]) -> list[dict[str, Any]]:
    """Every JSON line of every client process: one per client, then the process's CPU."""
    reports: list[dict[str, Any]] = []
    try:
        for worker in workers:
            out, _ = worker.communicate()
            if worker.returncode != 0:
                raise SystemExit(f"a bench client process failed (exit {worker.returncode})")
            reports.extend(json.loads(line) for line in out.splitlines() if line.strip())
    finally:
        for worker in workers:  # a failed one must not leave the others running
            if worker.poll() is None:
                worker.kill()
                worker.wait()
    return reports


def _summarise(reports: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Round trips per second while every client was busy, and the waits in that window."""
    start = max(r["times"][0] for r in reports)
    end = min(r["times"][-1] for r in reports)
    decisions = sum(sum(1 for t in r["times"] if start <= t <= end) for r in reports)
    waits = sorted(w for r in reports for t, w in zip(r["wait_times"], r["waits"], strict=True)
                   if start <= t <= end)
    return {
        "decisions_per_second": round(decisions / max(end - start, 1e-9), 1),
        "p50_ms": round(_percentile(waits, 0.50) * 1000, 2),
        "p99_ms": round(_percentile(waits, 0.99) * 1000, 2),
        "window_s": round(end - start, 2),
        "decisions": decisions,
        "round_trips_per_client": sum(len(r["times"]) for r in reports) / len(reports),
    }


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


class TimedGreedy(GreedyBot):
    """Greedy, noting when each decision starts and how long it waited since the last one."""

    def __init__(self) -> None:
        self.times: list[float] = []
        self.waits: list[float] = []
        self.wait_times: list[float] = []
        self._last = 0.0

    def itself(self) -> TimedGreedy:
        """A bot factory that always gives this bot: its timings span the whole match."""
        return self

    def on_game_start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        self._last = 0.0

    def _tick(self) -> None:
        now = time.time()
        if self._last:
            self.waits.append(now - self._last)
            self.wait_times.append(now)
        self.times.append(now)

    def _tock(self) -> None:
        self._last = time.time()

    def replace(self, obs: Observation) -> Sequence[int]:
        self._tick()
        try:
            return super().replace(obs)
        finally:
            self._tock()

    def duel(self, obs: Observation) -> int:
        self._tick()
        try:
            return super().duel(obs)
        finally:
            self._tock()

    def attack(self, obs: Observation) -> Sequence[int]:
        self._tick()
        try:
            return super().attack(obs)
        finally:
            self._tock()

    def defend(self, obs: Observation) -> Sequence[int]:
        self._tick()
        try:
            return super().defend(obs)
        finally:
            self._tock()

    def on_game_end(self, outcome: Outcome, seat: int) -> None:
        self._last = 0.0


async def _clients(address: str, first: int, count: int, games: int, opponent: str) -> None:
    from tacocat.sdk import LIVE, connect_async  # noqa: PLC0415 - only the client processes

    bots = [TimedGreedy() for _ in range(count)]
    live = opponent == LIVE
    # One connection per client, as separate players would have.
    options = [("grpc.use_local_subchannel_pool", 1)]
    # ``itself``: every game with the same bot object, which keeps the timings.
    await asyncio.gather(*(
        connect_async(bot.itself, address, f"t{first + i}" if live else None, games=games,
                      opponent=None if live else opponent, name=f"bench{first + i}",
                      options=options)
        for i, bot in enumerate(bots)))
    for bot in bots:
        print(json.dumps({"times": bot.times, "waits": bot.waits,
                          "wait_times": bot.wait_times}))


def client_main(argv: Sequence[str]) -> None:
    """A client process: ``ADDRESS FIRST COUNT GAMES OPPONENT``; one JSON line per client,
    then one with the CPU seconds the process spent playing."""
    from tacocat.cli import run_async  # noqa: PLC0415

    address, first, count, games, opponent = argv
    started = time.process_time()
    run_async(_clients(address, int(first), int(count), int(games), opponent))
    print(json.dumps({"cpu": time.process_time() - started}))


_CLIENT_MAIN = ("import sys; from tacocat_lab.bench.referee import client_main; "
                "client_main(sys.argv[1:])")
