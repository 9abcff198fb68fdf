"""``tacocat serve``: run the live gRPC referee."""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import sys
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tacocat.engine import STANDARD, EngineError, Ruleset
from tacocat.sdk import DEFAULT_PORT, DEFAULT_TIME_LIMIT

from . import _arena_serve

if TYPE_CHECKING:
    from tacocat.server import ServerTls

DEFAULT_WEB_PORT = 8080

DESCRIPTION = f"""\
Run the live referee: bots connect with tacocat.sdk.connect() and play house bots or,
with a token, each other. Each decision has a time limit; a timeout, an illegal action,
a malformed message or a disconnect forfeits that game only. gRPC health checking and
server reflection are on. Stops cleanly on Ctrl-C / SIGTERM (running games are aborted
and recorded as such).

The same port serves the arena API (tacocat submit, ladder, leaderboard, token, user)
on the Redis of --redis-url / $REDIS_URL, or else on an embedded Redis persisting to
--data-dir. On the first start it creates the admin and prints the admin token once; it
also saves it (mode 0600) to DATA_DIR/admin.token, where the CLI on this machine finds it.
--no-arena serves the referee alone.

Prints "referee listening on HOST:PORT" once it accepts connections.

Security (docs/SECURITY.md): --tls-cert/--tls-key serve TLS on the gRPC port, and
--tls-client-ca also requires client certificates signed by that CA (mutual TLS). Live
games are rate-limited per player (the token's user; anonymous clients per IP address),
submissions per user; refusals are RESOURCE_EXHAUSTED and say when to retry.

examples:
  tacocat serve                                   # localhost:{DEFAULT_PORT}, house bots only
  tacocat serve --player alice=s3cret --player bob=hunter2 --records games.jsonl
  tacocat serve --host 0.0.0.0 --port 0 --time-limit 0.5
  REDIS_URL=redis://redis:6379/0 tacocat serve --host 0.0.0.0   # production Redis
  tacocat serve --no-arena                        # the referee alone, no Redis
  tacocat serve --host 0.0.0.0 --tls-cert server.pem --tls-key server.key
  tacocat serve --tls-cert server.pem --tls-key server.key --tls-client-ca clients-ca.pem
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser("serve", help="run the live gRPC referee", description=DESCRIPTION,
                       formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1; 0.0.0.0 or :: for all)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT,
                   help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--time-limit", type=float, default=DEFAULT_TIME_LIMIT, metavar="SECONDS",
                   help=f"per decision (default {DEFAULT_TIME_LIMIT:g})")
    p.add_argument("--player", action="append", default=[], metavar="NAME=TOKEN",
                   help="a live player and its token (repeatable); without any, only "
                        "anonymous play against house bots")
    p.add_argument("--records", type=Path, metavar="FILE.jsonl",
                   help="append every finished game's replay record to this file")
    p.add_argument("--ruleset", type=Path, help="ruleset .toml or .json (default: standard)")
    p.add_argument("--max-games", type=int, default=1000, help="most games per match")
    p.add_argument("--queue-timeout", type=float, default=300.0, metavar="SECONDS",
                   help="how long a client may wait for a live opponent (default 300)")
    p.add_argument("--grace", type=float, default=5.0, metavar="SECONDS",
                   help="on shutdown, how long running matches may go on (default 5)")
    p.add_argument("--log-level", default="INFO", help="logging level (default INFO)")
    tls = p.add_argument_group("TLS", "encrypt the gRPC port (the web UI stays plain HTTP)")
    tls.add_argument("--tls-cert", type=Path, metavar="FILE.pem",
                     help="the server's certificate chain (PEM, leaf first); needs --tls-key")
    tls.add_argument("--tls-key", type=Path, metavar="FILE.key",
                     help="the certificate's private key (PEM)")
    tls.add_argument("--tls-client-ca", type=Path, metavar="CA.pem",
                     help="require client certificates signed by this CA (mutual TLS)")
    limits = p.add_argument_group("limits", "abuse limits (docs/SECURITY.md has them all)")
    limits.add_argument("--live-games-per-second", type=float, default=20.0, metavar="N",
                        help="live games each player may start per second, on average "
                             "(default 20; anonymous clients count per IP address)")
    limits.add_argument("--live-game-burst", type=int, default=2000, metavar="N",
                        help="... and at once (default 2000; at least --max-games)")
    limits.add_argument("--max-matches-per-player", type=int, default=64, metavar="N",
                        help="matches one player may run or wait for at once (default 64)")
    limits.add_argument("--submissions-per-hour", type=float, default=20.0, metavar="N",
                        help="bot submissions each user may make per hour, on average "
                             "(default 20; admins are exempt)")
    limits.add_argument("--submission-burst", type=int, default=10, metavar="N",
                        help="... and at once (default 10)")
    limits.add_argument("--no-rate-limits", action="store_true",
                        help="no live-game or submission rate limits (trusted networks, "
                             "load tests)")
    _arena_serve.add_arguments(p)
    web = p.add_argument_group("web", "the web UI (live leaderboards, replays; needs the arena)")
    web.add_argument("--web-port", type=int, default=DEFAULT_WEB_PORT, metavar="PORT",
                     help=f"HTTP port of the web UI on --host (default {DEFAULT_WEB_PORT}; "
                          "0 picks a free one)")
    web.add_argument("--no-web", action="store_true", help="serve no web UI")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from tacocat.server import (  # noqa: PLC0415 - the server extra loads only when serving
        JsonlRecordFile,
        RecordSink,
        RefereeConfig,
        RefereeServer,
        ServerError,
        TokenTable,
        serve,
    )
    from tacocat.web import WebError  # noqa: PLC0415

    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        tokens = TokenTable(_parse_player(text) for text in args.player)
        rules = Ruleset.load(args.ruleset) if args.ruleset else STANDARD
        config = RefereeConfig(host=args.host, port=args.port, time_limit=args.time_limit,
                               rules=rules, max_games=args.max_games,
                               queue_timeout=args.queue_timeout, tls=_server_tls(args),
                               live_games_per_second=(None if args.no_rate_limits else
                                                      args.live_games_per_second),
                               live_game_burst=args.live_game_burst,
                               max_matches_per_player=args.max_matches_per_player)
        if config.tls is not None:
            config.tls.credentials()  # unreadable files fail here, before Redis starts
    except (ValueError, EngineError, ServerError) as exc:
        print(f"tacocat serve: {exc}", file=sys.stderr)
        return 2
    from tacocat.arena import ArenaError  # noqa: PLC0415

    try:
        arena = _arena_serve.open_arena(args)
    except ArenaError as exc:
        print(f"tacocat serve: {exc}", file=sys.stderr)
        return 1
    sinks: list[RecordSink] = []
    record_file = JsonlRecordFile(args.records) if args.records else None
    if record_file is not None:
        sinks.append(record_file)
    server = RefereeServer(config, sinks=sinks, services=arena.services,
                           authenticator=arena.authenticator(tokens if args.player else None),
                           limiter=arena.limiter())

    def ready(server: RefereeServer) -> None:
        print(f"referee listening on {server.address}", flush=True)
        if config.tls is not None:
            print(f"referee: {config.tls.describe()}", file=sys.stderr, flush=True)

    try:
        run_async(_with_web(serve(server, grace=args.grace, ready=ready), args, arena))
    except (ServerError, WebError) as exc:
        print(f"tacocat serve: {exc}", file=sys.stderr)
        return 1
    finally:
        if record_file is not None:
            record_file.close()
        arena.close()
    return 0


async def _with_web(serving: Coroutine[Any, Any, None], args: argparse.Namespace,
                    arena: _arena_serve.ArenaSetup) -> None:
    """Run ``serving`` with the web UI next to it in the same loop (unless --no-web or
    --no-arena). Prints "web UI on http://HOST:PORT/" once it listens; the arena service
    reports that URL to clients (``tacocat up`` prints it)."""
    if args.no_web or arena.arena is None:
        await serving
        return
    from tacocat.web import WebServer  # noqa: PLC0415

    web = WebServer(arena.arena, arena.redis_url, host=args.host, port=args.web_port)
    try:
        await web.start()
    except BaseException:
        serving.close()
        raise
    if arena.service is not None:
        arena.service.web_url = web.url
    print(f"web UI on {web.url}", flush=True)
    try:
        await serving
    finally:
        await web.stop()


def _server_tls(args: argparse.Namespace) -> ServerTls | None:
    from tacocat.server import ServerTls  # noqa: PLC0415

    if args.tls_cert is None and args.tls_key is None:
        if args.tls_client_ca is not None:
            raise ValueError("--tls-client-ca needs --tls-cert and --tls-key: mutual TLS is TLS "
                             "first")
        return None
    if args.tls_cert is None or args.tls_key is None:
        raise ValueError("give --tls-cert and --tls-key together (the certificate and its "
                         "private key)")
    return ServerTls(args.tls_cert, args.tls_key, args.tls_client_ca)


def _parse_player(text: str) -> tuple[str, str]:
    """``NAME=TOKEN`` -> (token, name)."""
    name, sep, token = text.partition("=")
    if not sep or not name or not token or "/" in name:
        raise ValueError(f"--player {text!r}: give NAME=TOKEN (a name without '/')")
    return token, name


_T = TypeVar("_T")
GC_THRESHOLDS = (20_000, 20, 20)
"""Cyclic-GC thresholds for long-running services (the defaults are 700, 10, 10)."""


def settle_heap() -> None:
    """Move everything imported so far (it lives as long as the process) out of the cyclic
    collector's sight: each full collection of a long run then walks only what the run made.
    For the processes that play matches and serve (in `tacocat bench engine`, a full
    collection took 25-30 ms before, 15 ms after)."""
    gc.collect()
    gc.freeze()


def run_async(coroutine: Coroutine[Any, Any, _T]) -> _T:
    """``asyncio.run`` on uvloop when it is installed (the server extra brings it): a
    cheaper event loop is most of what one referee process can still gain."""
    factory: Callable[[], asyncio.AbstractEventLoop] | None = None
    try:
        import uvloop  # noqa: PLC0415 - optional

        factory = uvloop.new_event_loop
    except ImportError:
        pass
    # Collect less often too, so that a collection never stalls every live game for
    # milliseconds (in `tacocat bench referee`, p99 23-26 ms became 19-23 ms).
    settle_heap()
    gc.set_threshold(*GC_THRESHOLDS)
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coroutine)
