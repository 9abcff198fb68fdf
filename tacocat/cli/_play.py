"""``tacocat play``: a local match between two bots, in duplicate pairs, with a summary."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tacocat.engine import STANDARD, EngineError, Ruleset
from tacocat.engine.sprt import Pentanomial, Sprt, Verdict, verdict_words
from tacocat.engine.stats import match_stats
from tacocat.protocol import DEFAULT_TIME_LIMIT, MAX_BATCH, ProtocolError
from tacocat.protocol.logs import LOG_CAP
from tacocat.referee import DEFAULT_BATCH, MatchRuntimeError
from tacocat.sdk import SdkError
from tacocat.sdk.loader import load_bot_class

from ._bot_folders import local_bot, process_only
from ._output import ProgressBar, plural, table
from ._play_jobs import JobPool, PlayedRun, default_jobs
from ._play_logs import describe_printed
from ._play_plan import MatchPlan
from ._play_seats import SeatError
from ._worker import add_bot_limits, bot_limits

if TYPE_CHECKING:
    from tacocat.worker.launch import Launcher

SPRT_GAMES: Final = 20_000
"""--games' default with --sprt: a cap, rarely reached when elo1 - elo0 is 5 or more."""
SPRT_BLOCK: Final = 64
"""Games between two looks at the LLR (32 pairs), the same for every --jobs."""

DESCRIPTION = """\
Play a local match between two bots and print a summary table.

Games are played in duplicate pairs: both games of a pair use the same shuffles, with the
seats swapped, so the luck of the deal cancels out. A bot is house:NAME (random, greedy,
strong), path/to/bot.py[:ClassName], or a bot folder with a bot.toml (any language: it
is built first, then run as its manifest says; `tacocat new-bot NAME --language L`). Each
game gets its own bot object, and --batch games are played at once, as the arena does:
the games are the same for every batch size.

Time, as in the arena: a bot file runs in its own process (python -m tacocat.sdk.host, as a
worker runs it; --sandbox: in the worker's own sandbox, with its limits). A decision over
--time-limit forfeits its game on time; one that spins or sleeps on gets the process killed
and restarted, and the match goes on. Only with --no-time-limit (for a debugger) and for
house bots does a bot play in this process. --jobs N plays on N processes, with the same
games and summary for every N.

What the bots print stays off the terminal: the summary says how much each printed and
quotes its first lines; --logs DIR keeps it per game, --show-output shows it live.

--sprt answers "is A (my v2) stronger than B (my v1)?": it plays until a sequential
probability ratio test over duplicate pairs (pentanomial, logistic Elo, as fishtest and
fastchess) accepts H0 (A is at most --elo0 stronger) or H1 (at least --elo1), with error
rates --alpha and --beta, printing a line every 32 pairs and a verdict at the end.

examples:
  tacocat play house:greedy mybot.py --games 200 --seed 7 --replay games.jsonl
  tacocat play mybot_v2.py mybot_v1.py --sprt --elo0 0 --elo1 10
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("play", help="play a local match between two bots",
                       description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("bot_a", metavar="A", help="first bot: house:NAME, path/to/bot.py[:Class] "
                   "or a bot folder")
    p.add_argument("bot_b", metavar="B", help="second bot, same forms")
    p.add_argument("--games", type=int, help="games to play (default 100; with --sprt, at "
                   f"most {SPRT_GAMES})")
    p.add_argument("--seed", default="1", help="match seed: same seed, same deals (default 1)")
    p.add_argument("--ruleset", type=Path, help="ruleset .toml or .json (default: standard)")
    p.add_argument("--replay", type=Path, metavar="FILE.jsonl",
                   help="write every game's replay record to this JSON Lines file")
    p.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="K",
                   help=f"games played at once (default {DEFAULT_BATCH}; the games are the "
                        "same for every K)")
    limit = p.add_mutually_exclusive_group()
    limit.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="S",
                       help=f"seconds per decision, as the arena's (default "
                            f"{DEFAULT_TIME_LIMIT:g}); a slower decision forfeits its game")
    limit.add_argument("--no-time-limit", action="store_true",
                       help="no limit: for stepping through a bot in a debugger")
    p.add_argument("--logs", type=Path, metavar="DIR",
                   help="keep what each bot prints (stdout, stderr) and its tracebacks, per "
                        f"game: DIR/game-NNNNN-A.log, at most {LOG_CAP // 1024} KiB each "
                        "(an earlier run's logs there are replaced)")
    p.add_argument("--show-output", action="store_true",
                   help="also show what the bots print on stderr as they print it, each "
                        "line prefixed with [A] or [B]")
    p.add_argument("--sandbox", action="store_true",
                   help="run bot files in the arena workers' sandbox, with their limits (the "
                        "flags below), as a submitted bot runs; refused where the sandbox "
                        "does not work, with the reason")
    p.add_argument("--jobs", type=int, metavar="N",
                   help=f"processes to play on (default: all {default_jobs()} cores); the "
                        "games are the same for every N")
    add_bot_limits(p.add_argument_group("limits of a bot with --sandbox (as the worker's)"))
    sprt = p.add_argument_group("SPRT: is A stronger than B? (docs: docs/PLAY.md, 'SPRT')")
    sprt.add_argument("--sprt", action="store_true",
                      help="play duplicate pairs until the sequential test accepts H0 "
                           "(A is at most elo0 stronger) or H1 (at least elo1)")
    sprt.add_argument("--elo0", type=float, default=0.0, help="H0's Elo of A over B (0)")
    sprt.add_argument("--elo1", type=float, default=5.0, help="H1's Elo of A over B (5)")
    sprt.add_argument("--alpha", type=float, default=0.05,
                      help="chance of accepting H1 when H0 holds (0.05)")
    sprt.add_argument("--beta", type=float, default=0.05,
                      help="chance of accepting H0 when H1 holds (0.05)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    problem = _check(args)
    if problem:
        print(f"tacocat play: {problem}", file=sys.stderr)
        return 2
    try:
        rules = Ruleset.load(args.ruleset) if args.ruleset else STANDARD
        sides = (local_bot(args.bot_a), local_bot(args.bot_b))
        bots = tuple(process_only(side) if side.command else load_bot_class(side.spec)
                     for side in sides)
        sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta) if args.sprt else None
    except (EngineError, SdkError, ProtocolError, SeatError) as exc:
        print(f"tacocat play: {exc}", file=sys.stderr)
        return 2
    if args.no_time_limit and any(side.command for side in sides):
        print("tacocat play: a bot folder in another language than Python plays as a "
              "process of its own, every decision timed: drop --no-time-limit", file=sys.stderr)
        return 2
    given = (_shown(args.bot_a), _shown(args.bot_b))
    names = given if given[0] != given[1] else (
        f"{given[0]}#1", f"{given[1]}#2")
    games = args.games or (SPRT_GAMES if sprt else 100)
    if args.logs is not None:
        try:
            args.logs.mkdir(parents=True, exist_ok=True)
            for pattern in ("game-*.log", "startup-*.log"):  # an earlier run's: appended to
                for old in args.logs.glob(pattern):
                    old.unlink()
        except OSError as exc:
            print(f"tacocat play: --logs {args.logs}: {exc.strerror}", file=sys.stderr)
            return 2
    launcher = None
    if args.sandbox:
        launcher, problem = _sandbox_launcher(args)
        if launcher is None:
            print(f"tacocat play: --sandbox: {problem}", file=sys.stderr)
            return 1
    plan = MatchPlan((bots[0], bots[1]), (sides[0].spec, sides[1].spec), names, args.seed,
                     rules, args.batch,
                     None if args.no_time_limit else args.time_limit, args.logs,
                     keep_records=args.replay is not None, launcher=launcher,
                     show_output=args.show_output,
                     commands=(sides[0].command, sides[1].command))
    progress = ProgressBar(games, "playing")
    done = [0]

    def count(ended: int) -> None:
        done[0] += ended
        progress.update(done[0])

    try:
        with JobPool(plan, args.jobs or default_jobs()) as pool:
            if sprt is None:
                played = pool.play(games, 0, games, count)
                verdict = ""
            else:
                played, verdict = _play_sprt(pool, sprt, games, progress, count)
    except (MatchRuntimeError, SeatError) as exc:
        progress.close()
        print(f"tacocat play: {exc}", file=sys.stderr)
        return 1
    progress.close()
    scores = [g.a_score for g in played.games]
    forfeits: list[Counter[str]] = [Counter(), Counter()]
    first: dict[tuple[int, str], str] = {}
    for game in played.games:
        if game.forfeit is not None:
            side, fault, detail = game.forfeit
            forfeits[side][fault] += 1
            first.setdefault((side, fault), detail)
    if args.replay:
        with open(args.replay, "w", encoding="utf-8") as replay:
            replay.writelines(g.record + "\n" for g in played.games)
    print(summary(names, scores, [sum(f.values()) for f in forfeits], args.seed))
    for side, counts in enumerate(forfeits):
        for fault, count_ in sorted(counts.items()):
            print(f"{names[side]} forfeited {count_} game{'s' * (count_ != 1)} by {fault}; "
                  f"first: {first[(side, fault)]}")
    for name, detail in played.gave_up:
        print(f"{name} {detail}")
    for name, printed in zip(names, played.printed, strict=True):
        said = describe_printed(name, printed, args.logs)
        if said:
            print(said)
    if verdict:
        print(f"\n{verdict}")
    if args.replay:
        print(f"\nreplays: {len(played.games)} records in {args.replay}")
    if args.logs is not None:
        written = len(list(args.logs.glob("*.log")))
        print(f"logs: {written} file{'s' * (written != 1)} in {args.logs} (what each bot "
              f"printed in each game, and its tracebacks; at most {LOG_CAP // 1024} KiB each)")
    return 0


def _shown(spec: str) -> str:
    """How the summary names a bot: as given, a folder by its own name (``.`` says nothing)."""
    path = Path(spec)
    return f"{path.resolve().name}/" if not spec.startswith("house:") and path.is_dir() else spec


def _check(args: argparse.Namespace) -> str:
    """What is wrong with the settings, or ``""``."""
    if args.games is not None and args.games < 1:
        return f"--games must be at least 1, got {args.games}"
    if not 1 <= args.batch <= MAX_BATCH:
        return f"--batch must be from 1 to {MAX_BATCH}, got {args.batch}"
    if args.sandbox and args.no_time_limit:
        return ("--sandbox plays as the arena does, every decision timed: drop "
                "--no-time-limit (a debugger needs the bot in this process)")
    for flag, value in (("--bot-memory-mb", args.bot_memory_mb),
                        ("--bot-cpu-seconds", args.bot_cpu_seconds)):
        if value < 1:
            return f"{flag} must be at least 1, got {value}"
    if not args.no_time_limit and not args.time_limit > 0:
        return (f"--time-limit must be positive, got {args.time_limit}; "
                "--no-time-limit turns the limit off")
    if args.replay is not None and not args.replay.absolute().parent.is_dir():
        return f"--replay {args.replay}: no folder {args.replay.absolute().parent} to write it in"
    if args.jobs is not None and args.jobs < 1:
        return f"--jobs must be at least 1, got {args.jobs} (default: all {default_jobs()} cores)"
    return ""


def _sandbox_launcher(args: argparse.Namespace) -> tuple[Launcher | None, str]:
    """The worker's launcher with the limits given, or why the sandbox cannot run here."""
    try:
        from tacocat.worker import WorkerSettings  # noqa: PLC0415 - the server extra's
        from tacocat.worker.launch import Launcher  # noqa: PLC0415
        from tacocat.worker.sandbox import sandbox_status  # noqa: PLC0415
    except ImportError as exc:
        return None, (f"the sandbox is the arena worker's ({exc.name} is missing): "
                      "pip install 'tacocat-arena[server]'")
    try:
        policy = WorkerSettings(sandbox=True, **bot_limits(args)).sandbox_policy()
    except ValueError as exc:
        return None, str(exc)
    status = sandbox_status()
    if not status.available:
        return None, status.describe()
    return Launcher(policy, sandbox=True), ""


def _play_sprt(pool: JobPool, sprt: Sprt, games: int, progress: ProgressBar,
               count: Callable[[int], None]) -> tuple[PlayedRun, str]:
    """Play blocks of :data:`SPRT_BLOCK` games until the test decides or ``games`` are
    played; the same blocks for every ``--jobs``, so the same verdict."""
    played = PlayedRun([], [])
    penta = Pentanomial()
    stream = progress.stream
    line = ""
    for start in range(0, games, SPRT_BLOCK):
        stop = min(start + SPRT_BLOCK, games)
        played.add(pool.play(games, start, stop, count))
        penta = Pentanomial.of_scores([g.a_score for g in played.games])
        line = sprt.line(penta, len(played.games))
        progress.close()
        stream.write(f"sprt: {line}\n")
        stream.flush()
        if sprt.verdict(sprt.llr(penta)) is not Verdict.CONTINUE:
            break
    return played, verdict_words(sprt, penta, line)


def summary(names: tuple[str, str], scores: list[float], forfeits: list[int], seed: str) -> str:
    a = match_stats(scores)
    b = match_stats([1.0 - s for s in scores])
    rows = []
    for name, s, fails in ((names[0], a, forfeits[0]), (names[1], b, forfeits[1])):
        rows.append([
            name, s.wins, s.losses, s.ties, fails,
            f"{s.score:.3f}", f"[{s.score_low:.3f}, {s.score_high:.3f}]",
            f"{s.elo:+.0f}", f"[{s.elo_low:+.0f}, {s.elo_high:+.0f}]",
        ])
    head = (f"{plural(len(scores), 'game')} ({plural(len(scores) // 2, 'duplicate pair')}), "
            f"seed {seed!r}; "
            "score = (wins + ties/2) / games, intervals are 95%\n")
    verdict = (f"\n{names[0]} is stronger" if a.score_low > 0.5 else
               f"\n{names[1]} is stronger" if a.score_high < 0.5 else
               "\nno significant difference at 95%")
    return head + table(["bot", "wins", "losses", "ties", "forfeits", "score", "95% CI",
                         "Elo diff", "95% CI"], rows) + verdict
