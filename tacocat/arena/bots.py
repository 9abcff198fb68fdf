"""Bots and their immutable, numbered versions.

Submitting stores a new version (``owner/name@N``, N = 1, 2, ...) with its bytes, sha256
and ``pending`` status; the first submission of a name creates the bot. A version leaves
``pending`` once, after its smoke game: :func:`decide_version` makes it ``active`` (if it is
the bot's newest active version it becomes the one that plays) or ``rejected`` with a reason.
Both steps are Lua scripts, so version numbers have no gaps or duplicates and a decision is
made once even if the smoke job runs twice.

Functions here check no permissions; :class:`tacocat.arena.Arena` does.
"""

from __future__ import annotations

from typing import Final

from tacocat.models import BotInfo, BotVersion, VersionStatus, version_id

from ._redis import Clock, Redis, default_clock, script, text, text_map
from .errors import (
    Contention,
    DuplicateSubmission,
    FailedPrecondition,
    NotFound,
    PermissionDenied,
)
from .ids import bot_id, split_version_id
from .keys import Keys
from .submissions import Submission

_ATTEMPTS: Final = 20

_SUBMIT: Final = """
-- KEYS: bot hash, bots set, owner's bots set, bot's digest hash, version hash,
--       version source, pending versions zset.
-- ARGV: bot id, owner, bot name, expected version count, now, sha256, source bytes,
--       version id, filename, kind, size.
-- The version number is chosen by the caller (count + 1) and checked here, so every key
-- this script writes is declared and numbers never skip or repeat.
local owner = redis.call('HGET', KEYS[1], 'owner')
if owner and owner ~= ARGV[2] then return {'owner', owner} end
local count = tonumber(redis.call('HGET', KEYS[1], 'versions') or '0')
if count ~= tonumber(ARGV[4]) then return {'retry', tostring(count)} end
local duplicate = redis.call('HGET', KEYS[4], ARGV[6])
if duplicate then return {'duplicate', duplicate} end
if not owner then
  redis.call('HSET', KEYS[1], 'id', ARGV[1], 'owner', ARGV[2], 'name', ARGV[3],
             'created_at', ARGV[5], 'versions', '0', 'current', '0')
  redis.call('SADD', KEYS[2], ARGV[1])
  redis.call('SADD', KEYS[3], ARGV[1])
end
local number = count + 1
redis.call('HSET', KEYS[1], 'versions', tostring(number))
redis.call('HSET', KEYS[5], 'id', ARGV[8], 'bot', ARGV[1], 'number', tostring(number),
           'filename', ARGV[9], 'kind', ARGV[10], 'size', ARGV[11], 'sha256', ARGV[6],
           'status', 'pending', 'reason', '', 'created_at', ARGV[5])
redis.call('SET', KEYS[6], ARGV[7])
redis.call('HSET', KEYS[4], ARGV[6], tostring(number))
redis.call('ZADD', KEYS[7], ARGV[5], ARGV[8])
return {'ok', tostring(number)}
"""

_DECIDE: Final = """
-- KEYS: version hash, bot hash, pending versions zset, bot's digest hash.
-- ARGV: new status ('active' or 'rejected'), reason, now, version id.
-- Returns {'ok', previous current number, new current number} or {'decided', status}.
local status = redis.call('HGET', KEYS[1], 'status')
if not status then return {'missing', ''} end
if status ~= 'pending' then return {'decided', status} end
redis.call('HSET', KEYS[1], 'status', ARGV[1], 'reason', ARGV[2], 'decided_at', ARGV[3])
redis.call('ZREM', KEYS[3], ARGV[4])
local current = tonumber(redis.call('HGET', KEYS[2], 'current') or '0')
if ARGV[1] == 'rejected' then
  -- A rejected upload may be submitted again (the smoke game may have been unlucky).
  redis.call('HDEL', KEYS[4], redis.call('HGET', KEYS[1], 'sha256'))
  return {'ok', tostring(current), tostring(current)}
end
local number = tonumber(redis.call('HGET', KEYS[1], 'number'))
if number > current then
  redis.call('HSET', KEYS[2], 'current', tostring(number))
  return {'ok', tostring(current), tostring(number)}
end
return {'ok', tostring(current), tostring(current)}
"""


def submit_version(
    redis: Redis, keys: Keys, owner: str, name: str, submission: Submission,
    *, clock: Clock = default_clock,
) -> BotVersion:
    """Store ``submission`` as the next version of ``owner/name``, creating the bot if new.

    Raises :class:`PermissionDenied` if the bot belongs to someone else, and
    :class:`AlreadyExists` if the same bytes are already a pending or active version.
    """
    bot = bot_id(owner, name)
    submit = script(redis, "submit_version", _SUBMIT)
    for _ in range(_ATTEMPTS):
        count = int(redis.hget(keys.bot(bot), "versions") or 0)
        number = count + 1
        vid = version_id(bot, number)
        now = clock()
        reply = submit(
            keys=[keys.bot(bot), keys.bots, keys.user_bots(owner), keys.bot_digests(bot),
                  keys.version(vid), keys.version_source(vid), keys.pending_versions],
            args=[bot, owner, name, count, repr(now), submission.sha256, submission.data,
                  vid, submission.filename, submission.kind, submission.size],
        )
        outcome, detail = text(reply[0]), text(reply[1])
        if outcome == "ok":
            return BotVersion(vid, bot, number, submission.filename, submission.kind,
                              submission.size, submission.sha256, VersionStatus.PENDING, "",
                              now, None)
        if outcome == "owner":
            raise PermissionDenied(
                f"bot {bot!r} belongs to {detail!r}; only its owner may submit versions"
            )
        if outcome == "duplicate":
            same = version_id(bot, int(detail))
            raise DuplicateSubmission(
                f"{submission.filename} is identical to {same} (sha256 "
                f"{submission.sha256[:12]}...): change the code to submit a new version, or "
                f"enter it in a ladder with `tacocat ladder join LADDER {name}`",
                version=same)
    raise Contention(f"bot {bot!r} is receiving many submissions at once; try again")


def decide_version(
    redis: Redis, keys: Keys, vid: str, status: VersionStatus, reason: str = "",
    *, clock: Clock = default_clock,
) -> tuple[BotVersion, str | None]:
    """Activate or reject a pending version, once.

    Returns the version and, when this activation replaced the bot's playing version, the
    id of the version that retires (None otherwise). Deciding the same way twice is a no-op
    (the smoke job may run twice); deciding the other way raises :class:`FailedPrecondition`.
    """
    if status is VersionStatus.PENDING:
        raise FailedPrecondition("a version can only be decided active or rejected")
    bot, _ = split_version_id(vid)
    reply = script(redis, "decide_version", _DECIDE)(
        keys=[keys.version(vid), keys.bot(bot), keys.pending_versions, keys.bot_digests(bot)],
        args=[status.value, reason, repr(clock()), vid],
    )
    outcome = text(reply[0])
    if outcome == "missing":
        raise NotFound(f"no bot version {vid!r}")
    if outcome == "decided":
        current = text(reply[1])
        if current != status.value:
            raise FailedPrecondition(
                f"version {vid!r} is already {current}; a decision is final, submit a new "
                "version instead"
            )
        return get_version(redis, keys, vid), None
    previous, now_current = int(reply[1]), int(reply[2])
    retired = version_id(bot, previous) if previous and previous != now_current else None
    return get_version(redis, keys, vid), retired


def get_bot(redis: Redis, keys: Keys, bot: str) -> BotInfo:
    fields = text_map(redis.hgetall(keys.bot(bot)))
    if not fields:
        raise NotFound(f"no bot {bot!r}; bots are named owner/name and made by submitting")
    return _bot(fields)


def list_bots(redis: Redis, keys: Keys, owner: str | None = None) -> list[BotInfo]:
    """Every bot (or ``owner``'s), by id."""
    members = redis.smembers(keys.user_bots(owner) if owner is not None else keys.bots)
    ids = sorted(text(m) for m in members)
    pipe = redis.pipeline(transaction=False)
    for bid in ids:
        pipe.hgetall(keys.bot(bid))
    return [_bot(text_map(f)) for f in pipe.execute() if f]


def current_versions(redis: Redis, keys: Keys, bots: list[str]) -> dict[str, str | None]:
    """For each bot id, the id of its playing version (None when it has no active one)."""
    pipe = redis.pipeline(transaction=False)
    for bid in bots:
        pipe.hget(keys.bot(bid), "current")
    found: dict[str, str | None] = {}
    for bid, current in zip(bots, pipe.execute(), strict=True):
        number = int(current or 0)
        found[bid] = version_id(bid, number) if number else None
    return found


def get_version(redis: Redis, keys: Keys, vid: str) -> BotVersion:
    split_version_id(vid)
    fields = text_map(redis.hgetall(keys.version(vid)))
    if not fields:
        raise NotFound(f"no bot version {vid!r}")
    return _version(fields)


def list_versions(redis: Redis, keys: Keys, bot: str) -> list[BotVersion]:
    """All versions of ``bot``, oldest first."""
    count = int(get_bot(redis, keys, bot).versions)
    pipe = redis.pipeline(transaction=False)
    for number in range(1, count + 1):
        pipe.hgetall(keys.version(version_id(bot, number)))
    return [_version(text_map(f)) for f in pipe.execute() if f]


def version_source(redis: Redis, keys: Keys, vid: str) -> bytes:
    """The uploaded bytes of a version (a .py file or a zip, see ``BotVersion.kind``)."""
    data = redis.get(keys.version_source(vid))
    if data is None:
        raise NotFound(f"no bot version {vid!r}")
    return data if isinstance(data, bytes) else data.encode()


def store_build(redis: Redis, keys: Keys, vid: str, files: bytes | None, log: bytes) -> None:
    """Keep a version's build: its files (a tar; ``None`` for a failed build) and its log,
    both at once (no half of a build is ever stored)."""
    get_version(redis, keys, vid)  # NotFound for an unknown version
    pipe = redis.pipeline(transaction=True)
    if files is None:
        pipe.delete(keys.version_build(vid))
    else:
        pipe.set(keys.version_build(vid), files)
    pipe.set(keys.version_build_log(vid), log)
    pipe.execute()


def version_build(redis: Redis, keys: Keys, vid: str) -> tuple[bytes | None, bytes | None]:
    """A version's built files and build log, each ``None`` where there is none yet."""
    files, log = redis.mget([keys.version_build(vid), keys.version_build_log(vid)])
    return _as_bytes(files), _as_bytes(log)


def _as_bytes(value: bytes | str | None) -> bytes | None:
    return value.encode() if isinstance(value, str) else value


def pending_versions(redis: Redis, keys: Keys) -> list[BotVersion]:
    """Versions waiting for their smoke game, oldest first."""
    ids = [text(v) for v in redis.zrange(keys.pending_versions, 0, -1)]
    return [get_version(redis, keys, vid) for vid in ids]


def _bot(fields: dict[str, str]) -> BotInfo:
    return BotInfo(fields["id"], fields["owner"], fields["name"], float(fields["created_at"]),
                   int(fields.get("versions", 0)), int(fields.get("current", 0)))


def _version(fields: dict[str, str]) -> BotVersion:
    decided = fields.get("decided_at")
    return BotVersion(
        fields["id"], fields["bot"], int(fields["number"]), fields["filename"],
        fields["kind"], int(fields["size"]), fields["sha256"],
        VersionStatus(fields["status"]), fields.get("reason", ""),
        float(fields["created_at"]), float(decided) if decided else None,
    )
