"""``tacocat play``: a local match between two bots, in duplicate pairs, with a summary."""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from tacocat.engine import STANDARD, EngineError, MatchGame, Ruleset, duplicate_pairs, write_jsonl
from tacocat.engine.stats import match_stats
from tacocat.protocol import DEFAULT_TIME_LIMIT, MAX_BATCH
from tacocat.referee import DEFAULT_BATCH, play_in_process
from tacocat.sdk import SdkError
from tacocat.sdk._loader import load_bot_class

from ._output import Progress, plural, table

DESCRIPTION = """\
Play a local match between two bots and print a summary table.

Games are played in duplicate pairs: both games of a pair use the same shuffles, with the
seats swapped, so the luck of the deal cancels out. A bot is house:NAME (random, greedy,
strong) or path/to/bot.py[:ClassName]. Each game gets its own bot object, and --batch games
are played at once, as the arena does: the games are the same for every batch size.
A decision over --time-limit forfeits its game on time, as in the arena.

example:
  tacocat play house:greedy mybot.py --games 200 --seed 7 --replay games.jsonl
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("play", help="play a local match between two bots",
                       description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("bot_a", metavar="A", help="first bot: house:NAME or path/to/bot.py[:Class]")
    p.add_argument("bot_b", metavar="B", help="second bot, same forms")
    p.add_argument("--games", type=int, default=100, help="games to play (default 100)")
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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        print(f"tacocat play: --games must be at least 1, got {args.games}", file=sys.stderr)
        return 2
    if not 1 <= args.batch <= MAX_BATCH:
        print(f"tacocat play: --batch must be from 1 to {MAX_BATCH}, got {args.batch}",
              file=sys.stderr)
        return 2
    if not args.no_time_limit and not args.time_limit > 0:
        print(f"tacocat play: --time-limit must be positive, got {args.time_limit}; "
              "--no-time-limit turns the limit off", file=sys.stderr)
        return 2
    try:
        rules = Ruleset.load(args.ruleset) if args.ruleset else STANDARD
        bot_a, bot_b = load_bot_class(args.bot_a), load_bot_class(args.bot_b)
    except (EngineError, SdkError) as exc:
        print(f"tacocat play: {exc}", file=sys.stderr)
        return 2
    names = (args.bot_a, args.bot_b) if args.bot_a != args.bot_b else (
        f"{args.bot_a}#1", f"{args.bot_b}#2")
    limit = None if args.no_time_limit else args.time_limit
    progress = Progress(args.games, "playing")
    done = [0]

    def count(_: MatchGame) -> None:
        done[0] += 1
        progress.update(done[0])

    played = play_in_process(bot_a, bot_b, duplicate_pairs(args.games, args.seed), names=names,
                             rules=rules, batch=args.batch, time_limit=limit, on_game=count)
    progress.close()
    scores = [g.a_score for g in played.games]
    forfeits: list[Counter[str]] = [Counter(), Counter()]
    first: dict[tuple[int, str], str] = {}
    for game in played.games:
        result = game.record.result
        if result.offender is not None and result.fault is not None:
            side = 0 if result.offender == game.a_seat else 1
            forfeits[side][result.fault.value] += 1
            first.setdefault((side, result.fault.value), result.detail)
    if args.replay:
        write_jsonl(args.replay, [g.record for g in played.games])
    print(summary(names, scores, [sum(f.values()) for f in forfeits], args.seed))
    for side, counts in enumerate(forfeits):
        for fault, count_ in sorted(counts.items()):
            print(f"{names[side]} forfeited {count_} game{'s' * (count_ != 1)} by {fault}; "
                  f"first: {first[(side, fault)]}")
    for report in played.sides:
        if report.gave_up is not None:
            print(f"{report.name} {report.gave_up.detail}")
    if args.replay:
        print(f"\nreplays: {len(played.games)} records in {args.replay}")
    return 0


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
