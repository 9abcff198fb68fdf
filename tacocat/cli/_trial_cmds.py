"""``tacocat test``: an unrated SPRT test on the arena's workers ("is my v2 better?").

The arena's half of ``tacocat play A B --sprt``: the same test (pentanomial over duplicate
pairs), the same live line and the same verdict, played on the workers in sandboxed
matches scheduled like ladder matches, never rated (docs/ARENA.md, "Tests").
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tacocat.engine.sprt import Sprt
from tacocat.engine.stats import StatsError
from tacocat.sdk.arena import AlreadyExistsError, ArenaClient, Trial, TrialStatus

from ._arena_cmds import command, when
from ._output import SayReconnecting, table

if TYPE_CHECKING:
    from ._arena_cmds import Sub

DEFAULT_GAMES: Final = 20_000
_DUPLICATE: Final = re.compile(r"identical to (\S+@\d+)")


def add_parser(sub: Sub) -> None:
    p = command(sub, "test", "an unrated SPRT test on the arena: is BOT better than another?",
                """\
Test a bot against a chosen version on the arena's workers, unrated: duplicate pairs in
sandboxed matches, as in a ladder, until the sequential test (SPRT, as `tacocat play A B
--sprt`) accepts H0 (not --elo1 stronger) or H1 (at least --elo1 stronger), or --games run
out. Prints the live line (games, score, Elo +- 95%, LLR with its bounds) after every
match and the verdict at the end. Never changes a ladder's ratings.

BOT is a .py/.zip file (uploaded as your bot's next version, named after the file or
--name; it is smoke-tested first, and as your bot's newest version it also replaces the
previous one in the bot's ladders: test under another name, e.g. --name mybot-dev, to keep
a ladder as it is) or one of your versions (mybot@4). --against is any active version:
yours (mybot@3) or another bot's (bob/tacobot@2). Anyone may look at a test; only its owner
(or an admin) cancels it. Ctrl-C stops following, not the test.

examples:
  tacocat test mybot.py --against mybot@3
  tacocat test mybot@4 --against bob/tacobot@2 --sprt --elo0 0 --elo1 10 --games 4000
  tacocat test --list                      # your tests (--all: everyone's)
  tacocat test --show T7                   # follow one to its verdict
  tacocat test --cancel T7
""", _run)
    p.add_argument("bot", nargs="?", metavar="BOT",
                   help="the candidate: FILE.py, FILE.zip, or your version NAME@N")
    p.add_argument("--against", metavar="VERSION",
                   help="the baseline version: NAME@N (yours) or OWNER/NAME@N")
    p.add_argument("--name", help="with a file: the bot to upload it to (default: from the "
                                  "file name)")
    p.add_argument("--games", type=int, metavar="N",
                   help=f"at most N games, even (default {DEFAULT_GAMES:,})")
    p.add_argument("--games-per-match", type=int, metavar="N",
                   help="games per match on a worker, even (default 20)")
    p.add_argument("--decision-seconds", type=float, metavar="S",
                   help="time limit per decision (default 1, a ladder's default)")
    p.add_argument("--no-follow", action="store_true",
                   help="start the test and return (follow it later with --show ID)")
    sprt = p.add_argument_group("SPRT (always on: --sprt is accepted, as for tacocat play)")
    sprt.add_argument("--sprt", action="store_true",
                      help="accepted, so that a `tacocat play --sprt` line pastes as it is")
    sprt.add_argument("--elo0", type=float, default=0.0, help="H0's Elo of BOT over it (0)")
    sprt.add_argument("--elo1", type=float, default=5.0, help="H1's Elo of BOT over it (5)")
    sprt.add_argument("--alpha", type=float, default=0.05,
                      help="false-positive rate: H1 accepted although H0 holds (0.05)")
    sprt.add_argument("--beta", type=float, default=0.05,
                      help="false-negative rate: H0 accepted although H1 holds (0.05)")
    other = p.add_argument_group("other actions").add_mutually_exclusive_group()
    other.add_argument("--list", action="store_true",
                       help="list your tests, newest first (--all: everyone's)")
    other.add_argument("--show", metavar="ID", help="follow test ID (T7) to its end")
    other.add_argument("--cancel", metavar="ID", help="cancel your test ID")
    p.add_argument("--all", action="store_true", help="with --list: everyone's tests")
    p.add_argument("--version", dest="of_version", metavar="VERSION",
                   help="with --list: only tests with this version on either side")


def _run(args: argparse.Namespace, client: ArenaClient) -> int:
    if args.list:
        return _list(args, client)
    if args.show:
        return _follow(client, args.show)
    if args.cancel:
        trial = client.cancel_trial(args.cancel)
        print(f"test {trial.id}: {trial.verdict()}")
        return 0
    if not args.bot or not args.against:
        print("tacocat test: name the bot to test and the version to test it against, e.g. "
              "`tacocat test mybot.py --against mybot@3` (or --list, --show ID, --cancel ID)",
              file=sys.stderr)
        return 2
    try:
        sprt = Sprt(args.elo0, args.elo1, args.alpha, args.beta)
    except StatsError as exc:
        print(f"tacocat test: bad SPRT bounds: {exc}", file=sys.stderr)
        return 2
    candidate = _candidate(client, args)
    trial = client.create_trial(candidate, args.against, sprt=sprt,
                                max_games=args.games or DEFAULT_GAMES,
                                games_per_match=args.games_per_match or 0,
                                decision_seconds=args.decision_seconds or 0.0)
    print(f"test {trial.id}: {trial.candidate} (A) against {trial.baseline} (B), unrated, at "
          f"most {trial.max_games:,} games in matches of {trial.games_per_match}; "
          f"H0 {sprt.elo0:+g} Elo, H1 {sprt.elo1:+g}, alpha {sprt.alpha:g}, beta "
          f"{sprt.beta:g}")
    if args.no_follow:
        print(f"follow it with `tacocat test --show {trial.id}`")
        return 0
    return _follow(client, trial.id)


def _candidate(client: ArenaClient, args: argparse.Namespace) -> str:
    """The candidate's version id: an uploaded file's new (or identical old) version."""
    path = Path(args.bot)
    if path.suffix.lower() not in (".py", ".zip") and "@" in args.bot:
        return str(args.bot)
    try:
        version = client.submit(path, args.name).version
    except AlreadyExistsError as exc:
        same = _DUPLICATE.search(str(exc))
        if same is None:
            raise
        print(f"{path.name} is already {same.group(1)}: testing that version")
        return same.group(1)
    print(f"submitted {version.id}: {version.status.value}; the test starts once its smoke "
          "game passes")
    return version.id


def _follow(client: ArenaClient, trial_id: str) -> int:
    """Print a line per change until the test ends, then its verdict."""
    last = ""
    trial: Trial | None = None
    try:
        for trial in client.watch_trial(trial_id, reconnect=SayReconnecting(
                "tacocat test", client.address)):
            if trial.status is TrialStatus.WAITING:
                line = f"waiting for the smoke game of {trial.candidate}"
            elif trial.status is TrialStatus.RUNNING and not trial.games:
                line = "running: the first match is being played"
            else:
                line = trial.line()
            if line != last:
                print(f"test {trial.id}: {line}", file=sys.stderr, flush=True)
                last = line
    except KeyboardInterrupt:
        print(f"\nstopped following; the test goes on on the arena: `tacocat test --show "
              f"{trial_id}` follows it, `tacocat test --cancel {trial_id}` stops it",
              file=sys.stderr)
        return 130
    if trial is None:  # pragma: no cover - the server sends the test first
        return 1
    print(f"test {trial.id} ({trial.candidate} against {trial.baseline}): {trial.verdict()}")
    return 0 if trial.status in (TrialStatus.H0, TrialStatus.H1, TrialStatus.EXHAUSTED) else 1


def _list(args: argparse.Namespace, client: ArenaClient) -> int:
    owner = None if args.all else client.whoami().name
    found, more = client.trial_list(owner=owner, version=args.of_version)
    if not found:
        print("no tests yet: tacocat test mybot.py --against mybot@3")
        return 0
    rows = []
    for t in found:
        elo, half = t.pentanomial.elo()
        rows.append([t.id, t.owner, t.candidate, t.baseline, t.status.value, t.games,
                     f"{elo:+.1f} ± {half:.1f}" if t.games else "-",
                     f"{t.llr:+.2f} ({t.sprt.lower:+.2f}, {t.sprt.upper:+.2f})",
                     f"[{t.sprt.elo0:g}, {t.sprt.elo1:g}]", when(t.created_at)])
    print(table(["test", "owner", "candidate (A)", "baseline (B)", "status", "games",
                 "Elo ± 95%", "LLR (bounds)", "H0, H1", "created"], rows,
                align="lllllrrlll"))
    if more:
        print(f"tacocat test: the newest {len(found):,} tests; there are more (--version VERSION "
              "shows those of one version)", file=sys.stderr)
    return 0
