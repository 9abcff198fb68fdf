"""The arena commands: ``tacocat submit``, ``bot``, ``ladder``, ``leaderboard`` and ``match``
(``token`` and ``user`` are in :mod:`._account_cmds`), and the connection flags and error
handling they all share (:func:`command`). Each is a thin wrapper over
:class:`tacocat.sdk.ArenaClient`.

Every command takes ``--server ADDRESS`` (default ``$TACOCAT_ADDRESS`` or localhost:50051) and
``--token TOKEN`` (default ``$TACOCAT_TOKEN``, then ``$TACOCAT_TOKEN_FILE``, then, for a
server on this machine and only when none of these is given, the admin token that
``tacocat serve``/``tacocat up`` saved in ``.tacocat/data/admin.token``, which the command
then says on stderr). A token given empty is an error.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from tacocat.engine import EngineError, Ruleset
from tacocat.sdk import DEFAULT_ADDRESS, SdkError, Tls
from tacocat.sdk.arena import (
    SAVED_ADMIN_TOKEN,
    ArenaClient,
    AuthError,
    LadderStatus,
    Leaderboard,
    Match,
    PermissionDeniedError,
    VersionStatus,
)

from ._house_bots import add_house_bots
from ._logs_cmds import add_arguments as add_log_arguments
from ._logs_cmds import show_logs
from ._output import SayReconnecting, plural, table

if TYPE_CHECKING:
    Sub = argparse._SubParsersAction[argparse.ArgumentParser]

_TOKEN_HELP = """\
connection (every arena command):
  --server ADDRESS   the arena server (default $TACOCAT_ADDRESS, else localhost:50051)
  --token TOKEN      your token (default $TACOCAT_TOKEN, else the file $TACOCAT_TOKEN_FILE;
                     when none is given and the server is on this machine, the admin token
                     in .tacocat/data/admin.token that `tacocat serve` and `tacocat up`
                     write, said on stderr); a token given empty is an error
  --tls              speak TLS, trusting the system's root certificates
  --tls-ca CA.pem    speak TLS, trusting this CA (default $TACOCAT_TLS_CA)
  --tls-cert/--tls-key FILE   a client certificate and key, for a server that requires
                     one (defaults $TACOCAT_TLS_CERT, $TACOCAT_TLS_KEY)
"""
TLS_ENV: Final = {"tls_ca": "TACOCAT_TLS_CA", "tls_cert": "TACOCAT_TLS_CERT",
                  "tls_key": "TACOCAT_TLS_KEY"}


def _connection(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group("connection")
    group.add_argument("--server", metavar="ADDRESS", default=None,
                       help=f"arena server host:port (default $TACOCAT_ADDRESS or "
                            f"{DEFAULT_ADDRESS})")
    group.add_argument("--token", default=None,
                       help="your token (default $TACOCAT_TOKEN, $TACOCAT_TOKEN_FILE, or the "
                            "local server's .tacocat/data/admin.token)")
    group.add_argument("--tls", action="store_true",
                       help="speak TLS, trusting the system's root certificates")
    group.add_argument("--tls-ca", metavar="CA.pem", default=None,
                       help="speak TLS, trusting this CA's certificates (default "
                            "$TACOCAT_TLS_CA)")
    group.add_argument("--tls-cert", metavar="FILE.pem", default=None,
                       help="client certificate for mutual TLS (default $TACOCAT_TLS_CERT)")
    group.add_argument("--tls-key", metavar="FILE.key", default=None,
                       help="its private key (default $TACOCAT_TLS_KEY)")
    group.add_argument("--tls-server-name", metavar="NAME", default=None,
                       help="the name the server's certificate carries, when not the "
                            "host in --server")


def client_tls(args: argparse.Namespace) -> Tls | None:
    """The TLS settings of the connection flags (and their environment defaults)."""
    files = {name: getattr(args, name, None) or os.environ.get(env, "").strip() or None
             for name, env in TLS_ENV.items()}
    server_name = getattr(args, "tls_server_name", None)
    if not (getattr(args, "tls", False) or server_name or any(files.values())):
        return None
    return Tls(ca=files["tls_ca"], cert=files["tls_cert"], key=files["tls_key"],
               server_name=server_name)


def command(sub: Sub, name: str, help_text: str, description: str,
             run: Callable[[argparse.Namespace, ArenaClient], int]) -> argparse.ArgumentParser:
    p = sub.add_parser(name, help=help_text, description=description + "\n" + _TOKEN_HELP,
                       formatter_class=argparse.RawTextHelpFormatter)
    _connection(p)
    p.set_defaults(run=_with_client(run))
    return p


def _with_client(run: Callable[[argparse.Namespace, ArenaClient], int]
                 ) -> Callable[[argparse.Namespace], int]:
    def wrapper(args: argparse.Namespace) -> int:
        what = " ".join(p for p in (args.command, getattr(args, "action", None)) if p)
        try:
            with ArenaClient(args.server, args.token, tls=client_tls(args),
                             cli=True) as client:
                if client.token_source == str(SAVED_ADMIN_TOKEN):
                    print(f"tacocat {what}: no token given; using the local server's admin "
                          f"token ({SAVED_ADMIN_TOKEN})", file=sys.stderr)
                return run(args, client)
        except AuthError as exc:
            print(f"tacocat {what}: {exc}", file=sys.stderr)
            if exc.status == "UNAUTHENTICATED" and "needs a token" in str(exc):
                print("  pass --token TOKEN or set TACOCAT_TOKEN; on the server's machine the "
                      "admin token is in .tacocat/data/admin.token", file=sys.stderr)
            return 1
        except PermissionDeniedError as exc:
            print(f"tacocat {what}: {exc}", file=sys.stderr)
            return 1
        except SdkError as exc:
            print(f"tacocat {what}: {exc}", file=sys.stderr)
            return 1

    return wrapper


def add_parsers(sub: Sub) -> None:
    _add_submit(sub)
    _add_bot(sub)
    _add_ladder(sub)
    _add_leaderboard(sub)
    _add_match(sub)


# ------------------------------------------------------------------------------- submit


def _add_submit(sub: Sub) -> None:
    p = command(sub, "submit", "submit a bot (.py, .zip or folder) to an arena", """\
Upload a bot as the next version of one of your bots: a single .py file, a .zip with
bot.py at its root, or a bot folder (zipped for you; a bot in another language has its
bot.toml, and the arena builds it) (at most 1 MiB). The bot is named after the file or
folder unless --name says otherwise (created on its first submission). The new version is
pending until a smoke game in the sandbox passes; then it replaces the bot's previous
version in all its ladders.

examples:
  tacocat submit mybot.py --ladder main          # submit and join ladder main
  tacocat submit dist/tacobot.zip --name tacobot --wait
  tacocat submit cbot/ --ladder main --wait         # a C bot's folder
""", _submit)
    p.add_argument("file", type=Path, metavar="FILE",
                   help="the bot: FILE.py, FILE.zip or a bot folder")
    p.add_argument("--name", help="bot name (default: from the file name)")
    p.add_argument("--ladder", help="also enter the bot in this ladder")
    p.add_argument("--wait", action="store_true",
                   help="wait for the smoke game and report whether the version is active")
    p.add_argument("--wait-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="how long --wait waits (default 300)")


def _submit(args: argparse.Namespace, client: ArenaClient) -> int:
    done = client.submit(args.file, args.name, args.ladder)
    version = done.version
    print(f"submitted {version.id} ({version.size:,} bytes, sha256 {version.sha256[:12]}): "
          f"{version.status.value}, waits for its smoke game")
    ladder = done.entry.ladder if done.entry is not None else None
    if not args.wait:
        if ladder is not None:  # not "joined" yet: the smoke game may still reject it
            print(f"it plays in ladder {ladder} once its smoke game passes (see `tacocat bot "
                  f"versions {version.bot}`)")
        return 0
    deadline = time.monotonic() + args.wait_timeout
    while version.status is VersionStatus.PENDING:
        if time.monotonic() > deadline:
            print(f"tacocat submit: {version.id} is still pending after {args.wait_timeout:g} "
                  "s; is a worker running (tacocat worker)?", file=sys.stderr)
            return 1
        time.sleep(0.5)
        version = next(v for v in client.list_versions(version.bot) if v.id == version.id)
    if version.status is VersionStatus.REJECTED:
        print(f"{version.id} was rejected: {version.reason}")
        return 1
    print(f"{version.id} is active" + (f" and plays in ladder {ladder}" if ladder else ""))
    return 0


# ------------------------------------------------------------------------------- bots


def _bot_build_log(args: argparse.Namespace, client: ArenaClient) -> int:
    log = client.build_log(args.version)
    sys.stdout.write(log.decode("utf-8", "replace") or f"(the build of {args.version} "
                                                       "printed nothing)\n")
    return 0


def _add_bot(sub: Sub) -> None:
    p = sub.add_parser("bot", help="list bots and their versions",
                       description="List the bots of an arena, or one bot's versions.\n\n"
                                   "examples:\n  tacocat bot list --owner alice\n"
                                   "  tacocat bot versions alice/tacobot\n",
                       formatter_class=argparse.RawTextHelpFormatter)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    lst = command(actions, "list", "list bots", """\
List the arena's bots (or one owner's) with their version counts and the version that
plays now.

example:
  tacocat bot list --owner alice
""", _bot_list)
    lst.add_argument("--owner", help="only this user's bots")
    versions = command(actions, "versions", "list a bot's versions", """\
List a bot's versions, oldest first, with their status (pending, active, rejected and why).

example:
  tacocat bot versions alice/tacobot
""", _bot_versions)
    versions.add_argument("bot", metavar="BOT", help="owner/name (or your bot's name)")
    build_log = command(actions, "build-log", "show what a version's build printed", """\
Show what the arena's build of one of your versions printed (a bot in a language with a
build step, such as C): the compiler's errors of a rejected version, say.

example:
  tacocat bot build-log alice/cbot@2
""", _bot_build_log)
    build_log.add_argument("version", metavar="VERSION", help="owner/name@N")


def _bot_list(args: argparse.Namespace, client: ArenaClient) -> int:
    bots = client.list_bots(args.owner)
    if not bots:
        print("no bots yet: tacocat submit FILE.py")
        return 0
    print(table(["bot", "owner", "versions", "plays", "created"],
                [[b.name, b.owner, b.versions, f"@{b.current}" if b.current else "-",
                  when(b.created_at)] for b in bots], align="llrll"))
    return 0


def _bot_versions(args: argparse.Namespace, client: ArenaClient) -> int:
    versions = client.list_versions(args.bot)
    print(table(["version", "status", "kind", "bytes", "sha256", "submitted", "reason"],
                [[v.id, v.status.value, v.kind, f"{v.size:,}", v.sha256[:12],
                  when(v.created_at), v.reason] for v in versions], align="lllrlll"))
    return 0


# ------------------------------------------------------------------------------- ladders


def _add_ladder(sub: Sub) -> None:
    p = sub.add_parser("ladder", help="create, join, list and follow ladders",
                       description="Ladders: round-robin competitions under one ruleset.\n\n"
                                   "examples:\n  tacocat ladder create main "
                                   "--games-per-pairing 200\n  tacocat ladder join main "
                                   "tacobot\n  tacocat ladder status main\n",
                       formatter_class=argparse.RawTextHelpFormatter)
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    create = command(actions, "create", "create a ladder (admins)", """\
Create a ladder (admins only). Every pairing of its bots plays --games-per-pairing games,
in matches of --games-per-match games (even: duplicate pairs, seats swapped), with
--decision-seconds per decision. The house bots join it as baseline opponents (they play
once a worker has smoke-tested them), unless --no-house.

examples:
  tacocat ladder create main
  tacocat ladder create private --no-house
  tacocat ladder create blitz --games-per-pairing 40 --games-per-match 10 \\
      --decision-seconds 0.2 --ruleset short.toml
""", _ladder_create)
    create.add_argument("name", metavar="NAME", help="1-40 of [a-z0-9_-]")
    create.add_argument("--games-per-pairing", type=int, metavar="N",
                        help="games each pair of bots plays (default 200)")
    create.add_argument("--games-per-match", type=int, metavar="N",
                        help="games per match, even, dividing the above (default 20)")
    create.add_argument("--decision-seconds", type=float, metavar="S",
                        help="time limit per decision (default 1)")
    create.add_argument("--batch", type=int, metavar="K",
                        help="games of a match played at once, in lockstep (default: the "
                             "workers' --batch); the games are the same for every K")
    create.add_argument("--ruleset", type=Path, metavar="FILE",
                        help="ruleset .toml or .json (default: the standard rules)")
    create.add_argument("--no-house", action="store_true",
                        help="no house bots: by default the house bots (random, greedy, "
                             "strong; bots of the user `house`) join as baseline opponents, "
                             "so a first bot has someone to play and gets a rating")
    join = command(actions, "join", "enter a bot in a ladder", """\
Enter a bot in a ladder (its owner, or an admin). Its newest active version plays; a newer
version replaces it once active.

example:
  tacocat ladder join main tacobot
""", _ladder_join)
    join.add_argument("ladder", metavar="LADDER")
    join.add_argument("bot", metavar="BOT", help="your bot's name, or owner/name")
    status = command(actions, "status", "how far a ladder got", """\
Show a ladder's settings and progress: rounds, matches scheduled/recorded/pending, games.

example:
  tacocat ladder status main
""", _ladder_status)
    status.add_argument("ladder", metavar="LADDER")
    status.add_argument("--json", action="store_true", help="print JSON instead")
    command(actions, "list", "list the ladders", """\
List the arena's ladders and their settings.

example:
  tacocat ladder list
""", _ladder_list)


def _ladder_create(args: argparse.Namespace, client: ArenaClient) -> int:
    try:
        rules = Ruleset.load(args.ruleset) if args.ruleset else None
    except (OSError, EngineError) as exc:
        print(f"tacocat ladder create: {exc}", file=sys.stderr)
        return 2
    ladder = client.create_ladder(args.name, ruleset=rules,
                                  games_per_pairing=args.games_per_pairing,
                                  games_per_match=args.games_per_match,
                                  decision_seconds=args.decision_seconds, batch=args.batch)
    print(f"created ladder {ladder.name}: {ladder.games_per_pairing} games per pairing in "
          f"{plural(ladder.rounds, 'match', 'matches')} of {ladder.games_per_match}, "
          f"{ladder.decision_seconds:g} s per decision, {_batch(ladder.batch)}, rules "
          f"{ladder.ruleset.name!r}")
    if not args.no_house:
        add_house_bots(client, ladder.name, client_tls(args))
    return 0


def _batch(batch: int) -> str:
    return f"{plural(batch, 'game')} at once" if batch else \
        "the workers' batch of games at once"


def _ladder_join(args: argparse.Namespace, client: ArenaClient) -> int:
    entry = client.join(args.ladder, args.bot)
    plays = f"{entry.version} plays" if entry.version else \
        "it plays once a version passes its smoke game"
    print(f"{entry.bot} joined ladder {entry.ladder}: {plays}")
    return 0


def _ladder_status(args: argparse.Namespace, client: ArenaClient) -> int:
    status = client.ladder_status(args.ladder)
    if args.json:
        print(json.dumps(dataclasses.asdict(status)))
        return 0
    ladder = client.ladder(args.ladder)
    print(f"ladder {ladder.name}: {ladder.games_per_pairing} games per pairing, matches of "
          f"{ladder.games_per_match}, {ladder.decision_seconds:g} s per decision, "
          f"{_batch(ladder.batch)}, rules "
          f"{ladder.ruleset.name!r}, created by {ladder.created_by} {when(ladder.created_at)}")
    print(status_line(status))
    return 0


def _ladder_list(args: argparse.Namespace, client: ArenaClient) -> int:
    ladders = client.list_ladders()
    if not ladders:
        print("no ladders yet: an admin runs tacocat ladder create NAME")
        return 0
    print(table(["ladder", "games/pairing", "games/match", "s/decision", "rules", "created by"],
                [[lad.name, lad.games_per_pairing, lad.games_per_match,
                  f"{lad.decision_seconds:g}", lad.ruleset.name, lad.created_by]
                 for lad in ladders], align="lrrrll"))
    return 0


def status_line(status: LadderStatus) -> str:
    bots = f"{plural(status.entries, 'bot')} ({status.playing} playing)"
    if status.waiting_for_opponents:
        return (f"{bots} · waiting for opponents: nothing is played or rated until two bots "
                "play (tacocat ladder join LADDER BOT, or submit one with --ladder)")
    share = status.games_toward_target / status.games_target if status.games_target else 1.0
    state = "complete" if status.complete else "playing"
    return (f"{bots} · round {status.rounds_completed}/{status.rounds} · games "
            f"{status.games_toward_target:,}/{status.games_target:,} ({share:.0%}) · matches "
            f"{status.matches_recorded:,} recorded, {status.matches_pending:,} pending, "
            f"{status.matches_cancelled:,} cancelled"
            + (f", {status.matches_aborted:,} aborted" if status.matches_aborted else "")
            + f" · {state}")


# ------------------------------------------------------------------------------- leaderboard


LEADERBOARD_KEY = ("ranked by rating: the maximum-likelihood fit of all rated games, ± its 95% "
                   "interval; live Elo: the running per-game estimate (it can order bots "
                   "differently)")


def _add_leaderboard(sub: Sub) -> None:
    p = command(sub, "leaderboard", "a ladder's standings", """\
Show a ladder's standings: rank, bot, version, owner, rating ± its 95% interval, live Elo,
rated games, wins/ties/losses and forfeits by reason.

Which column orders the table: "rating", a batch Bradley-Terry fit of every rated game on
the Elo scale (it does not depend on the order the games were played in); "live Elo" is the
per-game estimate, updated after each game, shown to follow changes as they happen. The two
can rank bots differently until enough games are in.

Retired versions (a newer version of the bot plays) are left out; --retired shows them,
marked *. With --watch, redraw on every change until Ctrl-C; if the server restarts, it
says so on stderr and reconnects by itself (retrying every 0.5 s, growing to every 15 s).

examples:
  tacocat leaderboard main
  tacocat leaderboard main --watch
  tacocat leaderboard main --json > standings.json
""", _leaderboard)
    p.add_argument("ladder", metavar="LADDER")
    p.add_argument("--watch", action="store_true", help="follow live changes")
    p.add_argument("--json", action="store_true", help="print JSON (with --watch: one line "
                                                        "per update)")
    p.add_argument("--pairs", action="store_true", help="also show the head-to-head records")
    p.add_argument("--retired", action="store_true",
                   help="also show retired versions (their results stay)")


def _leaderboard(args: argparse.Namespace, client: ArenaClient) -> int:
    if not args.watch:
        board = client.leaderboard(args.ladder)
        if args.json:
            print(json.dumps(dataclasses.asdict(board)))
        else:
            print(leaderboard_text(board, pairs=args.pairs, retired=args.retired))
        return 0
    tty = sys.stdout.isatty() and not args.json
    for update in client.watch(args.ladder, reconnect=SayReconnecting("tacocat leaderboard",
                                                                      client.address)):
        if args.json:
            print(json.dumps({"event": update.event,
                              "leaderboard": dataclasses.asdict(update.leaderboard),
                              "status": dataclasses.asdict(update.status)}), flush=True)
            continue
        text = leaderboard_text(update.leaderboard, pairs=args.pairs,
                                retired=args.retired) + "\n" + status_line(update.status)
        if tty:
            sys.stdout.write("\033[H\033[2J" + text + "\n(watching; Ctrl-C to stop)\n")
        else:
            sys.stdout.write(text + "\n\n")
        sys.stdout.flush()
    return 0


def leaderboard_text(board: Leaderboard, *, pairs: bool = False, retired: bool = False) -> str:
    """The standings as an aligned table, with a title line; retired versions only with
    ``retired``."""
    title = f"ladder {board.ladder} · {plural(board.version, 'match', 'matches')} recorded"
    shown = [s for s in board.standings if retired or s.active]
    if not shown:
        return title + "\n(no bots play yet)"
    rows = []
    for s in shown:
        owner, _, name = s.bot.partition("/")
        rating = "-" if s.rating is None else f"{s.rating:.0f}"
        margin = "" if s.margin is None else f"± {s.margin:.0f}"
        forfeits = ", ".join(f"{fault} {n}" for fault, n in s.forfeits.items()) or "-"
        rows.append([s.rank, name + ("" if s.active else " *"),
                     "@" + s.version.rpartition("@")[2], owner, rating, margin,
                     f"{s.elo:.0f}", s.games, f"{s.wins}/{s.ties}/{s.losses}", forfeits])
    text = title + "\n" + table(
        ["#", "bot", "version", "owner", "rating", "95%", "live Elo", "games", "W/T/L",
         "forfeits"], rows, align="rlllrlrrrl")
    text += "\n" + LEADERBOARD_KEY
    hidden = len(board.standings) - len(shown)
    if any(not s.active for s in shown):
        text += "\n* retired: a newer version of the bot plays"
    elif hidden:
        text += f"\n{plural(hidden, 'retired version')} not shown (--retired shows them)"
    versions = {s.version for s in shown}
    met = [p for p in board.pairs if p.a in versions and p.b in versions]
    if pairs and met:
        text += "\n\n" + table(
            ["A", "B", "games", "W/T/L (A)", "LOS(A>B)"],
            [[p.a, p.b, p.games, f"{p.wins}/{p.ties}/{p.losses}", f"{p.los:.0%}"]
             for p in met], align="llrrr")
    return text


# ------------------------------------------------------------------------------- matches


def _add_match(sub: Sub) -> None:
    p = command(sub, "match", "a match's result and replays", """\
Show a recorded match (per-game results, totals, forfeits) or a ladder's recent matches,
and save a match's replays: a .jsonl file of RULES.md §8 records, one game per line (or the
stored .jsonl.gz as it is, when FILE ends in .gz). With --logs: what your own bot wrote to
stderr in it (its owner only; a link to the web viewer too).

examples:
  tacocat match main.3.5f0c2a9e1b7d4c36 --replays match.jsonl
  tacocat match --ladder main            # the ladder's latest matches
  tacocat match main.3.5f0c2a9e1b7d4c36 --logs --game 2   # what your bot printed
""", _match)
    p.add_argument("match", metavar="MATCH_ID", nargs="?", help="LADDER.ROUND.DIGEST")
    p.add_argument("--ladder", help="list this ladder's matches instead")
    p.add_argument("--count", type=int, default=20, help="with --ladder: how many (default 20)")
    p.add_argument("--replays", type=Path, metavar="FILE",
                   help="save the replays (FILE.jsonl, or FILE.jsonl.gz as stored)")
    p.add_argument("--json", action="store_true", help="print JSON instead")
    add_log_arguments(p)


def _match(args: argparse.Namespace, client: ArenaClient) -> int:
    if args.ladder:
        return _list_matches(args, client)
    if not args.match:
        print("tacocat match: give a MATCH_ID, or --ladder LADDER", file=sys.stderr)
        return 2
    if args.logs:
        return show_logs(args, client, args.match)
    match = client.match(args.match)
    if args.json:
        print(json.dumps(dataclasses.asdict(match)))
    else:
        print(match_text(match))
    if args.replays:
        blob = client.replays_blob(match.id)
        if not blob:
            print(f"tacocat match: {match.id} has no replays (yet)", file=sys.stderr)
            return 1
        if args.replays.suffix == ".gz":
            args.replays.write_bytes(blob)
        else:
            records = client.replays(match.id)
            args.replays.write_text("".join(r.dumps() + "\n" for r in records),
                                    encoding="utf-8")
        print(f"saved the replays of {match.id} to {args.replays}", file=sys.stderr)
    return 0


def _list_matches(args: argparse.Namespace, client: ArenaClient) -> int:
    """The ladder's latest ``--count`` matches, oldest of them first, fetched a server page
    at a time from the newest back; saying on stderr when they are not all of them."""
    if args.count < 1:
        print("tacocat match: --count must be at least 1", file=sys.stderr)
        return 2
    found: list[Match] = []
    while True:
        page = client.match_list(args.ladder, start=len(found), newest_first=True,
                                 count=args.count - len(found))
        found += page.matches
        if not page.matches or len(found) >= min(args.count, page.total):
            break
    found.reverse()
    if args.json:
        print(json.dumps([dataclasses.asdict(m) for m in found]))
    else:
        print(table(["match", "round", "A", "B", "status", "A: W/T/L"],
                    [[m.id, m.round, m.a, m.b, m.status.value,
                      f"{m.result.wins}/{m.result.ties}/{m.result.losses}" if m.result
                       else m.reason or "-"]
                     for m in found], align="lrllll") if found else "no matches yet")
    if len(found) < page.total:
        print(f"tacocat match: the latest {len(found):,} of {page.total:,} matches in "
              f"{args.ladder} (--count N shows more)", file=sys.stderr)
    return 0


def match_text(match: Match) -> str:
    lines = [f"match {match.id}: {match.a} vs {match.b}, round {match.round}, "
             f"{match.games} games, {match.status.value}"
             + (f": {match.reason}" if match.reason else "")]
    result = match.result
    if result is None:
        return lines[0]
    lines.append(f"{match.a}: {result.wins} won, {result.ties} tied, {result.losses} lost"
                 + (f", {result.aborted} aborted" if result.aborted else "")
                 + f" ({result.seconds:.1f} s{', ' + result.worker if result.worker else ''})")
    for side, name, forfeits in (("a", match.a, result.forfeits_a),
                                 ("b", match.b, result.forfeits_b)):
        if forfeits:
            shown = ", ".join(f"{fault} {n}" for fault, n in forfeits.items())
            lines.append(f"forfeits of {name} ({side.upper()}): {shown}")
    rows = [[i, g.a_seat, g.winner.upper() if g.winner else "-", g.reason.value,
             f"{g.fault.value} by {g.offender.upper()}" if g.fault and g.offender else "",
             f"{g.rounds[0]}-{g.rounds[1]}"] for i, g in enumerate(result.games, 1)]
    lines.append(table(["game", "A's seat", "winner", "reason", "forfeit", "rounds A-B"],
                       rows, align="rrllll"))
    if match.seed:
        lines.append(f"seed {match.seed}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- helpers


def when(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp).strftime("%Y-%m-%d %H:%M")
