"""Who is playing: tokens from call metadata, checked by a pluggable authenticator.

A live client sends ``authorization: Bearer TOKEN``. The referee asks its
:class:`Authenticator` which player the token belongs to; the arena will back that with Redis,
and :class:`TokenTable` is the in-memory one for development, tests and small servers.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Protocol

_BEARER = "bearer "


class Authenticator(Protocol):
    """Maps a token to a player name."""

    async def authenticate(self, token: str) -> str | None:
        """The player ``token`` belongs to, or ``None`` when it belongs to no one."""


class TokenTable:
    """Tokens held in memory (hashed, so a lookup's timing says nothing about a token)."""

    def __init__(self, tokens: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        self._players: dict[bytes, str] = {}
        items = tokens.items() if isinstance(tokens, Mapping) else tokens
        for token, player in items:
            self.add(token, player)

    def add(self, token: str, player: str) -> None:
        if not token or not player:
            raise ValueError("a token and its player must both be non-empty")
        self._players[_digest(token)] = player

    def remove(self, token: str) -> None:
        self._players.pop(_digest(token), None)

    async def authenticate(self, token: str) -> str | None:
        return self._players.get(_digest(token))


def token_from_metadata(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The bearer token of a call, or ``None`` for an anonymous one."""
    for key, value in metadata or ():
        if key.lower() == "authorization":
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            # Never trimmed: a token is matched exactly, or refused saying why.
            if text.lower().startswith(_BEARER):
                return text[len(_BEARER):] or None
            return text or None
    return None


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()
