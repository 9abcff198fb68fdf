"""BotInfo logs: what each bot of a match wrote to stderr, kept for its owner and nobody else.

The worker keeps each sandboxed bot's stderr over a match (capped at 64 KiB per bot per
match, :mod:`tacocat.protocol.logs`; the tracebacks of its crashes are in it) and, once the
match is recorded, stores it here gzip-compressed beside the replays, one key per side
(:meth:`~tacocat.arena.keys.Keys.match_logs`). A bot's output is its own words: it may
quote anything the bot read in its sandbox, so unlike the replays it is never public.

Who may read a side's log: the owner of that side's bot (``owner/name@N``'s ``owner``), by
token (:func:`owned_sides`), or whoever holds a link the owner was given
(:func:`sign_link`): an HMAC, under an arena-wide secret kept in Redis, of the match, the
sides and an expiry time. Admins are not owners: they read nobody's logs through the API.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import io
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from tacocat.models import SIDES, Match, Side, User

from ._redis import Redis
from .errors import InvalidArgument, PermissionDenied
from .ids import ladder_of_match, split_version_id
from .keys import Keys

LINK_SECONDS: Final = 3600.0
"""How long a signed link lasts by default."""
MAX_LINK_SECONDS: Final = 7 * 24 * 3600.0
_MAX_LOG_TEXT: Final = 1024 * 1024
"""Decompression stops here (a stored log is 64 KiB and a notice; a bug must not hurt)."""
_NOT_YOURS: Final = ("the logs of match {match} are its bots' owners' only, and you own "
                     "neither {a} nor {b}; log in with the owner's token (--token or "
                     "TACOCAT_TOKEN)")


@dataclass(frozen=True, slots=True)
class MatchLog:
    """One side's log of one match."""

    match: str
    side: Side
    version: str
    text: str
    """What the bot wrote (UTF-8, undecodable bytes replaced), with ``=== game N ===``
    markers and the referee's ``[referee]`` lines; empty if it wrote nothing."""
    stored: bool
    """Whether the worker stored a log (False for matches played before logs were kept)."""


def owner_of(version: str) -> str | None:
    """The user who owns ``version``'s bot (None for a house bot, which nobody owns)."""
    try:
        bot, _ = split_version_id(version)
    except InvalidArgument:
        return None
    return bot.partition("/")[0]


def owned_sides(user: User | None, match: Match) -> tuple[Side, ...]:
    """The sides of ``match`` whose bot ``user`` owns."""
    if user is None:
        return ()
    return tuple(side for side, version in zip(SIDES, (match.a, match.b), strict=True)
                 if owner_of(version) == user.name)


def not_yours(match: Match) -> PermissionDenied:
    return PermissionDenied(_NOT_YOURS.format(match=match.id, a=match.a, b=match.b))


def store(redis: Redis, keys: Keys, match_id: str, logs: Mapping[Side, bytes]) -> None:
    """Keep each side's log (an empty one too: "the bot wrote nothing" is worth knowing)."""
    ladder = ladder_of_match(match_id)
    pipe = redis.pipeline(transaction=False)
    for side, data in logs.items():
        pipe.set(keys.match_logs(ladder, match_id, side), gzip.compress(data, mtime=0))
    pipe.execute()


def read(redis: Redis, keys: Keys, match: Match, sides: Sequence[Side]) -> list[MatchLog]:
    """The stored logs of ``sides`` (the caller checked who may read them)."""
    ladder = ladder_of_match(match.id)
    pipe = redis.pipeline(transaction=False)
    for side in sides:
        pipe.get(keys.match_logs(ladder, match.id, side))
    found: list[MatchLog] = []
    for side, blob in zip(sides, pipe.execute(), strict=True):
        text = _decompress(bytes(blob)) if blob else ""
        found.append(MatchLog(match.id, side, match.a if side == "a" else match.b, text,
                              blob is not None))
    return found


def _decompress(blob: bytes) -> str:
    with gzip.GzipFile(fileobj=io.BytesIO(blob)) as handle:
        return handle.read(_MAX_LOG_TEXT).decode("utf-8", "replace")


# -- signed links ------------------------------------------------------------------------------


def _secret(redis: Redis, keys: Keys) -> bytes:
    """The arena's link secret, made on first use (every server of the arena shares it)."""
    key = keys.log_link_secret()
    redis.set(key, secrets.token_hex(32), nx=True)
    value = redis.get(key)
    assert value is not None  # just set, and never deleted
    return value if isinstance(value, bytes) else str(value).encode()


def _mac(secret: bytes, match_id: str, sides: str, expires: int) -> str:
    message = f"{match_id}\n{sides}\n{expires}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()[:32]


def sign_link(redis: Redis, keys: Keys, match_id: str, sides: Sequence[Side],
              expires: float) -> str:
    """The ``logs`` parameter of a link that shows ``sides``' logs until ``expires``:
    ``SIDES.EXPIRES.MAC`` (``ab.1764660000.3f...``)."""
    when = int(expires)
    joined = "".join(sides)
    return f"{joined}.{when}.{_mac(_secret(redis, keys), match_id, joined, when)}"


def check_link(redis: Redis, keys: Keys, match_id: str, token: str,
               now: float) -> tuple[Side, ...]:
    """The sides a link's ``logs`` parameter shows; :class:`PermissionDenied` saying what is
    wrong (malformed, forged, for another match, expired)."""
    joined, _, rest = token.partition(".")
    when_text, _, mac = rest.partition(".")
    if (joined not in ("a", "b", "ab") or not when_text.isdigit() or len(mac) != 32):
        raise PermissionDenied("this logs link is malformed; ask `tacocat match ID --logs` "
                               "for a new one")
    expected = _mac(_secret(redis, keys), match_id, joined, int(when_text))
    if not hmac.compare_digest(expected, mac):
        raise PermissionDenied("this logs link is not valid for this match (forged or "
                               "altered); ask `tacocat match ID --logs` for a new one")
    if int(when_text) < now:
        raise PermissionDenied("this logs link has expired; `tacocat match ID --logs` "
                               "prints a new one")
    return tuple(side for side in SIDES if side in joined)


def check_link_seconds(seconds: float) -> float:
    if not 0 < seconds <= MAX_LINK_SECONDS:
        raise InvalidArgument(f"a logs link lasts more than 0 and at most "
                              f"{MAX_LINK_SECONDS:g} s (a week), not {seconds:g} s")
    return seconds
