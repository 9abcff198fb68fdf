"""The arena's vocabulary: the value types the arena stores and the SDK receives.

One definition of each noun for the whole project: the arena (:mod:`tacocat.arena`) builds
them from Redis, the server converts them to the arena API's protobuf messages, and the SDK
(:class:`tacocat.sdk.ArenaClient`) converts the messages back into them. Frozen
dataclasses; standard library and the engine only, so a bot author's install carries them.

Exceptions::

    ModelError   a value type refused a value (the message names the field and the value)
"""

from ._bots import BotInfo, BotVersion, Entry, TokenInfo, User, VersionStatus, version_id
from ._errors import ModelError
from ._ladders import Ladder, LadderStatus
from ._matches import (
    MAX_REPLAY_BYTES,
    SIDES,
    Match,
    MatchGameResult,
    MatchResult,
    MatchStatus,
    Side,
    compress_replays,
    other,
)
from ._standings import (
    PAIR_FIELDS,
    Crosstable,
    Leaderboard,
    PairList,
    PairStanding,
    Standing,
)
from ._trials import Trial, TrialStatus

__all__ = [
    "MAX_REPLAY_BYTES", "PAIR_FIELDS", "SIDES", "BotInfo", "BotVersion", "Crosstable",
    "Entry", "Ladder", "LadderStatus", "Leaderboard", "Match", "MatchGameResult",
    "MatchResult", "MatchStatus", "ModelError", "PairList", "PairStanding", "Side",
    "Standing", "TokenInfo", "Trial", "TrialStatus", "User", "VersionStatus",
    "compress_replays", "other", "version_id",
]
