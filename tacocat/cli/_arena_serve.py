"""The arena half of ``tacocat serve``: Redis (given or embedded), the ``Arena`` gRPC service,
the admin token's bootstrap, and the referee's arena-backed authenticator.

``tacocat serve`` calls :func:`add_arguments` and :func:`open_arena`; the returned
:class:`ArenaSetup` holds what the server needs (``services``, ``authenticator``) and what a
web UI would (``arena``, ``redis_url``; set ``service.web_url`` so clients learn the link).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tacocat.sdk.arena import ADMIN_TOKEN_FILE, DEFAULT_DATA_DIR

if TYPE_CHECKING:
    from tacocat.arena import Arena
    from tacocat.server import ArenaService, Authenticator, GameLimiter


def add_arguments(p: argparse.ArgumentParser) -> None:
    group = p.add_argument_group(
        "arena", "the arena API (submissions, ladders, leaderboards) on the same port")
    group.add_argument("--redis-url", default=os.environ.get("REDIS_URL", ""), metavar="URL",
                       help="the arena's Redis (default $REDIS_URL; without one, an embedded "
                            "server persisting to --data-dir)")
    group.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR, metavar="DIR",
                       help=f"embedded Redis data and the admin token file {ADMIN_TOKEN_FILE} "
                            f"(default {DEFAULT_DATA_DIR})")
    group.add_argument("--no-arena", action="store_true",
                       help="serve the referee only: no Redis, no arena API")
    group.add_argument("--open-registration", action="store_true",
                       help="let anyone make themselves a user and token (`tacocat user "
                            "register NAME`), a few per IP per hour; off: admins make users")


@dataclass
class ArenaSetup:
    """An open arena for one server process; :meth:`close` stops an embedded Redis."""

    arena: Arena | None = None
    redis_url: str = ""
    service: ArenaService | None = None
    data_dir: Path | None = None
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)

    @property
    def services(self) -> list[ArenaService]:
        return [self.service] if self.service is not None else []

    def authenticator(self, others: Authenticator | None = None) -> Authenticator | None:
        """The referee's authenticator: ``others`` (``--player`` tokens) first, then the
        arena's users."""
        from tacocat.server import ArenaAuthenticator, FirstOf  # noqa: PLC0415

        if self.arena is None:
            return others
        arena_auth = ArenaAuthenticator(self.arena)
        return arena_auth if others is None else FirstOf([others, arena_auth])

    def limiter(self) -> GameLimiter | None:
        """The referee's live-game limiter: in the arena's Redis (shared by every server
        process), or None (the referee's in-memory one) without an arena."""
        from tacocat.server import ArenaLimiter  # noqa: PLC0415

        return ArenaLimiter(self.arena) if self.arena is not None else None

    def close(self) -> None:
        if self.arena is not None:
            self.arena.redis.close()
        self._stack.close()


def open_arena(args: argparse.Namespace) -> ArenaSetup:
    """Connect to (or start) Redis, bootstrap the admin token (printed once, saved to the
    data dir with mode 0600) and make the service. ``--no-arena``: an empty setup.

    Raises :class:`tacocat.arena.ArenaError` (RedisUnavailable, EmbeddedServerError) when
    Redis cannot be used.
    """
    setup = ArenaSetup()
    if args.no_arena:
        return setup
    import redis  # noqa: PLC0415 - the server extra loads only when serving

    from tacocat.arena import (  # noqa: PLC0415
        NO_LIMITS,
        Arena,
        RateLimit,
        RateLimits,
        redact_url,
        redis_url_or_embedded,
    )
    from tacocat.server import ArenaService, bootstrap_admin_token  # noqa: PLC0415

    data_dir: Path = args.data_dir
    try:
        setup.redis_url = setup._stack.enter_context(
            redis_url_or_embedded(args.redis_url or None, data_dir))
        setup.data_dir = data_dir
        rate_limits = NO_LIMITS if getattr(args, "no_rate_limits", False) else RateLimits(
            submissions=RateLimit(getattr(args, "submission_burst", 10),
                                  getattr(args, "submissions_per_hour", 20.0) / 3600))
        setup.arena = Arena(redis.Redis.from_url(setup.redis_url), rate_limits=rate_limits)
        admin = bootstrap_admin_token(setup.arena, data_dir / ADMIN_TOKEN_FILE)
    except BaseException:
        setup.close()
        raise
    if admin.created and admin.token is not None:
        print("arena: the admin token (shown once; also saved, mode 0600, to "
              f"{admin.path}):\n  {admin.token}", flush=True)
    elif admin.token is not None:
        print(f"arena: the admin token is in {admin.path}", flush=True)
    embedded = "embedded Redis in " + str(data_dir) if not args.redis_url else "Redis"
    print(f"arena: {embedded} at {redact_url(setup.redis_url)}", file=sys.stderr, flush=True)
    setup.service = ArenaService(setup.arena,
                                 open_registration=getattr(args, "open_registration", False))
    if setup.service.open_registration:
        print("arena: registration is open: anyone may `tacocat user register NAME`",
              file=sys.stderr, flush=True)
    return setup

