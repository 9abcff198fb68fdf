"""Bot logs on the web: the match page's "Your bot's logs" panel and ``/api/matches/ID/logs``.

A bot's stderr is its owner's only (:mod:`tacocat.arena.logs`). A request shows it when it
carries the owner's token (``Authorization: Bearer TOKEN``, as the gRPC API takes it) or a
signed ``logs`` parameter from ``tacocat match ID --logs`` (a browser sends no header, so the
link is how the viewer gets there); without either the page is the public one, and a bad
token or link is refused (403) saying what to do. Pages with logs are never cached and send
no referrer, so the link does not travel further than the tab it was opened in.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from urllib.parse import urlencode

from aiohttp import web

from tacocat.arena import Arena, MatchLog, PermissionDenied, Unauthenticated
from tacocat.protocol.logs import shown_as_text, split_games
from tacocat.server import token_from_metadata

from ._html import Html, join, tag

PRIVATE_HEADERS = {"Cache-Control": "private, no-store", "Referrer-Policy": "no-referrer"}


async def requested_logs(request: web.Request, arena: Arena,
                         match_id: str) -> tuple[list[MatchLog], str] | None:
    """The logs this request may see, with the query to keep in its links (``logs=...``);
    None when it asks for none. Raises 403 for a wrong token or link."""
    link = request.query.get("logs")
    token = token_from_metadata(request.headers.items())
    if link is None and token is None:
        return None
    try:
        if link is not None:
            found = await asyncio.to_thread(arena.matches.logs_by_link, match_id, link)
            return found, urlencode({"logs": link})
        user = await asyncio.to_thread(arena.users.authenticate, token)
        return await asyncio.to_thread(arena.matches.logs, user, match_id), ""
    except (PermissionDenied, Unauthenticated) as exc:
        raise web.HTTPForbidden(reason="Forbidden", text=str(exc)) from None


async def api_match_logs(request: web.Request, arena: Arena) -> web.Response:
    """``/api/matches/ID/logs``: JSON of the logs the request may see (403 without a token
    or link: nobody reads another owner's logs anonymously)."""
    match_id = request.match_info["id"]
    found = await requested_logs(request, arena, match_id)
    if found is None:
        raise web.HTTPForbidden(reason="Forbidden", text=(
            "a bot's logs are its owner's only: send `Authorization: Bearer TOKEN` (the "
            "owner's token) or open the link `tacocat match ID --logs` prints"))
    body = {"match": match_id, "logs": [log_json(log) for log in found[0]]}
    return web.json_response(body, headers=PRIVATE_HEADERS)


def log_json(log: MatchLog) -> dict[str, object]:
    games = split_games(log.text)
    return {"side": log.side, "version": log.version, "stored": log.stored,
            "text": log.text, "start": games.get(None, ""),
            "games": {str(game + 1): part for game, part in games.items()
                      if game is not None}}


def logs_panel(logs: Sequence[MatchLog], game: int | None) -> Html:
    """The owner's panel: each side's part of the log for ``game`` (0-based; None: all of
    it), the whole log folded below."""
    blocks = []
    for log in logs:
        title = f"{log.version} (side {log.side.upper()})"
        if not log.stored:
            blocks.append(tag("p", f"{title}: no log was kept of this match.", class_="empty"))
            continue
        text = shown_as_text(log.text)  # a bot's escape sequences, shown, not obeyed
        parts = split_games(text)
        shown = text if game is None else parts.get(game, "")
        what = "everything" if game is None else f"game {game + 1}"
        body: Html = (tag("pre", shown, class_="bot-log", data_side=log.side)
                      if shown.strip() else
                      tag("p", f"Nothing written in {what}.", class_="empty"))
        whole = tag("details", tag("summary", "The whole log of the match"),
                    tag("pre", text or "(empty)", class_="bot-log"))
        blocks.append(join([tag("h3", f"{title}: {what}"), body,
                            whole if game is not None else ""]))
    return tag("section", tag("h2", "Your bot's logs", id="logs-title"),
               tag("p", "What your bot wrote to stderr (at most 64 KiB per bot per match). "
                        "Only you see this: keep the link to yourself.", class_="hint"),
               *blocks, class_="panel logs", id="logs", aria_labelledby="logs-title")
