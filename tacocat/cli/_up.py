"""``tacocat up``: the quick-start demo.

For now a local match between house bots; it becomes the whole arena (embedded Redis,
server, workers, a demo ladder) as the arena lands.
"""

from __future__ import annotations

import argparse

from . import _play


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("up", help="run the quick-start demo",
                       description="Run the quick-start demo: a 200-game local match "
                                   "house:strong vs house:greedy, with a summary table.")
    p.add_argument("--games", type=int, default=200, help="games to play (default 200)")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    return _play.run(argparse.Namespace(bot_a="house:greedy", bot_b="house:random",
                                        games=args.games, seed="up", ruleset=None, replay=None))
