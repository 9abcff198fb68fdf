"""The same seeds play the same games, byte for byte, whatever the code's shape.

``data/same_seed_games.jsonl`` was written by :func:`play_all` before the house was
rearranged (the lab moved out, one vocabulary, the web its own part). A refactor that
changes one card of one game, or one byte of the replay format, fails here: regenerate the
file only for a deliberate change of the rules or the format, and say so in the commit.
"""

from __future__ import annotations

from pathlib import Path

from tacocat.engine import duplicate_pairs, house_bot
from tacocat.referee import play_in_process

DATA = Path(__file__).parent / "data" / "same_seed_games.jsonl"
PAIRINGS = (("random", "greedy"), ("greedy", "strong"), ("strong", "random"))
GAMES = 20


def play_all() -> list[str]:
    lines = []
    for a, b in PAIRINGS:
        match = play_in_process(lambda a=a: house_bot(a), lambda b=b: house_bot(b),
                                duplicate_pairs(GAMES, f"same-games/{a}-{b}"), names=(a, b))
        lines += [game.record.dumps() for game in match.games]
    return lines


def test_the_same_seeds_play_byte_identical_games() -> None:
    expected = DATA.read_text(encoding="utf-8").splitlines()
    played = play_all()
    assert len(played) == len(expected) == GAMES * len(PAIRINGS)
    for index, (got, want) in enumerate(zip(played, expected, strict=True)):
        assert got == want, f"game {index + 1} ({PAIRINGS[index // GAMES]}) differs"


if __name__ == "__main__":  # python -m tests.referee.test_same_games > data/...
    print("\n".join(play_all()))
