"""The arena API from Python: :class:`ArenaClient`, what it returns, and what it raises.

What it returns are the arena's own value types (:mod:`tacocat.models`: ``Ladder``,
``Leaderboard``, ``Match``, ...), decoded from the API's messages, and a few of the client's
(``ServerInfo``, ``NewToken``, ``Submitted``, ``LeaderboardUpdate``, ``MatchList``).

``from tacocat.sdk.arena import ArenaClient, Leaderboard, NotFoundError`` (``ArenaClient``
and the errors are also in :mod:`tacocat.sdk`). See :mod:`tacocat.sdk._arena_client` for
where the token comes from.

Exceptions::

    SdkError
     └── ArenaApiError            the server refused a call; ``status`` is the gRPC code name
          ├── AuthError               no token, or an unknown/revoked/malformed one
          ├── PermissionDeniedError   not an admin, not the bot's owner
          ├── NotFoundError           no such user, bot, version, ladder or match
          ├── AlreadyExistsError      name taken, already joined, same file submitted before
          ├── InvalidRequestError     a malformed name, setting or upload
          ├── RateLimitedError        too many submissions too fast; says when to retry
          └── ServerUnavailableError  unreachable, timed out, shutting down, Redis down
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
    Trial,
    TrialStatus,
    VersionStatus,
)
from tacocat.protocol.arena import ARENA_SERVICE, MAX_SUBMISSION_BYTES

from ._arena_client import (
    ADMIN_TOKEN_FILE,
    DEFAULT_DATA_DIR,
    SAVED_ADMIN_TOKEN,
    SERVER_ENV,
    TOKEN_ENV,
    TOKEN_FILE_ENV,
    ArenaClient,
    bot_name_for,
    find_token,
    is_local_address,
    parse_replays,
)
from ._arena_types import (
    LeaderboardUpdate,
    MatchList,
    NewToken,
    ServerInfo,
    Submitted,
    UserInfo,
)
from ._errors import (
    AlreadyExistsError,
    ArenaApiError,
    AuthError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    ServerUnavailableError,
)
from ._logs_types import BotLog, MatchLogs

__all__ = [
    "ADMIN_TOKEN_FILE", "ARENA_SERVICE", "DEFAULT_DATA_DIR", "MAX_SUBMISSION_BYTES",
    "SAVED_ADMIN_TOKEN", "SERVER_ENV", "TOKEN_ENV", "TOKEN_FILE_ENV", "AlreadyExistsError",
    "ArenaApiError",
    "ArenaClient", "AuthError", "BotInfo", "BotLog", "BotVersion", "Entry",
    "InvalidRequestError", "Ladder", "LadderStatus", "Leaderboard", "LeaderboardUpdate",
    "Match", "MatchGameResult", "MatchList", "MatchLogs", "MatchResult", "MatchStatus", "NewToken",
    "NotFoundError", "PairStanding", "PermissionDeniedError", "RateLimitedError", "ServerInfo",
    "ServerUnavailableError", "Standing", "Submitted", "TokenInfo", "Trial", "TrialStatus",
    "UserInfo", "VersionStatus", "bot_name_for", "find_token", "is_local_address",
    "parse_replays",
]
