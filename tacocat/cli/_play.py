"""``tacocat play``: a local match between two bots, in duplicate pairs, with a summary."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tacocat.engine import STANDARD, EngineError, Ruleset, play_match, write_jsonl
from tacocat.engine.stats import match_stats
from tacocat.sdk import SdkError, load_bot

from ._output import Progress, plural, table

DESCRIPTION = """\
Play a local match between two bots and print a summary table.

Games are played in duplicate pairs: both games of a pair use the same shuffles, with the
seats swapped, so the luck of the deal cancels out. A bot is house:NAME (random, greedy,
strong) or path/to/bot.py[:ClassName].

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
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.games < 1:
        print(f"tacocat play: --games must be at least 1, got {args.games}", file=sys.stderr)
        return 2
    try:
        rules = Ruleset.load(args.ruleset) if args.ruleset else STANDARD
        bot_a, bot_b = load_bot(args.bot_a), load_bot(args.bot_b)
    except (EngineError, SdkError) as exc:
        print(f"tacocat play: {exc}", file=sys.stderr)
        return 2
    names = (args.bot_a, args.bot_b) if args.bot_a != args.bot_b else (
        f"{args.bot_a}#1", f"{args.bot_b}#2")
    progress = Progress(args.games, "playing")
    scores: list[float] = []
    records = []
    forfeits = [0, 0]
    for game in play_match(bot_a, bot_b, args.games, args.seed, rules, names):
        scores.append(game.a_score)
        result = game.record.result
        if result.offender is not None:
            forfeits[0 if result.offender == game.a_seat else 1] += 1
        if args.replay:
            records.append(game.record)
        progress.update(len(scores))
    progress.close()
    if args.replay:
        write_jsonl(args.replay, records)
    print(summary(names, scores, forfeits, args.seed))
    if args.replay:
        print(f"\nreplays: {len(records)} records in {args.replay}")
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
