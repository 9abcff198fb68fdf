"""The arena's domain types: frozen dataclasses, built by the stores from Redis hashes.

Identifiers are readable strings, because they appear on leaderboards and in CLI output:

- a user is its name: ``alice``;
- a bot is ``owner/name``: ``alice/tacobot`` (bot names are per owner, like repositories);
- a bot version is ``owner/name@N``: ``alice/tacobot@3``, numbered 1, 2, ... per bot;
- a ladder is its name: ``main``;
- a match is ``LADDER.ROUND.DIGEST``: ``main.3.5f0c2a9e1b7d4c36``, derived from the ladder,
  the round and the pair of versions (see :func:`tacocat.arena.scheduler.match_id`).

Names (users, bots, ladders) are 1-40 characters of lowercase letters, digits, ``-`` and
``_``, starting with a letter or digit: safe in Redis keys, URLs and file names alike.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import Final

from tacocat.engine import Ruleset, ScheduledGame, duplicate_pairs

from .errors import InvalidArgument
from .results import MatchResult

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


def version_id(bot: str, number: int) -> str:
    """``owner/name@N``."""
    return f"{bot}@{number}"


def split_version_id(value: str) -> tuple[str, int]:
    """``(bot id, number)`` from ``owner/name@N``; raises :class:`InvalidArgument` otherwise."""
    found = _VERSION_ID.fullmatch(value) if isinstance(value, str) else None
    if found is None or int(found.group(3)) < 1:
        raise InvalidArgument(
            f"version id {shown(value)} must look like owner/name@N with N >= 1")
    return f"{found.group(1)}/{found.group(2)}", int(found.group(3))


@dataclass(frozen=True)
class User:
    """An account. ``admin`` users may create users, tokens for others, and ladders."""

    name: str
    admin: bool
    created_at: float


@dataclass(frozen=True)
class TokenInfo:
    """What is known about a token without its plaintext (which is never stored).

    ``id`` is the first 16 hex digits of the token's sha256: enough to name it for
    revocation, useless for guessing it.
    """

    id: str
    user: str
    label: str
    created_at: float


@dataclass(frozen=True)
class Bot:
    """A named bot of one owner; its code lives in its numbered versions.

    ``current`` is the number of its newest *active* version (0 while none is active): the
    version that plays in every ladder the bot joined.
    """

    id: str
    owner: str
    name: str
    created_at: float
    versions: int
    current: int

    @property
    def current_version(self) -> str | None:
        """The id of the version that plays, or None while no version is active."""
        return version_id(self.id, self.current) if self.current else None


class VersionStatus(str, Enum):
    """Where a version is in its life: submitted, then smoke-tested once."""

    PENDING = "pending"
    """Stored and validated; waits for its smoke game in the sandbox."""
    ACTIVE = "active"
    """Passed the smoke game; the newest active version of a bot plays in its ladders."""
    REJECTED = "rejected"
    """Failed the smoke game (``reason`` says how); never plays."""


@dataclass(frozen=True)
class BotVersion:
    """One immutable upload of a bot.

    ``kind`` is ``"py"`` (a single file, run as ``bot.py``) or ``"zip"`` (an archive with
    ``bot.py`` at its root). ``sha256`` is the hex digest of the uploaded bytes.
    """

    id: str
    bot: str
    number: int
    filename: str
    kind: str
    size: int
    sha256: str
    status: VersionStatus
    reason: str
    created_at: float
    decided_at: float | None

    @property
    def owner(self) -> str:
        return self.bot.partition("/")[0]


@dataclass(frozen=True)
class Ladder:
    """A competition between bots under one ruleset.

    Every pairing of the ladder's playing versions meets in matches of ``games_per_match``
    games (even: duplicate pairs), round after round, until it has played
    ``games_per_pairing`` games (a multiple of ``games_per_match``). A bot gets
    ``decision_seconds`` of wall-clock time per decision. A match plays ``batch`` of its
    games at once (0: as many as the worker's default; the records are the same either way).
    """

    name: str
    ruleset: Ruleset
    games_per_pairing: int
    games_per_match: int
    decision_seconds: float
    created_at: float
    created_by: str
    batch: int = 0

    @property
    def rounds(self) -> int:
        """Matches each pairing plays: ``games_per_pairing // games_per_match``."""
        return self.games_per_pairing // self.games_per_match


@dataclass(frozen=True)
class Entry:
    """A bot joined to a ladder. ``version`` is the version that plays now (its newest
    active one), None while the bot has no active version."""

    ladder: str
    bot: str
    joined_at: float
    version: str | None


class MatchStatus(str, Enum):
    SCHEDULED = "scheduled"
    """Created and enqueued; no result yet."""
    RECORDED = "recorded"
    """Its result is stored (exactly once)."""
    CANCELLED = "cancelled"
    """One of its versions retired before the match was played; workers skip it (a result
    that arrives anyway is still recorded: it is a real result between two versions)."""
    ABORTED = "aborted"
    """It failed the same way too many times (e.g. its job ran past its timeout, its work
    horse was killed or stalled): given up with a ``reason``, not rated, and the ladder's
    schedule moves on as for a cancelled match (a result that arrives anyway is recorded)."""


@dataclass(frozen=True)
class Match:
    """A batch of games between two versions of one ladder, in one round.

    ``seed`` is the match seed; :meth:`schedule` deals its games from it in duplicate pairs
    (:func:`tacocat.engine.duplicate_pairs`).
    ``seq`` is the match's position in the ladder's results log (1, 2, ...) once recorded.
    ``result`` is loaded without replays; fetch those with ``Arena.match_replays``.
    """

    id: str
    ladder: str
    round: int
    a: str
    b: str
    games: int
    seed: str
    status: MatchStatus
    created_at: float
    enqueued_at: float
    recorded_at: float | None = None
    seq: int | None = None
    result: MatchResult | None = None
    reason: str = ""
    """Why the match was aborted (``ABORTED`` only): for its bots' owners and operators."""

    def schedule(self) -> tuple[ScheduledGame, ...]:
        """The match's games: duplicate pairs dealt from ``seed``
        (:func:`tacocat.engine.duplicate_pairs`, the one schedule)."""
        return duplicate_pairs(self.games, self.seed)


def ladder_of_match(match_id: str) -> str:
    """The ladder name in a match id (``LADDER.ROUND.DIGEST``)."""
    ladder, dot, rest = match_id.partition(".")
    if not dot or not _NAME.fullmatch(ladder) or rest.count(".") != 1:
        raise InvalidArgument(f"match id {shown(match_id)} must look like LADDER.ROUND.DIGEST")
    return ladder
