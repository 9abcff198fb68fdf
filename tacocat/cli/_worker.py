"""``tacocat worker``: the arena's RQ workers and the dispatcher."""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from tacocat.arena import DEFAULT_PREFIX, EmbeddedServerError, RedisUnavailable
from tacocat.engine import DEFAULT_TIME_LIMIT
from tacocat.referee import BANK_LIMITS_PER_GAME, DEFAULT_BATCH, DEFAULT_MAX_STRIKES
from tacocat.sdk.arena import DEFAULT_DATA_DIR

if TYPE_CHECKING:
    from tacocat.worker import WorkerSettings
    from tacocat.worker.sandbox import SandboxPolicy

DESCRIPTION = """\
Play the arena's matches. Runs --workers RQ worker processes (default: one per core) on the
arena's Redis, each pinned to its own core together with the two bot processes of the match
it plays, and the dispatcher, which schedules round-robin matches, re-enqueues matches whose
worker died, and smoke-tests new submissions (one dispatcher is active per Redis, however
many `tacocat worker`s run: start more on more machines to scale out).

A match job starts each bot once, sandboxed (bubblewrap, seccomp, rlimits; see
docs/SECURITY.md), plays all the match's games, and records the result exactly once.
Timeouts, crashes, illegal moves and protocol garbage forfeit games, never the job; a bot
that keeps failing forfeits the rest of its match.

Before anything else it checks what this host gives the sandbox (`--check` prints just that:
bubblewrap, user namespaces, seccomp, the cgroup version and each controller, delegation,
writable paths, each missing thing with its fix). A host that cannot sandbox submitted bots
is refused, unless --trust-owner names users whose bots are your own code: then the worker
says so once, plays only their bots (outside the sandbox, with its limits), and reports
itself as unable to sandbox on the server's /metrics and /healthz.

Redis: --redis-url, else $REDIS_URL, else an embedded server persisting to --data-dir.
Ctrl-C / SIGTERM stops everything it started: running matches get --grace seconds to
finish, then their bots are killed (an unfinished match is re-run later).

examples:
  tacocat worker --check                  # can this host run submitted bots? what is missing?
  tacocat worker                          # one worker per core, embedded Redis
  REDIS_URL=redis://db:6379/0 tacocat worker --workers 8
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("worker", help="run the arena's match workers and dispatcher",
                       description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--workers", type=int, default=0, metavar="N",
                   help="worker processes (default: one per core, here "
                        f"{len(os.sched_getaffinity(0))})")
    p.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""), metavar="URL",
                   help="the arena's Redis (default $REDIS_URL; without one, an embedded "
                        "server in --data-dir)")
    p.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, metavar="DIR",
                   help=f"embedded Redis data (default {DEFAULT_DATA_DIR})")
    p.add_argument("--prefix", default=DEFAULT_PREFIX, help=argparse.SUPPRESS)
    p.add_argument("--check", action="store_true",
                   help="print what this host gives the sandbox and what is missing, with "
                        "the fix for each; exit 0 only if submitted bots can run here with "
                        "every bound")
    p.add_argument("--insecure-no-sandbox", action="store_true",
                   help="run submitted bots WITHOUT the sandbox (trusted bots only)")
    p.add_argument("--trust-owner", action="append", default=[], metavar="USER",
                   help="USER's bots are your own code: they run outside the sandbox (with its "
                        "limits), and a host without a sandbox still plays them (repeatable)")
    p.add_argument("--pin", choices=("all", "bots", "none"), default="all",
                   help="core pinning: all = each worker, its matches' referee and bots on "
                        "one core (default); bots = only the two bots share the worker's "
                        "core; none = let the kernel place everything")
    p.add_argument("--no-dispatch", action="store_true",
                   help="only play jobs; never act as the dispatcher")
    p.add_argument("--grace", type=float, default=10.0, metavar="SECONDS",
                   help="at shutdown, how long running matches may go on (default 10)")
    tuning = p.add_argument_group("tuning")
    tuning.add_argument("--max-strikes", type=int, default=DEFAULT_MAX_STRIKES, metavar="N",
                        help="costly faults in a row (timeouts, dead processes) after which a "
                             "bot gives up a match and forfeits the rest "
                             f"(default {DEFAULT_MAX_STRIKES})")
    tuning.add_argument("--bank-limits-per-game", type=float, default=BANK_LIMITS_PER_GAME,
                        metavar="N", help="each side's time bank for a match, in decision "
                                          "limits per game; past it the side forfeits the "
                                          "rest on time, and job timeouts derive from it "
                                          f"(default {BANK_LIMITS_PER_GAME:g})")
    tuning.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="K",
                        help="games of a match played at once, in lockstep, one pipe round "
                             f"trip per step for all of them (default {DEFAULT_BATCH})")
    tuning.add_argument("--lease", type=float, default=10.0, metavar="SECONDS",
                        help="a running match's lease: how soon a dead worker's match is "
                             "re-run (default 10)")
    tuning.add_argument("--smoke-decision-seconds", type=float, default=DEFAULT_TIME_LIMIT,
                        metavar="SECONDS",
                        help=f"time per decision in smoke tests (default {DEFAULT_TIME_LIMIT:g})")
    add_bot_limits(tuning)
    tuning.add_argument("--build-seconds", type=float, default=120.0, metavar="SECONDS",
                        help="wall-clock time of one bot build (bots with a build step in "
                             "their bot.toml; built once, at the smoke test; default 120)")
    tuning.add_argument("--build-mb", type=int, default=16, metavar="MB",
                        help="a built bot's folder, sources and what the build made "
                             "(default 16)")
    tuning.add_argument("--wait", type=float, default=5.0, help=argparse.SUPPRESS)
    p.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                   help="export this host's worker metrics (Prometheus) on "
                        "http://--metrics-host:PORT/metrics (default: off; 0 = a free port)")
    p.add_argument("--metrics-host", default="127.0.0.1", metavar="HOST",
                   help="address of --metrics-port (default 127.0.0.1; 0.0.0.0 in a container)")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    p.set_defaults(run=run)


def add_bot_limits(group: argparse._ArgumentGroup) -> None:
    """The flags of a sandboxed bot's limits: the worker's, and ``tacocat play --sandbox``'s
    (read back with :func:`bot_limits`)."""
    group.add_argument("--bot-memory-mb", type=int, default=1024, metavar="MB",
                       help="address space per bot process; the bot's whole process tree "
                            "gets this plus 256 MB (memory cgroup; default 1024)")
    group.add_argument("--bot-cpu-seconds", type=int, default=600, metavar="SECONDS",
                       help="CPU time per bot process over its match (default 600)")


class BotLimits(TypedDict):
    """The :class:`~tacocat.worker.WorkerSettings` fields of :func:`add_bot_limits`' flags."""

    bot_memory_mb: int
    bot_cpu_seconds: int


def bot_limits(args: argparse.Namespace) -> BotLimits:
    return BotLimits(bot_memory_mb=args.bot_memory_mb, bot_cpu_seconds=args.bot_cpu_seconds)


def run(args: argparse.Namespace) -> int:
    from tacocat.worker import WorkerSettings  # noqa: PLC0415
    from tacocat.worker.sandbox import SandboxUnavailableError, use_sandbox  # noqa: PLC0415

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s worker %(levelname)s %(message)s",
                        datefmt="%H:%M:%S")
    log = logging.getLogger("tacocat.worker")
    if args.check:
        return _check(args)
    try:
        sandboxed = True
        problem = ""
        if args.insecure_no_sandbox:
            sandboxed = use_sandbox(insecure_no_sandbox=True, logger=log)
        else:
            problem = _sandbox_problem(args, log)
            if problem and not args.trust_owner:
                print("tacocat worker: refusing to start: submitted bots would run without "
                      "their bounds. Fix what is MISSING above, or start with --trust-owner "
                      "USER to play only your own bots here (or --insecure-no-sandbox if every "
                      "bot is trusted)", file=sys.stderr)
                return 2
        settings = WorkerSettings(
            prefix=args.prefix, sandbox=sandboxed, pinning=args.pin,
            trusted_owners=tuple(args.trust_owner), sandbox_problem=problem,
            max_strikes=args.max_strikes, batch=args.batch, lease=args.lease,
            bank_limits_per_game=args.bank_limits_per_game,
            smoke_decision_seconds=args.smoke_decision_seconds, build_seconds=args.build_seconds,
            build_mb=args.build_mb, **bot_limits(args),
        )
    except (SandboxUnavailableError, ValueError) as exc:
        print(f"tacocat worker: {exc}", file=sys.stderr)
        return 2
    if args.workers < 0:
        print("tacocat worker: --workers must be at least 1", file=sys.stderr)
        return 2
    from tacocat.worker.metrics import serve_metrics  # noqa: PLC0415

    with contextlib.ExitStack() as stack:
        if args.metrics_port is not None:
            try:
                port = stack.enter_context(serve_metrics(args.metrics_port, args.metrics_host))
            except OSError as exc:
                print(f"tacocat worker: --metrics-port {args.metrics_port}: {exc}",
                      file=sys.stderr)
                return 1
            print(f"tacocat worker: metrics on http://{args.metrics_host}:{port}/metrics",
                  file=sys.stderr, flush=True)
        return _run_pool(args, settings)


def _policy(args: argparse.Namespace) -> SandboxPolicy:
    from tacocat.worker import WorkerSettings  # noqa: PLC0415

    return WorkerSettings(bot_memory_mb=args.bot_memory_mb,
                          bot_cpu_seconds=args.bot_cpu_seconds).sandbox_policy()


def _check(args: argparse.Namespace) -> int:
    from tacocat.worker.sandbox import check_host  # noqa: PLC0415

    report = check_host(_policy(args))
    print(f"tacocat worker --check: what this host gives the bot sandbox\n\n{report.table()}")
    return 0 if report.ready else 1


def _sandbox_problem(args: argparse.Namespace, log: logging.Logger) -> str:
    """Empty if submitted bots can be sandboxed here; else the report's one-line summary,
    after printing the whole report once."""
    from tacocat.worker.sandbox import check_host  # noqa: PLC0415

    report = check_host(_policy(args))
    if report.ready:
        log.info(next(c.found for c in report.checks if c.name == "sandboxed test process"))
        return ""
    print(f"tacocat worker: this host cannot sandbox submitted bots:\n\n{report.table()}\n",
          file=sys.stderr, flush=True)
    log.critical("%s; playing only the bots of %s", report.summary(),
                 ", ".join(args.trust_owner) or "nobody")
    return report.summary()


def _run_pool(args: argparse.Namespace, settings: WorkerSettings) -> int:
    from tacocat.arena import redis_url_or_embedded  # noqa: PLC0415
    from tacocat.worker import WorkerPool  # noqa: PLC0415

    try:
        with redis_url_or_embedded(args.redis_url or None, args.data_dir) as url:
            pool = WorkerPool(url, settings, workers=args.workers,
                              dispatch=not args.no_dispatch, grace=args.grace, wait=args.wait,
                              log_level=args.log_level)
            where = "embedded Redis in " + str(args.data_dir) if not args.redis_url else "Redis"

            def ready(pool: WorkerPool) -> None:
                print(f"tacocat worker: {pool.workers} worker{'s' * (pool.workers != 1)} on "
                      f"{where}, queues {settings.smoke_queue}, {settings.match_queue}; "
                      "Ctrl-C stops", file=sys.stderr, flush=True)

            return pool.run(ready)
    except (RedisUnavailable, EmbeddedServerError) as exc:
        print(f"tacocat worker: {exc}", file=sys.stderr)
        return 1
