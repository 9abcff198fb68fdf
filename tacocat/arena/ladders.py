"""Ladders (admin-made competitions under one ruleset) and the bots that joined them.

A ladder holds bots, not versions: an entry's playing version is always the bot's newest
active version, resolved when it is needed. So activating a new version moves every ladder
the bot is in onto it at once, and the older version "retires": it is scheduled no more,
but its results, ratings and records stay.

Each ladder also keeps a random secret, never shown by the API, from which match seeds are
derived (:func:`tacocat.arena.scheduler.match_seed`): seeds, and so deals, stay
unpredictable to bot authors who read earlier replays.
"""

from __future__ import annotations

import json
import math
import secrets
from collections.abc import Mapping
from typing import Any, Final

from tacocat.engine import DEFAULT_TIME_LIMIT, Ruleset, RulesetError
from tacocat.models import Entry, Ladder

from ._redis import Clock, Redis, default_clock, scored, script, text, text_map
from .bots import current_versions
from .errors import AlreadyExists, InvalidArgument, NotFound
from .ids import check_name
from .keys import Keys

DEFAULT_GAMES_PER_PAIRING: Final = 200
DEFAULT_GAMES_PER_MATCH: Final = 20
DEFAULT_DECISION_SECONDS: Final = DEFAULT_TIME_LIMIT
MAX_GAMES_PER_MATCH: Final = 10_000
MAX_GAMES_PER_PAIRING: Final = 100_000
MIN_DECISION_SECONDS: Final = 0.01
MAX_DECISION_SECONDS: Final = 60.0

_CREATE: Final = """
-- KEYS: ladder hash, ladders set. ARGV: name, then field/value pairs.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('SADD', KEYS[2], ARGV[1])
return 1
"""

_JOIN: Final = """
-- KEYS: ladder hash, ladder entries zset, bot's ladders set. ARGV: bot id, now, ladder.
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('ZADD', KEYS[2], 'NX', ARGV[2], ARGV[1]) == 0 then return 0 end
redis.call('SADD', KEYS[3], ARGV[3])
return 1
"""


def check_settings(
    games_per_pairing: int, games_per_match: int, decision_seconds: float, batch: int = 0
) -> None:
    """Raise :class:`InvalidArgument` naming the first bad ladder setting."""
    if isinstance(batch, bool) or not isinstance(batch, int) or not 0 <= batch <= 256:
        raise InvalidArgument(f"batch must be from 0 (the workers' default) to 256 games at "
                              f"once, got {batch!r}")
    if isinstance(games_per_match, bool) or not isinstance(games_per_match, int) or not (
        2 <= games_per_match <= MAX_GAMES_PER_MATCH and games_per_match % 2 == 0
    ):
        raise InvalidArgument(
            f"games_per_match must be an even number from 2 to {MAX_GAMES_PER_MATCH} (games "
            f"come in duplicate pairs, seats swapped), got {games_per_match!r}"
        )
    if isinstance(games_per_pairing, bool) or not isinstance(games_per_pairing, int) or (
        games_per_pairing < games_per_match or games_per_pairing % games_per_match
        or games_per_pairing > MAX_GAMES_PER_PAIRING
    ):
        raise InvalidArgument(
            f"games_per_pairing must be a positive multiple of games_per_match "
            f"({games_per_match}), at most {MAX_GAMES_PER_PAIRING:,}, got {games_per_pairing!r}"
        )
    if isinstance(decision_seconds, bool) or not (
            isinstance(decision_seconds, int | float) and math.isfinite(decision_seconds)
            and MIN_DECISION_SECONDS <= decision_seconds <= MAX_DECISION_SECONDS):
        raise InvalidArgument(
            f"decision_seconds must be a time limit from {MIN_DECISION_SECONDS} to "
            f"{MAX_DECISION_SECONDS:g} seconds, got {decision_seconds!r}"
        )


def create_ladder(
    redis: Redis, keys: Keys, name: str, *, created_by: str,
    ruleset: Ruleset | Mapping[str, Any] | None = None,
    games_per_pairing: int = DEFAULT_GAMES_PER_PAIRING,
    games_per_match: int = DEFAULT_GAMES_PER_MATCH,
    decision_seconds: float = DEFAULT_DECISION_SECONDS,
    batch: int = 0,
    clock: Clock = default_clock,
) -> Ladder:
    """Create a ladder (no permission check); :class:`AlreadyExists` if the name is taken."""
    check_name("ladder", name)
    rules = _ruleset(ruleset)
    check_settings(games_per_pairing, games_per_match, decision_seconds, batch)
    now = clock()
    fields = {
        "name": name,
        "ruleset": json.dumps(rules.to_dict(), sort_keys=True),
        "games_per_pairing": str(games_per_pairing),
        "games_per_match": str(games_per_match),
        "decision_seconds": repr(float(decision_seconds)),
        "batch": str(batch),
        "created_at": repr(now),
        "created_by": created_by,
        "secret": secrets.token_hex(16),
    }
    flat = [item for pair in fields.items() for item in pair]
    created = script(redis, "create_ladder", _CREATE)(
        keys=[keys.ladder(name), keys.ladders], args=[name, *flat]
    )
    if not created:
        raise AlreadyExists(f"ladder {name!r} already exists; pick another name")
    return Ladder(name, rules, games_per_pairing, games_per_match, float(decision_seconds),
                  now, created_by, batch)


def get_ladder(redis: Redis, keys: Keys, name: str) -> Ladder:
    return _ladder(_fields(redis, keys, name))


def ladder_secret(redis: Redis, keys: Keys, name: str) -> str:
    """The ladder's seed secret (internal: never hand it to an API caller)."""
    return _fields(redis, keys, name)["secret"]


def list_ladders(redis: Redis, keys: Keys) -> list[Ladder]:
    names = sorted(text(n) for n in redis.smembers(keys.ladders))
    return [get_ladder(redis, keys, name) for name in names]


def join_ladder(
    redis: Redis, keys: Keys, ladder: str, bot: str, *, clock: Clock = default_clock
) -> Entry:
    """Enter ``bot`` in ``ladder`` (no permission check, the bot must exist)."""
    now = clock()
    joined = script(redis, "join_ladder", _JOIN)(
        keys=[keys.ladder(ladder), keys.entries(ladder), keys.bot_ladders(bot)],
        args=[bot, repr(now), ladder],
    )
    if joined == -1:
        raise NotFound(f"no ladder {ladder!r}; `tacocat ladder list` shows the ladders there are")
    if joined == 0:
        raise AlreadyExists(f"bot {bot!r} already joined ladder {ladder!r}")
    return Entry(ladder, bot, now, current_versions(redis, keys, [bot])[bot])


def entries(redis: Redis, keys: Keys, ladder: str) -> list[Entry]:
    """The ladder's entries in join order, with the versions that play now."""
    joined = scored(redis.zrange(keys.entries(ladder), 0, -1, withscores=True))
    current = current_versions(redis, keys, [bot for bot, _ in joined])
    return [Entry(ladder, bot, at, current[bot]) for bot, at in joined]


def bot_ladders(redis: Redis, keys: Keys, bot: str) -> list[str]:
    """The ladders ``bot`` joined."""
    return sorted(text(n) for n in redis.smembers(keys.bot_ladders(bot)))


def playing_versions(redis: Redis, keys: Keys, ladder: str) -> list[str]:
    """The ids of the versions that play in ``ladder`` now, sorted."""
    return sorted({e.version for e in entries(redis, keys, ladder) if e.version is not None})


def _fields(redis: Redis, keys: Keys, name: str) -> dict[str, str]:
    fields = text_map(redis.hgetall(keys.ladder(name)))
    if not fields:
        raise NotFound(f"no ladder {name!r}; `tacocat ladder list` shows the ladders there are")
    return fields


MAX_DECK_CARDS: Final = 1000
"""Most cards a ladder's deck may hold: the engine takes any count, but every game of the
ladder deals the whole deck on a worker, so a typo (a billion sevens) must not reach one."""
MAX_ROUNDS: Final = 10_000
MAX_RULESET_NAME: Final = 60


def _ruleset(value: Ruleset | Mapping[str, Any] | None) -> Ruleset:
    if value is None:
        return Ruleset.standard()
    if isinstance(value, Ruleset):
        rules = value
    else:
        try:
            rules = Ruleset.from_dict(value)
        except RulesetError as exc:
            raise InvalidArgument(f"bad ruleset: {exc}") from exc
    cards = sum(rules.deck.values())
    if cards > MAX_DECK_CARDS:
        raise InvalidArgument(
            f"bad ruleset: its deck holds {cards} cards; a ladder's deck holds at most "
            f"{MAX_DECK_CARDS}")
    if rules.max_rounds > MAX_ROUNDS:
        raise InvalidArgument(
            f"bad ruleset: max_rounds {rules.max_rounds} is over {MAX_ROUNDS}")
    if len(rules.name) > MAX_RULESET_NAME or not rules.name.isprintable():
        raise InvalidArgument(
            f"bad ruleset: its name must be at most {MAX_RULESET_NAME} printable characters, "
            f"got {len(rules.name)} characters")
    return rules


def _ladder(fields: dict[str, str]) -> Ladder:
    return Ladder(
        fields["name"], Ruleset.from_dict(json.loads(fields["ruleset"])),
        int(fields["games_per_pairing"]), int(fields["games_per_match"]),
        float(fields["decision_seconds"]), float(fields["created_at"]), fields["created_by"],
        int(fields.get("batch", 0)),
    )
