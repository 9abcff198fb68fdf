"""The arena's identifiers: names, bot and version ids, match ids, checked and split.

Identifiers are readable strings, because they appear on leaderboards and in CLI output:

- a user is its name: ``alice``;
- a bot is ``owner/name``: ``alice/tacobot`` (bot names are per owner, like repositories);
- a bot version is ``owner/name@N``: ``alice/tacobot@3``, numbered 1, 2, ... per bot;
- a ladder is its name: ``main``;
- a match is ``LADDER.ROUND.DIGEST``: ``main.3.5f0c2a9e1b7d4c36``, derived from the ladder,
  the round and the pair of versions (see :func:`tacocat.arena.scheduler.match_id`).

Names (users, bots, ladders) are 1-40 characters of lowercase letters, digits, ``-`` and
``_``, starting with a letter or digit: safe in Redis keys, URLs and file names alike.

The value types the arena stores (``BotInfo``, ``Ladder``, ``Match``, ...) are
:mod:`tacocat.models`'s, shared with the SDK.
"""

from __future__ import annotations

import re
from typing import Final

from tacocat.models import version_id

from .errors import InvalidArgument

_NAME: Final = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
_VERSION_ID: Final = re.compile(r"([a-z0-9][a-z0-9_-]{0,39})/([a-z0-9][a-z0-9_-]{0,39})@(\d+)")


def check_name(kind: str, name: object) -> str:
    """``name`` if it is a valid user, bot or ladder name (``kind`` says which), else raise."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidArgument(
            f"{kind} name {shown(name)} is not allowed: use 1-40 lowercase letters, digits, "
            "'-' and '_', starting with a letter or digit"
        )
    return name


def shown(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to about ``limit`` characters, for echoing input in messages."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def bot_id(owner: str, name: str) -> str:
    """``owner/name``."""
    return f"{owner}/{name}"


def split_bot_id(value: str) -> tuple[str, str]:
    """``(owner, name)`` from ``owner/name``; raises :class:`InvalidArgument` otherwise."""
    owner, slash, name = value.partition("/")
    if not slash:
        raise InvalidArgument(f"bot id {shown(value)} must look like owner/name")
    return check_name("user", owner), check_name("bot", name)


def split_version_id(value: str) -> tuple[str, int]:
    """``(bot id, number)`` from ``owner/name@N``; raises :class:`InvalidArgument` otherwise."""
    found = _VERSION_ID.fullmatch(value) if isinstance(value, str) else None
    if found is None or int(found.group(3)) < 1:
        raise InvalidArgument(
            f"version id {shown(value)} must look like owner/name@N with N >= 1")
    return f"{found.group(1)}/{found.group(2)}", int(found.group(3))


def ladder_of_match(match_id: str) -> str:
    """The ladder name in a match id (``LADDER.ROUND.DIGEST``)."""
    ladder, dot, rest = match_id.partition(".")
    if not dot or not _NAME.fullmatch(ladder) or rest.count(".") != 1:
        raise InvalidArgument(f"match id {shown(match_id)} must look like LADDER.ROUND.DIGEST")
    return ladder


__all__ = [
    "bot_id", "check_name", "ladder_of_match", "shown", "split_bot_id",
    "split_version_id", "version_id",
]
