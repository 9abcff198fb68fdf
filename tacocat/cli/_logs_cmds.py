"""``tacocat match ID --logs``: what your bots wrote to stderr during an arena match.

The server sends the logs of the sides whose bot the token's user owns (nobody else's) and
a signed link to the match page showing them, which works in a browser without a token
until it expires (:mod:`tacocat.arena.logs`).
"""

from __future__ import annotations

import argparse
import sys
import time
import urllib.parse
from datetime import datetime
from typing import Final

from tacocat.protocol.logs import shown_as_text
from tacocat.sdk.arena import ArenaClient, BotLog, MatchLogs

LINK_MINUTES: Final = 60


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--logs", action="store_true",
                   help="print what your bot(s) wrote to stderr in this match (tracebacks "
                        "included; at most 64 KiB per bot per match) and a link to see them "
                        "in the web viewer; only a bot's owner may")
    p.add_argument("--game", type=int, metavar="N",
                   help="with --logs: only game N's part (games count from 1)")
    p.add_argument("--link-minutes", type=float, default=LINK_MINUTES, metavar="M",
                   help=f"with --logs: how long the printed link works (default "
                        f"{LINK_MINUTES}, at most a week)")


def show_logs(args: argparse.Namespace, client: ArenaClient, match_id: str) -> int:
    if args.game is not None and args.game < 1:
        print(f"tacocat match: --game counts games from 1, not {args.game}", file=sys.stderr)
        return 2
    found = client.logs(match_id, link_seconds=args.link_minutes * 60)
    for log in found.logs:
        print(log_text(log, args.game))
    link = logs_link(client, found)
    if link:
        print(f"in the web viewer (until {when(found.link_expires_at)}, no token needed; "
              f"do not share it): {link}", file=sys.stderr)
    return 0


def log_text(log: BotLog, game: int | None = None) -> str:
    """What ``--logs`` prints of ``log``: the bot's words with their control characters
    escaped, so no escape sequence it wrote reaches the owner's terminal."""
    head = f"--- {log.version} (side {log.side.upper()})"
    if not log.stored:
        return f"{head}: no log was kept of this match"
    if game is not None:
        part = shown_as_text(log.games().get(game, ""))
        return f"{head}, game {game}:\n{part}" if part.strip() else \
            f"{head}: nothing written in game {game}"
    text = shown_as_text(log.text)
    return f"{head}:\n{text}" if text.strip() else f"{head}: the bot wrote nothing"


def logs_link(client: ArenaClient, found: MatchLogs) -> str:
    """The match page with the signed ``logs`` parameter, on the server's web address."""
    if not found.link:
        return ""
    web = client.server_info().web_url.rstrip("/")
    path = (f"/matches/{urllib.parse.quote(found.match, safe='')}?"
            f"{urllib.parse.urlencode({'logs': found.link})}")
    return f"{web}{path}" if web else f"{path} (on the arena's web server)"


def when(timestamp: float) -> str:
    left = max(0, round((timestamp - time.time()) / 60))
    return f"{datetime.fromtimestamp(timestamp).strftime('%H:%M')}, in {left} min"
