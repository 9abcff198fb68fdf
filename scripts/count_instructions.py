"""Instructions per game of ``house:random`` against itself, counted by callgrind, and of the
plain baseline that ``tacocat bench engine`` compares with (lab/tacocat_lab/plain_game.py).

    python scripts/count_instructions.py [GAMES]      (default 200)

Wall-clock figures on a shared machine wander by tens of percent; instruction counts do not.
Runs the same warm-up twice under valgrind, once followed by GAMES games, and divides the
difference by GAMES, so start-up and imports cancel out. Needs valgrind; takes about a minute.
TACOCAT_PURE_PYTHON=1 counts the pure-Python form of the engine and the referee loop.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

PLAY = """
import sys
from tacocat_lab.plain_game import play_plain_games
from tacocat.engine import STANDARD, duplicate_pairs
from tacocat.engine.bots import RandomBot
from tacocat.referee import play_in_process
side, games = sys.argv[1], int(sys.argv[2])
def play(count, tag):
    if side == "plain":
        play_plain_games(count, tag)
    else:
        play_in_process(lambda: RandomBot(1), lambda: RandomBot(2),
                        duplicate_pairs(count, tag), names=("a", "b"), rules=STANDARD)
play(200, "warm-up")
if games:
    play(games, "counted")
"""


def instructions(side: str, games: int) -> int:
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", PLAY, side, str(games)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # same set and dict orders every run
    )
    match = re.search(r"refs:\s+([\d,]+)", result.stderr)
    if match is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{result.stderr[-2000:]}")
    return int(match.group(1).replace(",", ""))


def main() -> int:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    counts = {side: (instructions(side, games) - instructions(side, 0)) // games
              for side in ("engine", "plain")}
    print(f"engine {counts['engine']:,} instructions per game, plain {counts['plain']:,} "
          f"({counts['plain'] / counts['engine']:.2f}x; {games} games each)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
