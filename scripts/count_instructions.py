"""Instructions per game of ``house:random`` against itself, counted by callgrind.

    python scripts/count_instructions.py [GAMES]      (default 200)

Wall-clock figures on a shared machine wander by tens of percent; instruction counts do not.
Runs the same warm-up twice under valgrind, once followed by GAMES games, and divides the
difference by GAMES, so start-up and imports cancel out. Needs valgrind; takes about 30 s.
TACOCAT_PURE_PYTHON=1 counts the pure-Python engine.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

PLAY = """
import sys
from tacocat.engine import STANDARD, BotDriver, play_game
from tacocat.engine.bots import RandomBot
drivers = (BotDriver(RandomBot(1)), BotDriver(RandomBot(2)))
for i in range(400):
    play_game(drivers, ("a", "b"), f"warm-up/{i}", STANDARD)
for i in range(int(sys.argv[1])):
    play_game(drivers, ("a", "b"), f"counted/{i}", STANDARD)
"""


def instructions(games: int) -> int:
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
         sys.executable, "-c", PLAY, str(games)],
        capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},  # same set and dict orders every run
    )
    match = re.search(r"refs:\s+([\d,]+)", result.stderr)
    if match is None:
        raise SystemExit(f"no instruction count in valgrind's output:\n{result.stderr[-2000:]}")
    return int(match.group(1).replace(",", ""))


def main() -> int:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    per_game = (instructions(games) - instructions(0)) // games
    print(f"{per_game:,} instructions per game ({games} games)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
