"""The aiohttp application: HTML pages, the JSON API and the live-update stream.

Pages::

    GET /                                     ladders with their progress
    GET /ladders/{name}                       standings, chart, crosstable, recent (live)
    GET /matches/{id}[?game=N]                the replay viewer (game N, from 1), the games
    GET /live/{id}[?game=N]                   a running match, followed game by game
    GET /bots/{owner}/{name}                  versions, ratings, recent matches, head to head
    GET /users/{name}                         a user's bots

JSON::

    GET /api/ladders                          every ladder with its status
    GET /api/ladders/{name}                   ladder, status, standings, recent matches
    GET /api/ladders/{name}/crosstable        pairwise records, scores and LOS
    GET /api/ladders/{name}/history           live Elo after every recorded match
    GET /api/ladders/{name}/matches[?count=N] the results log, newest first (N <= 1000;
                                              "total": how many there are)
    GET /api/ladders/{name}/events            server-sent events: one ``update`` per change
    GET /api/ladders/{name}/update            the same update once (the page's fallback)
    GET /api/matches/{id}                     a match and its per-game results
    GET /api/matches/{id}/games/{n}           game ``n`` (from 1): replay record, viewer steps
    GET /api/matches/{id}/replays.jsonl.gz    every replay record, as stored
    GET /api/bots/{owner}/{name}              a bot page's data; /api/users/{name} a user's
    GET /api/matches/{id}/live                server-sent events: ``game`` as each game of a
                                              running match ends, ``done`` when recorded
    GET /healthz                              200 when Redis answers

The arena calls are synchronous (the :class:`Arena` facade on a sync Redis client); every
handler runs them in a worker thread. Live updates come from :class:`LiveHub`.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from importlib import resources
from typing import Any, Final, TypeVar
from urllib.parse import quote

from aiohttp import web

from tacocat.arena import Arena, ArenaError, MatchStatus, NotFound, RedisUnavailable
from tacocat.arena.history import rating_history
from tacocat.engine import RecordError
from tacocat.server.metrics import unsandboxed_workers

from . import _data, _people, _render
from ._live import LiveHub
from ._logs_view import PRIVATE_HEADERS, api_match_logs, logs_panel, requested_logs
from ._metrics import add_metrics_route
from ._trials import add_trial_routes

log = logging.getLogger("tacocat.web")

_T = TypeVar("_T")

@dataclass(frozen=True)
class WebSettings:
    """``ping_seconds``: SSE keep-alive comment interval; ``min_interval``: the shortest time
    between two live renders of one ladder; ``retry_ms``: the browser's reconnect delay."""

    ping_seconds: float = 15.0
    min_interval: float = 0.25
    retry_ms: int = 2000
    live_poll_seconds: float = 1.0
    """How often a live viewer's stream looks for a newly finished game."""


MAX_LISTED_MATCHES: Final = 1000
"""The most matches ``/api/ladders/{name}/matches`` returns (a larger ``count`` is cut)."""
ARENA: web.AppKey[Arena] = web.AppKey("arena", Arena)
HUB: web.AppKey[LiveHub] = web.AppKey("hub", LiveHub)
STATIC: web.AppKey[_render.Static] = web.AppKey("static", _render.Static)
SETTINGS: web.AppKey[WebSettings] = web.AppKey("settings", WebSettings)

CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
       "frame-ancestors 'none'")


def create_app(arena: Arena, redis_url: str, settings: WebSettings | None = None
               ) -> web.Application:
    """The web UI on ``arena``. ``redis_url`` is the same Redis (the live listener opens its
    own asyncio connection to it)."""
    settings = settings or WebSettings()
    app = web.Application(middlewares=[_headers, _errors])
    app[ARENA] = arena
    app[STATIC] = _render.Static()
    app[SETTINGS] = settings

    async def render(ladder: str, view: Hashable) -> dict[str, Any]:
        chosen = view if isinstance(view, _data.LadderView) else None
        snap = await _call(_data.load_ladder, arena, ladder, view=chosen)
        return _update(snap)

    app[HUB] = LiveHub(redis_url, arena.keys.events("*"), arena.ladders.events_channel, render,
                       min_interval=settings.min_interval)

    async def start_hub(app: web.Application) -> None:
        app[HUB].start()

    async def stop_hub(app: web.Application) -> None:
        await app[HUB].close()

    app.on_startup.append(start_hub)
    app.on_shutdown.append(stop_hub)  # before connections close: ends the event streams
    routes = [
        web.get("/", home),
        web.get("/ladders/{name}", ladder_page),
        web.get("/matches/{id}", match_page),
        web.get("/live/{id}", live_page),
        web.get("/bots/{owner}/{name}", bot_page),
        web.get("/users/{name}", user_page),
        web.get("/api/ladders", api_ladders),
        web.get("/api/ladders/{name}", api_ladder),
        web.get("/api/ladders/{name}/crosstable", api_crosstable),
        web.get("/api/ladders/{name}/history", api_history),
        web.get("/api/ladders/{name}/matches", api_ladder_matches),
        web.get("/api/ladders/{name}/events", api_events),
        web.get("/api/ladders/{name}/update", api_ladder_update),
        web.get("/api/matches/{id}", api_match),
        web.get("/api/matches/{id}/games/{game}", api_game),
        web.get("/api/matches/{id}/replays.jsonl.gz", api_replays),
        web.get("/api/matches/{id}/live", api_live_events),
        web.get("/api/matches/{id}/logs", api_logs),
        web.get("/api/bots/{owner}/{name}", api_bot),
        web.get("/api/users/{name}", api_user),
        web.get("/healthz", healthz),
    ]
    app.add_routes(routes)
    add_trial_routes(app, arena, app[STATIC])
    add_metrics_route(app, arena)
    app.router.add_static("/static", str(resources.files(__package__) / "static"),
                          append_version=False)
    return app


async def _call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    return await asyncio.to_thread(fn, *args, **kwargs)


def _update(snap: _data.LadderSnapshot) -> dict[str, Any]:
    return {
        "ladder": snap.ladder.name, "version": snap.version, "at": time.time(),
        "status": _data.status_json(snap.status),
        "html": _render.ladder_fragments(snap),
    }


# -- middleware -----------------------------------------------------------------------------


def _wants_json(request: web.Request) -> bool:
    return request.path.startswith("/api/")


def _problem(request: web.Request, status: int, title: str, message: str) -> web.Response:
    if _wants_json(request):
        return web.json_response({"error": title, "status": status, "message": message},
                                 status=status)
    return web.Response(text=_render.error_page(request.app[STATIC], status, title, message),
                        status=status, content_type="text/html")


@web.middleware
async def _errors(request: web.Request,
                  handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                  ) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _problem(request, exc.status, exc.reason, exc.text or exc.reason)
    except NotFound as exc:
        return _problem(request, 404, "Not found", str(exc))
    except RedisUnavailable as exc:
        log.warning("%s %s: %s", request.method, request.path, exc)
        return _problem(request, 503, "Unavailable",
                        "The arena's Redis does not answer right now; try again shortly.")
    except ArenaError as exc:  # InvalidArgument: a malformed name or id in the URL
        status = 404 if exc.status == "INVALID_ARGUMENT" else 500
        return _problem(request, status, "Not found" if status == 404 else "Error", str(exc))


@web.middleware
async def _headers(request: web.Request,
                   handler: Callable[[web.Request], Awaitable[web.StreamResponse]]
                   ) -> web.StreamResponse:
    response = await handler(request)
    if not response.prepared:
        response.headers.setdefault("Content-Security-Policy", CSP)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault("X-Frame-Options", "DENY")
        if not request.path.startswith("/static/"):
            response.headers.setdefault("Cache-Control", "no-cache")
    return response


def _html(text: str) -> web.Response:
    return web.Response(text=text, content_type="text/html", charset="utf-8")


def _json(data: Any) -> web.Response:
    return web.json_response(data, dumps=lambda d: json.dumps(d, separators=(",", ":")))


def _int_param(request: web.Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query.get(name)
    if raw is None:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise web.HTTPBadRequest(reason="Bad request",
                                 text=f"{name} must be an integer, got {raw!r}") from None
    return min(max(value, low), high)


# -- pages ----------------------------------------------------------------------------------


async def home(request: web.Request) -> web.Response:
    ladders = await _call(_data.load_ladders, request.app[ARENA])
    return _html(_render.home_page(request.app[STATIC], ladders))


async def ladder_page(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    view = _view(request)
    snap = await _call(_data.load_ladder, request.app[ARENA], name, view=view)
    events = f"/api{_render.ladder_url(name)}/events{view.query}"
    return _html(_render.ladder_page(request.app[STATIC], snap, events))


async def match_page(request: web.Request) -> web.Response:
    view = await _call(_data.load_match, request.app[ARENA], request.match_info["id"])
    game: int | None = None
    data: dict[str, Any] | None = None
    problem: str | None = None
    if view.records:  # ?game= numbers games from 1, as every page and the CLI do
        game = _int_param(request, "game", 1, 1, len(view.records)) - 1
        try:
            data = await _call(_data.game_json, view, game)
        except RecordError as exc:
            problem = f"Game {game + 1}'s replay record does not replay: {exc}"
    elif view.match.result is not None:
        problem = "The worker kept no replays for this match."
    owner = await requested_logs(request, request.app[ARENA], view.match.id)
    if owner is None:
        return _html(_render.match_page(request.app[STATIC], view, game, data, problem))
    logs, keep = owner
    response = _html(_render.match_page(request.app[STATIC], view, game, data, problem,
                                        logs=logs_panel(logs, game), keep=keep))
    response.headers.update(PRIVATE_HEADERS)
    return response


async def live_page(request: web.Request) -> web.Response:
    arena = request.app[ARENA]
    match, running = await _call(arena.live.match, request.match_info["id"])
    if match.status is not MatchStatus.SCHEDULED:
        raise web.HTTPFound(_render.match_url(match.id))
    finished = tuple(await _call(arena.live.games, match)) if running else ()
    view = _data.live_view(match, await _call(arena.ladders.get, match.ladder), finished)
    game: int | None = None
    data: dict[str, Any] | None = None
    waiting: str | None = None
    if view.records:
        # ?game= is the game's number in the match (from 1); by default the newest to end.
        newest = _data.newest_place(match, finished)
        place = _int_param(request, "game", (newest or 0) + 1, 1, match.games) - 1
        if place in view.places:
            game = view.places.index(place)
            data = await _call(_data.game_json, view, game)
        else:
            waiting = f"Game {place + 1} is still being played; it appears here when it ends."
    banner = _render.live_banner(match, running, len(view.records),
                                 f"/api/matches/{quote(match.id, safe='')}/live")
    return _html(_render.match_page(request.app[STATIC], view, game, data, waiting,
                                    live=banner))


async def bot_page(request: web.Request) -> web.Response:
    bot = f"{request.match_info['owner']}/{request.match_info['name']}"
    data = await _call(_people.load_bot_page, request.app[ARENA], bot)
    return _html(_people.bot_page(request.app[STATIC], data))


async def user_page(request: web.Request) -> web.Response:
    data = await _call(_people.load_user_page, request.app[ARENA], request.match_info["name"])
    return _html(_people.user_page(request.app[STATIC], data))


# -- JSON -----------------------------------------------------------------------------------


async def api_ladders(request: web.Request) -> web.Response:
    ladders = await _call(_data.load_ladders, request.app[ARENA])
    return _json({"ladders": [_data.summary_json(s) for s in ladders]})


async def api_ladder(request: web.Request) -> web.Response:
    snap = await _call(_data.load_ladder, request.app[ARENA], request.match_info["name"])
    return _json(_data.snapshot_json(snap))


async def api_crosstable(request: web.Request) -> web.Response:
    board = await _call(request.app[ARENA].ladders.leaderboard, request.match_info["name"])
    return _json(_data.crosstable_json(board))


async def api_history(request: web.Request) -> web.Response:
    arena = request.app[ARENA]
    history = await _call(rating_history, arena.redis, arena.keys, request.match_info["name"])
    return _json(history.to_json())


async def api_ladder_matches(request: web.Request) -> web.Response:
    count = _int_param(request, "count", _data.RECENT_MATCHES, 1, MAX_LISTED_MATCHES)
    arena = request.app[ARENA]
    name = request.match_info["name"]
    log_entries = await _call(arena.ladders.recent_matches, name, count)
    status = await _call(arena.ladders.status, name)
    # "total" says when the list is not all of them; "max_count" is the most one asks for.
    return _json({"matches": [_data.log_json(e) for e in log_entries],
                  "total": status.matches_recorded, "max_count": MAX_LISTED_MATCHES})


async def api_match(request: web.Request) -> web.Response:
    view = await _call(_data.load_match, request.app[ARENA], request.match_info["id"],
                       replays=False)
    data = _data.match_json(view)
    data.pop("replays")
    return _json(data)


async def api_game(request: web.Request) -> web.Response:
    view = await _call(_data.load_match, request.app[ARENA], request.match_info["id"])
    raw = request.match_info["game"]
    index = int(raw) - 1 if raw.isdigit() else -1  # games are numbered from 1 everywhere
    if not 0 <= index < len(view.records):
        raise web.HTTPNotFound(reason="Not found",
                               text=f"match {view.match.id!r} has no replay of game {raw!r}"
                                    f" (its {len(view.records)} replays are games 1 to "
                                    f"{len(view.records)})")
    try:
        return _json(await _call(_data.game_json, view, index))
    except RecordError as exc:
        raise web.HTTPUnprocessableEntity(reason="Bad replay", text=str(exc)) from None


async def api_replays(request: web.Request) -> web.Response:
    arena = request.app[ARENA]
    match_id = request.match_info["id"]
    blob = await _call(arena.matches.replays_blob, match_id)
    if not blob:
        raise web.HTTPNotFound(reason="Not found", text=f"match {match_id!r} has no replays")
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in match_id)
    return web.Response(body=blob, content_type="application/gzip", headers={
        "Content-Disposition": f'attachment; filename="{safe}.jsonl.gz"'})


async def api_logs(request: web.Request) -> web.Response:
    return await api_match_logs(request, request.app[ARENA])


async def api_bot(request: web.Request) -> web.Response:
    bot = f"{request.match_info['owner']}/{request.match_info['name']}"
    return _json(_people.bot_json(await _call(_people.load_bot_page, request.app[ARENA], bot)))


async def api_user(request: web.Request) -> web.Response:
    data = await _call(_people.load_user_page, request.app[ARENA], request.match_info["name"])
    return _json(_people.user_json(data))


async def api_ladder_update(request: web.Request) -> web.Response:
    return _json(_update(await _call(_data.load_ladder, request.app[ARENA],
                                     request.match_info["name"])))


async def api_live_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events for a running match: ``game`` (``{"games": N, "total": T,
    "latest": G}``, G the number of the game that ended last) whenever the number of
    finished games changes, ``waiting`` while no worker plays it, then ``done``
    once it is recorded (or cancelled). Polls Redis once a second: cheap, and no change is
    ever missed."""
    arena = request.app[ARENA]
    match, _ = await _call(arena.live.match, request.match_info["id"])  # 404 first
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no"})
    settings = request.app[SETTINGS]
    hub = request.app[HUB]
    shown = -1
    quiet = 0.0
    try:
        await response.prepare(request)
        await response.write(f"retry: {settings.retry_ms}\n\n".encode())
        while not hub.closed:
            match, running = await _call(arena.live.match, match.id)
            if match.status is not MatchStatus.SCHEDULED:
                state = {"status": match.status.value, "url": _render.match_url(match.id)}
                await response.write(_named("done", state))
                break
            # Not started yet (or its worker died and it waits to be played again).
            games = running.games if running is not None else -1
            if games != shown:
                shown = games
                if running is None:
                    await response.write(_named("waiting", {"total": match.games}))
                else:
                    # "latest": the number (from 1) of the game that ended last, for the
                    # viewer to follow; games end out of schedule order. Its deal and seats
                    # place it (only the last is read: a long match has many).
                    finished = await _call(arena.live.games, match, games - 1) if games else []
                    newest = _data.newest_place(match, finished)
                    await response.write(_named("game", {
                        "games": games, "total": match.games,
                        "latest": None if newest is None else newest + 1}))
            else:
                quiet += settings.live_poll_seconds
                if quiet >= settings.ping_seconds:  # a viewer that left is noticed here
                    quiet = 0.0
                    await response.write(b": ping\n\n")
            await asyncio.sleep(settings.live_poll_seconds)
    except (ConnectionResetError, ConnectionError):
        pass
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write_eof()
    return response


def _named(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


async def api_events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: an ``update`` now, then one per change of the ladder."""
    app = request.app
    name = request.match_info["name"]
    view = _view(request)
    first = _update(await _call(_data.load_ladder, app[ARENA], name, view=view))  # 404 first
    settings = app[SETTINGS]
    hub = app[HUB]
    response = web.StreamResponse(headers={
        "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache",
        "X-Accel-Buffering": "no"})
    watcher = hub.watch(name, view)
    try:
        await response.prepare(request)
        await response.write(f"retry: {settings.retry_ms}\n\n".encode())
        await response.write(_event(first))
        while not watcher.closed:
            update = await watcher.next(settings.ping_seconds)
            if watcher.closed:
                break
            if update is None:
                await response.write(b": ping\n\n")
            else:
                await response.write(_event(update))
    except (ConnectionResetError, ConnectionError):
        pass  # the browser went away
    finally:
        hub.unwatch(watcher)
    with contextlib.suppress(ConnectionError, RuntimeError):
        await response.write_eof()
    return response


def _view(request: web.Request) -> _data.LadderView:
    """The page of a big ladder the URL asks for; 400 saying what is wrong otherwise."""
    try:
        return _data.LadderView.from_query(request.query)
    except ValueError as exc:
        raise web.HTTPBadRequest(reason="Bad request",
                                 text=f"{exc}; drop it for the first page") from None


def _event(update: dict[str, Any]) -> bytes:
    data = json.dumps(update, separators=(",", ":"))
    return f"id: {update['version']}\nevent: update\ndata: {data}\n\n".encode()


async def healthz(request: web.Request) -> web.Response:
    arena = request.app[ARENA]
    try:
        await _call(arena.redis.ping)
    except Exception as exc:  # any failure means "not healthy"
        return web.Response(status=503, text=f"redis: {type(exc).__name__}\n")
    # Still healthy (this server serves), but say what the operator must fix on the workers.
    lacking = await _call(unsandboxed_workers, arena.redis)
    warnings = "".join(f"warning: worker {name} cannot sandbox submitted bots (they wait): "
                       f"{why}\n" for name, why in lacking)
    return web.Response(text="ok\n" + warnings)
