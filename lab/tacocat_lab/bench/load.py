"""``tacocat bench load``: a bounded loopback load test of one server while a ladder runs.

Starts ``tacocat worker`` (``--workers`` RQ workers, sandboxed bots where bubblewrap works) on
a ladder of ``--bots`` submitted bots, and one ``tacocat serve`` with the arena, on the same
Redis. Then ``--clients`` live clients, spread over ``--procs`` client processes (concurrent
streams on one event loop each, one gRPC connection per game), play one game after another
against ``house:greedy`` for ``--seconds`` seconds. Everything runs on loopback and stops
by itself: the clients start no game after the deadline, and the ladder is bounded.

Checked and reported: errors (a failed stream, a game without a result, a client process
that failed), live games and decisions, p50/p99 decision latency (the client's wait between
answering and being asked again: the referee's turnaround, both network legs and the house
bot's move), and the ladder: every match scheduled recorded exactly once.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

DESCRIPTION = __doc__.split("\n\n", 1)[1] if __doc__ else ""

LADDER = "load"


def add_parser(kinds: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = kinds.add_parser("load", help="live clients against one server while a ladder runs",
                         description=DESCRIPTION,
                         formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--clients", type=int, default=200, help="live clients (default 200)")
    p.add_argument("--seconds", type=float, default=60.0,
                   help="how long the clients play (default 60)")
    p.add_argument("--procs", type=int, default=0,
                   help="client processes (default: one per 32 clients, at least 2)")
    p.add_argument("--workers", type=int, default=2, help="RQ workers (default 2)")
    p.add_argument("--bots", type=int, default=4, help="bots in the ladder (default 4)")
    p.add_argument("--redis-url", default="",
                   help="a throwaway Redis (default: an embedded one in a temp dir)")
    p.set_defaults(run=bench_load)


def bench_load(args: argparse.Namespace) -> int:
    if args.clients < 1 or args.seconds <= 0 or args.bots < 2 or args.workers < 1:
        print("tacocat bench load: needs --clients >= 1, --seconds > 0, --bots >= 2, "
              "--workers >= 1", file=sys.stderr)
        return 2
    from tacocat.arena import redis_url_or_embedded  # noqa: PLC0415

    with tempfile.TemporaryDirectory(prefix="tacocat-bench-load-") as folder, \
            redis_url_or_embedded(args.redis_url or None, Path(folder) / "valkey") as url:
        report = run_load(url, clients=args.clients, seconds=args.seconds, procs=args.procs,
                          workers=args.workers, bots=args.bots, folder=Path(folder))
    print(json.dumps(report))
    return 0 if report["errors"] == 0 and report["ladder_ok"] else 1


def _bot_source(i: int) -> bytes:
    base = ("GreedyBot", "RandomBot")[i % 2]
    return textwrap.dedent(f"""\
        from tacocat.engine.bots import {base}


        class Load{i}({base}):
            name = "load{i}"
        """).encode()


def run_load(redis_url: str, *, clients: int, seconds: float, procs: int = 0,
             workers: int = 2, bots: int = 4, folder: Path,
             ladder_timeout: float = 180.0) -> dict[str, Any]:
    """Run the load test against the (empty) Redis at ``redis_url``; returns the report.

    ``folder`` receives the server's and the worker's logs."""
    import redis as redis_py  # noqa: PLC0415 - only the bench needs Redis here

    from tacocat.arena import Arena, MatchStatus  # noqa: PLC0415
    from tacocat.worker import worker_stats  # noqa: PLC0415
    from tacocat.worker.sandbox import sandbox_available  # noqa: PLC0415

    redis = redis_py.Redis.from_url(redis_url)
    arena = Arena(redis)
    token = arena.users.bootstrap_admin()
    if token is None:
        raise SystemExit("tacocat bench load: the Redis is not empty (an admin exists)")
    admin = arena.users.authenticate(token)
    # About as long as the window on 2 workers under load, bounded all the same.
    arena.ladders.create(admin, LADDER, games_per_pairing=20 * max(2, round(seconds / 15)),
                         games_per_match=20, decision_seconds=2.0)
    for i in range(bots):
        arena.users.create(admin, f"owner{i}")
        user = arena.users.authenticate(arena.users.create_token(admin, f"owner{i}"))
        version = arena.bots.submit(user, "bot", "bot.py", _bot_source(i))
        arena.bots.activate(version.id)
        arena.ladders.join(user, "bot", LADDER)

    worker_cmd = [sys.executable, "-m", "tacocat.cli", "worker", "--redis-url", redis_url,
                  "--workers", str(workers), "--wait", "1"]
    if not sandbox_available():
        worker_cmd.append("--insecure-no-sandbox")  # our own bots; the figures stay honest
    serve_cmd = [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0",
                 "--redis-url", redis_url, "--no-web", "--log-level", "WARNING",
                 "--time-limit", "30", "--no-rate-limits",
                 # Anonymous loopback clients are one "player": each may have one match
                 # running and, for a moment after its last result, one being released.
                 "--max-matches-per-player", str(2 * clients + 8)]
    processes: list[subprocess.Popen[Any]] = []
    logs = [(folder / "worker.log").open("wb"), (folder / "serve.log").open("wb")]
    try:
        worker = subprocess.Popen(worker_cmd, stdout=logs[0], stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, start_new_session=True)
        processes.append(worker)
        serve = subprocess.Popen(serve_cmd, stdout=subprocess.PIPE, stderr=logs[1],
                                 stdin=subprocess.DEVNULL, text=True, start_new_session=True)
        processes.append(serve)
        assert serve.stdout is not None
        line = serve.stdout.readline()
        if "listening on" not in line:
            raise SystemExit(f"tacocat bench load: the server did not start: {line!r}")
        address = line.rsplit(" ", 1)[1].strip()

        started = time.monotonic()
        clients_report = _run_clients(address, clients, procs or max(2, (clients + 31) // 32),
                                      seconds)
        load_seconds = time.monotonic() - started
        status_at_end = arena.ladders.status(LADDER)

        # The ladder, bounded, finishes on the workers; then every match is checked.
        deadline = time.monotonic() + ladder_timeout
        while time.monotonic() < deadline:
            status = arena.ladders.status(LADDER)
            if status.matches_scheduled and not status.matches_pending \
                    and status.games_played >= status.games_target:
                break
            time.sleep(0.2)
        status = arena.ladders.status(LADDER)
        matches = arena.matches.of_ladder(LADDER, count=10_000)
        recorded = [m.id for m in matches if m.status is MatchStatus.RECORDED]
        log = [e.match for e in arena.ladders.recent_matches(LADDER, count=10_000)]
        stats = worker_stats(redis)
        serve_alive = serve.poll() is None
    finally:
        for proc in reversed(processes):
            _stop(proc)
        for f in logs:
            f.close()
        redis.close()

    ladder_ok = (serve_alive and status.games_played == status.games_target
                 and len(recorded) == len(matches) == status.matches_scheduled
                 and sorted(log) == sorted(recorded) and len(set(log)) == len(log))
    decisions = clients_report["decisions"]
    return {
        "clients": clients,
        "seconds": round(load_seconds, 1),
        "decisions": decisions,
        "decisions_per_second": round(decisions / max(load_seconds, 1e-9), 1),
        "live_games": clients_report["games"],
        "errors": clients_report["errors"],
        "error_samples": clients_report["error_samples"],
        "p50_ms": clients_report["p50_ms"],
        "p99_ms": clients_report["p99_ms"],
        "max_ms": clients_report["max_ms"],
        "ladder_matches_scheduled": len(matches),
        "ladder_matches_recorded": len(recorded),
        "ladder_matches_logged": len(log),
        "ladder_matches_recorded_during_load": status_at_end.matches_recorded,
        "ladder_games": status.games_played,
        "ladder_games_target": status.games_target,
        "ladder_duplicates": int(stats.get("duplicates", 0)),
        "ladder_ok": ladder_ok,
        "server_alive": serve_alive,
    }


def _stop(proc: subprocess.Popen[Any]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(20)
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _run_clients(address: str, clients: int, procs: int, seconds: float) -> dict[str, Any]:
    procs = max(1, min(procs, clients))
    deadline = time.time() + seconds
    shares = [clients // procs + (1 if i < clients % procs else 0) for i in range(procs)]
    children = []
    first = 0
    for share in shares:
        children.append(subprocess.Popen(
            [sys.executable, "-c", _CLIENT_MAIN, address, str(first), str(share),
             repr(deadline)], stdout=subprocess.PIPE, text=True))
        first += share
    waits: list[float] = []
    decisions = games = errors = 0
    samples: list[str] = []
    for child in children:
        try:
            out, _ = child.communicate(timeout=seconds + 120)
        except subprocess.TimeoutExpired:
            child.kill()
            out, _ = child.communicate()
        if child.returncode != 0:
            errors += 1
            samples.append(f"a client process exited with {child.returncode}")
        for line in out.splitlines():
            if not line.strip():
                continue
            report = json.loads(line)
            waits.extend(report["waits"])
            decisions += report["decisions"]
            games += report["games"]
            errors += len(report["errors"])
            samples.extend(report["errors"][:3])
    waits.sort()
    return {"decisions": decisions, "games": games, "errors": errors,
            "error_samples": samples[:10],
            "p50_ms": round(_percentile(waits, 0.50) * 1000, 2),
            "p99_ms": round(_percentile(waits, 0.99) * 1000, 2),
            "max_ms": round(waits[-1] * 1000, 2) if waits else float("nan")}


def _percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return float("nan")
    return values[min(len(values) - 1, int(q * len(values)))]


async def _one_client(address: str, number: int, deadline: float) -> dict[str, Any]:
    from tacocat.sdk import connect_async  # noqa: PLC0415 - only the client processes

    from .referee import TimedGreedy  # noqa: PLC0415

    bot = TimedGreedy()
    games = 0
    errors: list[str] = []
    options = [("grpc.use_local_subchannel_pool", 1)]  # one connection per client
    while time.time() < deadline:
        try:
            results = await connect_async(bot.itself, address, None, games=1,
                                          opponent="house:greedy",
                                          name=f"load{number}", options=options, timeout=120)
        except Exception as exc:  # every failure is counted and reported
            errors.append(f"client {number}: {type(exc).__name__}: {exc}"[:300])
            await asyncio.sleep(0.5)
            continue
        if len(results) != 1 or results[0].outcome is None:
            errors.append(f"client {number}: game without a result: {results!r}"[:300])
        games += len(results)
    return {"waits": [round(w, 6) for w in bot.waits], "decisions": len(bot.times),
            "games": games, "errors": errors}


async def _clients(address: str, first: int, count: int, deadline: float) -> None:
    reports = await asyncio.gather(*(_one_client(address, first + i, deadline)
                                     for i in range(count)))
    for report in reports:
        print(json.dumps(report))


def client_main(argv: Sequence[str]) -> None:
    """A client process: ``ADDRESS FIRST COUNT DEADLINE``; one JSON line per client."""
    from tacocat.cli import run_async  # noqa: PLC0415

    address, first, count, deadline = argv
    run_async(_clients(address, int(first), int(count), float(deadline)))


_CLIENT_MAIN = ("import sys; from tacocat_lab.bench.load import client_main; "
                "client_main(sys.argv[1:])")
