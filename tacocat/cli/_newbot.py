"""``tacocat new-bot NAME [--language L]``: a starter bot and its own test, ready to play and
to extend (Python on the SDK; JavaScript and C speaking the protocol by hand)."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from pathlib import Path

from tacocat.protocol.manifest import LANGUAGES, load_manifest
from tacocat.sdk import DEFAULT_ADDRESS

DESCRIPTION = """\
Write a starter bot: NAME/NAME.py (a Bot subclass that plays legal, sensible moves and,
run as a script, plays a live match with connect()) and NAME/test_NAME.py (its pytest
test, against the house bots).

It prints the next commands with this installation's own python and tacocat paths, so
they work whether or not a virtualenv is active:
  cd NAME
  .../python -m pytest test_NAME.py                  # it plays legal games
  .../tacocat play NAME.py house:greedy --games 200  # how strong is it?
  .../python NAME.py                                 # live, against `tacocat serve`

With --language javascript or c: NAME/ holds a bot that speaks the protocol itself (no
packages, no libraries), its bot.toml (how to build and run it), its test (node --test;
make test) and a README with the commands to play and submit it.

examples:
  tacocat new-bot mybot --dir ~/bots
  tacocat new-bot cbot --language c
"""

_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")

BOT_TEMPLATE = '''\
"""{name}: a bot for Tacocat Spelled Backwards.

    tacocat play {name}.py house:greedy --games 200   # locally, against a house bot
    python {name}.py                                  # live, against `tacocat serve`
    python -m pytest test_{name}.py                   # its test

Live play reads TACOCAT_ADDRESS (default {address}), TACOCAT_TOKEN (needed to play
other live bots), TACOCAT_OPPONENT (house:greedy, house:random, or live) and TACOCAT_GAMES.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from tacocat.sdk import (
    Bot,
    Observation,
    Round,
    Ruleset,
    SdkError,
    best_defence,
    connect,
    lowest_response,
)


class {cls}(Bot):
    """One object plays one game: the arena plays several games of a match at once and
    makes a fresh {cls}() for each, so attributes are per-game memory. Keep what should
    outlive a game (a cache, an opening book) in class attributes or module globals."""

    name = "{name}"

    def on_game_start(self, seat: int, ruleset: Ruleset, opponent: str) -> None:
        self.seat = seat
        self.attacks_seen = 0  # per-game memory: this game's, never another's

    def on_round_end(self, round: Round) -> None:
        self.attacks_seen += len(round.tricks)

    def replace(self, obs: Observation) -> Sequence[int]:
        # The lower card wins the showdown and high cards defend: send back the middle.
        middle = [card for card in obs.hand if 5 <= card <= 8]
        return middle[: obs.replace_cap]

    def duel(self, obs: Observation) -> int:
        # Winning the duel means attacking first; spend a middle card on it.
        return obs.hand[len(obs.hand) // 2]

    def attack(self, obs: Observation) -> Sequence[int]:
        # The highest card is the hardest to cover, and the lowest stays for the showdown.
        return (obs.hand[-1],)

    def defend(self, obs: Observation) -> Sequence[int]:
        # Cover the attack as cheaply as possible; if that cannot be done, the rules say
        # the lowest cards must go.
        return best_defence(obs.hand, obs.attack) or lowest_response(obs.hand, obs.attack)


if __name__ == "__main__":
    try:
        results = connect(
            {cls}(),
            os.environ.get("TACOCAT_ADDRESS", "{address}"),
            token=os.environ.get("TACOCAT_TOKEN"),
            games=int(os.environ.get("TACOCAT_GAMES", "10")),
            opponent=os.environ.get("TACOCAT_OPPONENT", "house:greedy"),
        )
    except SdkError as exc:  # refused, or no referee there: say so, without a traceback
        raise SystemExit(f"{{{cls}.name}}: {{exc}}") from None
    won = sum(r.won for r in results)
    lost = sum(r.lost for r in results)
    print(f"{{len(results)}} games: {{won}} won, {{lost}} lost, "
          f"{{len(results) - won - lost}} drawn")
'''

TEST_TEMPLATE = '''\
"""Tests for {name}: python -m pytest test_{name}.py"""

from pathlib import Path

from tacocat.sdk import load_bot_file, play_local

BOT_FILE = Path(__file__).with_name("{name}.py")


def test_plays_only_legal_moves() -> None:
    for opponent in ("house:random", "house:greedy"):
        results = play_local(load_bot_file(BOT_FILE), opponent, games=20, seed="legal")
        assert len(results) == 20
        forfeits = [r.outcome.detail for r in results if r.forfeited]
        assert not forfeits, forfeits


def test_beats_the_random_house_bot() -> None:
    results = play_local(load_bot_file(BOT_FILE), "house:random", games=100, seed="strength")
    assert sum(r.score for r in results) > 50
'''


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("new-bot", help="write a starter bot and its test",
                       description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("name", help="the bot's name: lower case, digits, underscores")
    p.add_argument("--dir", type=Path, default=Path("."),
                   help="where to create the NAME/ folder (default: here)")
    p.add_argument("--force", action="store_true", help="overwrite existing files")
    p.add_argument("--language", choices=list(LANGUAGES), default="python",
                   help="python (default): a Bot subclass on the SDK; javascript (node) or "
                        "c (cc): a process speaking the protocol by hand, with its bot.toml")
    p.set_defaults(run=run)


def class_name(name: str) -> str:
    """``my_bot`` -> ``MyBot``; ``greedy2`` -> ``Greedy2Bot``."""
    words = "".join(part.capitalize() for part in name.split("_") if part) or "My"
    return words if words.endswith("Bot") else f"{words}Bot"


def write_bot(name: str, parent: Path, force: bool = False) -> tuple[Path, Path]:
    """Write ``parent/name/name.py`` and its test; returns both paths."""
    if not _NAME.match(name):
        raise ValueError(f"bot name {name!r}: use lower case letters, digits and underscores, "
                         "starting with a letter (it becomes a Python module name)")
    folder = parent / name
    bot_path, test_path = folder / f"{name}.py", folder / f"test_{name}.py"
    existing = [str(p) for p in (bot_path, test_path) if p.exists()]
    if existing and not force:
        raise FileExistsError(f"{', '.join(existing)} already exist; --force overwrites")
    folder.mkdir(parents=True, exist_ok=True)
    values = {"name": name, "cls": class_name(name), "address": DEFAULT_ADDRESS}
    bot_path.write_text(BOT_TEMPLATE.format(**values), encoding="utf-8")
    test_path.write_text(TEST_TEMPLATE.format(**values), encoding="utf-8")
    return bot_path, test_path


STARTERS = Path(__file__).with_name("starters")
"""The other languages' starters: each folder is copied with ``{name}`` filled in."""


def write_starter(name: str, language: str, parent: Path, force: bool = False) -> list[Path]:
    """Write ``parent/name/``, a copy of the ``language`` starter; returns its files."""
    if not _NAME.match(name):
        raise ValueError(f"bot name {name!r}: use lower case letters, digits and underscores, "
                         "starting with a letter")
    source = STARTERS / language
    if not source.is_dir():
        raise ValueError(f"no starter for {language!r}; starters: {', '.join(LANGUAGES)}")
    folder = parent / name
    files = sorted(p for p in source.iterdir() if p.is_file())
    existing = [str(folder / p.name) for p in files if (folder / p.name).exists()]
    if existing and not force:
        raise FileExistsError(f"{', '.join(existing)} already exist; --force overwrites")
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for path in files:
        target = folder / path.name
        target.write_text(path.read_text(encoding="utf-8").replace("{name}", name),
                          encoding="utf-8")
        written.append(target)
    return written


def commands() -> tuple[str, str]:
    """How to run this Python and this ``tacocat`` from anywhere, venv active or not: the
    interpreter's absolute path, and the ``tacocat`` script next to it (else ``-m``)."""
    python = Path(sys.executable)
    script = python.parent / "tacocat"
    tacocat = shlex.quote(str(script)) if script.exists() else \
        f"{shlex.quote(str(python))} -m tacocat.cli"
    return shlex.quote(str(python)), tacocat


def inside_checkout(folder: Path) -> Path | None:
    """The Tacocat source checkout ``folder`` lies in, if any (found by its files)."""
    for parent in (folder, *folder.parents):
        if (parent / "tacocat" / "cli" / "_newbot.py").is_file() and \
                (parent / "pyproject.toml").is_file():
            return parent
    return None


def run(args: argparse.Namespace) -> int:
    if args.language != "python":
        return _run_starter(args)
    try:
        bot_path, test_path = write_bot(args.name, args.dir, args.force)
    except (ValueError, OSError) as exc:
        print(f"tacocat new-bot: {exc}", file=sys.stderr)
        return 2
    folder = bot_path.parent.resolve()
    python, tacocat = commands()
    checkout = inside_checkout(folder)
    note = (f"\n(that is inside the Tacocat checkout {checkout}: fine to try it out; "
            "--dir DIR keeps your bot in a folder of its own)") if checkout else ""
    print(f"wrote {bot_path.name} and {test_path.name} into {folder}/{note}\n\n"
          "next (these work without activating a virtualenv):\n"
          f"  cd {shlex.quote(str(folder))}\n"
          f"  {python} -m pytest {test_path.name}\n"
          f"  {tacocat} play {bot_path.name} house:greedy --games 200\n"
          f"  {tacocat} serve &   # or in another terminal, then:\n"
          f"  {python} {bot_path.name}")
    return 0


_TEST_COMMAND = {"javascript": "node --test", "c": "make test"}


def _run_starter(args: argparse.Namespace) -> int:
    try:
        files = write_starter(args.name, args.language, args.dir, args.force)
    except (ValueError, OSError) as exc:
        print(f"tacocat new-bot: {exc}", file=sys.stderr)
        return 2
    folder = files[0].parent.resolve()
    _, tacocat = commands()
    manifest = load_manifest(folder)
    missing = manifest.missing_programs()
    note = (f"\n(this machine lacks {', '.join(missing)}: install it to build and play the "
            "bot)") if missing else ""
    print(f"wrote a {args.language} bot into {folder}/: "
          f"{', '.join(p.name for p in files)}{note}\n\n"
          "next:\n"
          f"  cd {shlex.quote(str(folder))}\n"
          f"  {_TEST_COMMAND[args.language]}\n"
          f"  {tacocat} play . house:random --games 20\n"
          f"  {tacocat} play . house:greedy --games 200 --sandbox   # as the arena runs it\n"
          f"  {tacocat} submit . --name {args.name} --ladder main")
    return 0
