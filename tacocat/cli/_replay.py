"""``tacocat replay show|check``: read a replay file in the terminal, or re-feed it to a bot."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tacocat.engine import EngineError, GameRecord, read_jsonl
from tacocat.engine.replay_steps import replay_view
from tacocat.sdk import SdkError
from tacocat.sdk.loader import load_bot_class
from tacocat.sdk.replay_check import check_game, describe

DESCRIPTION = """\
Read replay records (JSON Lines, as `tacocat play --replay FILE` writes them and the arena's
replays download as) in the terminal, or re-feed their decisions to a bot.

  show   a game round by round, both hands open: the web replay viewer's steps as text
  check  ask a bot every decision its seat made in the recorded games, with exactly the
         observations it had then, and report each answer that differs from the record,
         raises or is illegal; exit status 0 when every answer matched, 1 when not

examples:
  tacocat play mybot.py house:strong --games 20 --replay lost.jsonl
  tacocat replay show lost.jsonl --game 3
  tacocat replay check lost.jsonl --bot mybot.py --seat 0 --game 3
"""

SHOWN_PER_GAME = 5
"""Differences printed in full per game (all are counted)."""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("replay", help="show a replay file, or re-feed it to a bot",
                       description=DESCRIPTION, formatter_class=argparse.RawTextHelpFormatter)
    kinds = p.add_subparsers(dest="replay_command", required=True, metavar="show|check")
    show = kinds.add_parser("show", help="print a game round by round",
                            description="Print one game of a replay file round by round, "
                                        "with both hands open.")
    show.add_argument("file", type=Path, metavar="FILE.jsonl")
    show.add_argument("--game", type=int, default=1, metavar="N",
                      help="the game's number in the file, from 1 (default 1)")
    show.set_defaults(run=run_show)
    check = kinds.add_parser("check", help="re-feed recorded decisions to a bot",
                             description="Ask a bot every decision of the recorded games "
                                         "and report where it answers differently now.")
    check.add_argument("file", type=Path, metavar="FILE.jsonl")
    check.add_argument("--bot", required=True,
                       help="the bot: path/to/bot.py[:Class] or house:NAME")
    check.add_argument("--seat", type=int, choices=(0, 1),
                       help="the seat it played (default: the seats whose player name is "
                            "--bot or its file's name; else both)")
    check.add_argument("--game", type=int, metavar="N",
                       help="only this game, numbered from 1 in the file (default: all)")
    check.set_defaults(run=run_check)


def _records(path: Path, game: int | None) -> list[tuple[int, GameRecord]]:
    """The file's games, numbered from 1 as everywhere a person reads a game's number (the
    arena's pages, URLs and ``tacocat match``); only game ``game`` when given. Raises
    ValueError."""
    records = list(enumerate(read_jsonl(path), start=1))
    if not records:
        raise ValueError(f"{path} holds no replay records")
    if game is None:
        return records
    if not 1 <= game <= len(records):
        held = "game 1" if len(records) == 1 else f"games 1 to {len(records)}"
        raise ValueError(f"--game {game} is not in {path}: it holds {held}")
    return [records[game - 1]]


def run_show(args: argparse.Namespace) -> int:
    try:
        [(number, record)] = _records(args.file, args.game)
        view = replay_view(record)
    except (OSError, ValueError, EngineError) as exc:
        print(f"tacocat replay show: {exc}", file=sys.stderr)
        return 2
    print(f"game {number} of {args.file}: seat 0 {record.players[0]}, seat 1 "
          f"{record.players[1]}; seed {record.seed!r}")
    for step in view["steps"]:
        if step["kind"] == "deal":
            print(f"\nround {step['round'] + 1}, space {step['space']}")
            print(f"  hands: seat 0 {step['hands'][0]}, seat 1 {step['hands'][1]}")
        print(f"  {step['kind']:<9} {step['text']}")
    return 0


def _seats(record: GameRecord, bot: str, seat: int | None) -> tuple[int, ...]:
    """``seat``, else the seats whose player is ``bot`` (as ``tacocat play`` names it, or an
    arena version ``owner/NAME@N`` of a file NAME.py), else both."""
    if seat is not None:
        return (seat,)
    stem = bot if bot.startswith("house:") else Path(bot.partition(":")[0]).stem

    def bare(player: str) -> str:
        return player.partition("#")[0].rpartition("/")[2].partition("@")[0]

    named = tuple(s for s in (0, 1) if record.players[s].partition("#")[0] in (bot, stem)
                  or bare(record.players[s]) == stem)
    return named or (0, 1)


def run_check(args: argparse.Namespace) -> int:
    try:
        records = _records(args.file, args.game)
        make_bot = load_bot_class(args.bot)
    except (OSError, ValueError, EngineError, SdkError) as exc:
        print(f"tacocat replay check: {exc}", file=sys.stderr)
        return 2
    decisions = differences = 0
    for number, record in records:
        seats = _seats(record, args.bot, args.seat)
        try:
            check = check_game(record, make_bot, seats)
        except EngineError as exc:
            print(f"tacocat replay check: game {number}: the record does not replay: {exc}",
                  file=sys.stderr)
            return 2
        decisions += check.decisions
        differences += len(check.differences)
        who = ", ".join(f"seat {s} ({record.players[s]})" for s in seats)
        verdict = ("all matched" if check.matched else
                   f"{len(check.differences)} differ{'s' * (len(check.differences) == 1)}")
        print(f"game {number}, {who}: {check.decisions} decisions, {verdict}")
        for diff in check.differences[:SHOWN_PER_GAME]:
            recorded = list(diff.recorded) if diff.recorded is not None else \
                f"no answer (the game ended: {record.result.detail})"
            answered = list(diff.answered) if diff.answered is not None else "-"
            print(f"  {diff.problem}: recorded {recorded}, the bot now answers {answered}")
            print("    " + describe(diff.observation).replace("\n", "\n    "))
        if check.note:
            print(f"  note: {check.note}")
        if len(check.differences) > SHOWN_PER_GAME:
            print(f"  ... and {len(check.differences) - SHOWN_PER_GAME} more")
    print(f"\n{len(records)} game{'s' * (len(records) != 1)}, {decisions} decisions checked: "
          + ("every answer matched the record" if not differences else
             f"{differences} answer{'s' * (differences != 1)} did not"))
    return 0 if not differences else 1
