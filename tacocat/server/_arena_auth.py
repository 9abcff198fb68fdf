"""Arena tokens on the server side: the referee's authenticator backed by the arena, and the
admin token's bootstrap (printed once, kept in a 0600 file for local tools)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tacocat.arena import Arena, NotFound, Unauthenticated
from tacocat.arena.users import ADMIN, issue_token

from ._auth import Authenticator

log = logging.getLogger("tacocat.server.arena")


class ArenaAuthenticator:
    """The referee's :class:`~tacocat.server.Authenticator` over the arena's users: a live
    player is the user holding the token. A Redis failure propagates (the referee answers
    UNAVAILABLE), an unknown token is None (UNAUTHENTICATED)."""

    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def authenticate(self, token: str) -> str | None:
        try:
            user = await asyncio.to_thread(self.arena.users.authenticate, token)
        except Unauthenticated:
            return None
        return user.name


class FirstOf:
    """Asks several authenticators in turn; the first that knows the token answers."""

    def __init__(self, authenticators: Sequence[Authenticator]) -> None:
        self.authenticators = list(authenticators)

    async def authenticate(self, token: str) -> str | None:
        for authenticator in self.authenticators:
            player = await authenticator.authenticate(token)
            if player is not None:
                return player
        return None


@dataclass(frozen=True)
class AdminToken:
    """The admin token as the bootstrap left it. ``created``: it was made just now (show it
    once); ``token`` is None when it is neither new nor in ``path``."""

    token: str | None
    path: Path
    created: bool


def bootstrap_admin_token(arena: Arena, path: Path, *, recover: bool = False) -> AdminToken:
    """On the arena's first start, create the admin and its token and write the token to
    ``path`` (mode 0600). Later starts return the token in ``path`` if it still works.

    With ``recover`` (for a process that owns the Redis, such as ``tacocat up``), a missing or
    revoked token file is replaced by a fresh admin token: whoever holds the Redis holds the
    arena anyway.
    """
    token = arena.users.bootstrap_admin()
    if token is not None:
        write_token_file(path, token)
        return AdminToken(token, path, True)
    saved = read_token_file(path)
    if saved is not None:
        with contextlib.suppress(Unauthenticated):
            if arena.users.authenticate(saved).admin:
                return AdminToken(saved, path, False)
    if not recover:
        return AdminToken(None, path, False)
    try:
        arena.users.get(ADMIN)
    except NotFound:
        return AdminToken(None, path, False)
    token = issue_token(arena.redis, arena.keys, ADMIN, label="recovered by tacocat up",
                        clock=arena.clock)
    write_token_file(path, token)
    log.warning("the admin token in %s was missing or revoked; issued a new one", path)
    return AdminToken(token, path, True)


def write_token_file(path: Path, token: str) -> None:
    """Write ``token`` to ``path``, readable by its owner only (0600 from the start)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    os.replace(tmp, path)


def read_token_file(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return text or None
