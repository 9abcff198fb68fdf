"""Accounts, bots, their versions and their ladder entries.

Ids are readable strings, because they appear on leaderboards and in CLI output: user
``alice``, bot ``alice/tacobot`` (bot names are per owner, like repositories), version
``alice/tacobot@3`` (numbered 1, 2, ... per bot), ladder ``main``. Times are seconds since
the Unix epoch.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


def version_id(bot: str, number: int) -> str:
    """``owner/name@N``."""
    return f"{bot}@{number}"


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
class BotInfo:
    """A submitted bot (``owner/name``) of one owner; its code lives in its numbered
    versions. (The player interface a bot author implements is :class:`tacocat.engine.Bot`.)

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
class Entry:
    """A bot joined to a ladder. ``version`` is the version that plays now (its newest
    active one), None while the bot has no active version."""

    ladder: str
    bot: str
    joined_at: float
    version: str | None
