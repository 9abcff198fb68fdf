"""The competition: users, bots and versions, ladders, scheduling, results, ratings, standings.

Everything lives in Redis (the connection is always passed in; keys are namespaced, see
:mod:`tacocat.arena.keys` and docs/ARENA.md). Most callers need only :class:`Arena`::

    arena = Arena(redis.Redis.from_url(url))
    token = arena.users.bootstrap_admin()      # plaintext once, on first start
    admin = arena.users.authenticate(token)
    arena.ladders.create(admin, "main", games_per_pairing=200, games_per_match=20)
    version = arena.bots.submit(admin, "tacobot", "bot.py", source)   # pending
    arena.bots.activate(version.id)            # the worker, after the smoke game
    arena.ladders.join(admin, "tacobot", "main")
    arena.matches.schedule("main", enqueue)    # enqueue(match_id): the worker's RQ enqueue
    arena.matches.record(match_id, result)     # exactly once; refits the standings
    arena.ladders.leaderboard("main")

The value types it stores and returns (``BotInfo``, ``Ladder``, ``Match``, ``MatchResult``,
``Leaderboard``, ...) are :mod:`tacocat.models`'s, shared with the SDK; they are re-exported
here for the arena's callers.

The areas (``arena.users``, ``arena.bots``, ``arena.ladders``, ``arena.matches``,
``arena.live``) are :mod:`~.user_area`, :mod:`~.bot_area`, :mod:`~.ladder_area`,
:mod:`~.match_area`, :mod:`~.live_area`; the stores they call check no permissions.
Modules: :mod:`~.ids` (names and ids), :mod:`~.submissions` (upload checks),
:mod:`~.users`, :mod:`~.bots`, :mod:`~.ladders`, :mod:`~.matches`, :mod:`~.scheduler`,
:mod:`~.recording` (the exactly-once script), :mod:`~.standings`, :mod:`~.ratings`,
:mod:`~.results`, :mod:`~.dispatch`, :mod:`~.ratelimit`, :mod:`~.errors`. The Redis a command
runs on: :class:`EmbeddedValkey` (a private server) or :func:`redis_url_or_embedded`.
"""

from tacocat.models import (
    BotInfo,
    BotVersion,
    Entry,
    Ladder,
    LadderStatus,
    Leaderboard,
    Match,
    MatchGameResult,
    MatchResult,
    MatchStatus,
    PairStanding,
    Standing,
    TokenInfo,
    User,
    VersionStatus,
    compress_replays,
)

from ._redis import as_unavailable
from ._valkey import EmbeddedValkey, check_redis_url, redact_url, redis_url_or_embedded
from .arena import Arena
from .bot_area import BotArea
from .errors import (
    AlreadyExists,
    ArenaError,
    Contention,
    DuplicateSubmission,
    EmbeddedServerError,
    FailedPrecondition,
    InvalidArgument,
    NotFound,
    PermissionDenied,
    RateLimited,
    RatingError,
    RedisUnavailable,
    SubmissionRejected,
    Unauthenticated,
)
from .keys import DEFAULT_PREFIX, Keys
from .ladder_area import LadderArea
from .live_area import LiveArea
from .logs import MatchLog
from .match_area import MatchArea, TickReport
from .matches import MatchPage
from .order import Order
from .ratelimit import DEFAULT_RATE_LIMITS, NO_LIMITS, RateLimit, RateLimits
from .recording import EloReplay, LogEntry, Recorded
from .results import decompress_replays
from .scheduler import Scheduling
from .submissions import Submission, SubmissionLimits, unpack, validate_submission
from .user_area import UserArea

__all__ = [
    "DEFAULT_PREFIX",
    "DEFAULT_RATE_LIMITS",
    "NO_LIMITS",
    "AlreadyExists",
    "Arena",
    "ArenaError",
    "BotArea",
    "BotInfo",
    "BotVersion",
    "Contention",
    "DuplicateSubmission",
    "EloReplay",
    "EmbeddedServerError",
    "EmbeddedValkey",
    "Entry",
    "FailedPrecondition",
    "InvalidArgument",
    "Keys",
    "Ladder",
    "LadderArea",
    "LadderStatus",
    "Leaderboard",
    "LiveArea",
    "LogEntry",
    "Match",
    "MatchArea",
    "MatchGameResult",
    "MatchLog",
    "MatchPage",
    "MatchResult",
    "MatchStatus",
    "NotFound",
    "Order",
    "PairStanding",
    "PermissionDenied",
    "RateLimit",
    "RateLimited",
    "RateLimits",
    "RatingError",
    "Recorded",
    "RedisUnavailable",
    "Scheduling",
    "Standing",
    "Submission",
    "SubmissionLimits",
    "SubmissionRejected",
    "TickReport",
    "TokenInfo",
    "Unauthenticated",
    "User",
    "UserArea",
    "VersionStatus",
    "as_unavailable",
    "check_redis_url",
    "compress_replays",
    "decompress_replays",
    "redact_url",
    "redis_url_or_embedded",
    "unpack",
    "validate_submission",
]
