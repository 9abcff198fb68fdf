"""The bot SDK: everything a bot author needs, and the bot-facing half of the referees.

Write a :class:`Bot`, then run it unchanged three ways:

- :func:`play_local` against a house bot in this process;
- :func:`connect` against the live gRPC referee (``tacocat serve``);
- ``python -m tacocat.sdk.host bot.py`` over stdin/stdout, as the arena's sandbox does
  (:class:`HostProcess` and :func:`play_hosted_match` are the referee's end of that).

Bots only ever see the engine's types (:class:`Observation`, :class:`Round`, ...): the
protocol's protobuf messages are converted at the edge.

Exceptions::

    SdkError
     ├── BotLoadError      a bot file or spec cannot be turned into a Bot
     ├── ProtocolError     a peer broke the game protocol (bad frame, unexpected message)
     ├── RefereeError      the referee refused the match; carries the protocol's error code
     ├── ConnectionLostError    the live connection to the referee failed or ended early
     ├── HostError         a bot host process could not be started
     └── ArenaApiError     the arena server refused a call (AuthError, NotFoundError, ...;
                           see :mod:`tacocat.sdk.arena`)

The arena API (submit bots, ladders, leaderboards, replays) is :class:`ArenaClient`.
"""

from tacocat.engine import (
    Bot,
    Decision,
    Fault,
    Observation,
    Outcome,
    Reason,
    Round,
    Ruleset,
    Trick,
    attack_kind,
    best_defence,
    is_full_defence,
    legal_attacks,
    legal_defences,
    lowest_response,
    sacrifice_is_lowest,
    sub_multisets,
)

from ._arena_client import (
    AlreadyExistsError,
    ArenaApiError,
    ArenaClient,
    AuthError,
    InvalidRequestError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitedError,
    ServerUnavailableError,
)
from ._errors import (
    BotLoadError,
    ConnectionLostError,
    HostError,
    ProtocolError,
    RefereeError,
    SdkError,
)
from ._feed import Answer, Failure, Seat, SeatFeed, referee_game, run_blocking, settle
from ._hosted import LocalSeat, ProcessSeat, play_hosted_game, play_hosted_match
from ._live import LIVE, connect, connect_async
from ._loader import load_bot, load_bot_file
from ._local import play_local
from ._process import HostProcess
from ._protocol import (
    DEFAULT_ADDRESS,
    DEFAULT_PORT,
    DEFAULT_TIME_LIMIT,
    MAX_ACTION_CARDS,
    MAX_CLIENT_MESSAGE,
    MAX_SERVER_MESSAGE,
    PLAY_METHOD,
    REFEREE_SERVICE,
    FrameBuffer,
    frame,
    read_frame,
)
from ._session import BotSession, GameResult, time_left
from ._tls import Tls

__all__ = [
    "DEFAULT_ADDRESS", "DEFAULT_PORT", "DEFAULT_TIME_LIMIT", "LIVE", "MAX_ACTION_CARDS",
    "MAX_CLIENT_MESSAGE", "MAX_SERVER_MESSAGE", "PLAY_METHOD", "REFEREE_SERVICE",
    "AlreadyExistsError", "Answer", "ArenaApiError", "ArenaClient", "AuthError", "Bot",
    "BotLoadError", "BotSession", "ConnectionLostError", "Decision", "Failure", "Fault",
    "FrameBuffer", "GameResult", "HostError", "HostProcess", "InvalidRequestError",
    "LocalSeat", "NotFoundError", "Observation", "Outcome", "PermissionDeniedError",
    "ProcessSeat", "ProtocolError", "RateLimitedError", "Reason", "RefereeError", "Round",
    "Ruleset", "SdkError", "Seat", "SeatFeed", "ServerUnavailableError", "Tls", "Trick",
    "attack_kind", "best_defence", "connect", "connect_async", "frame", "is_full_defence",
    "legal_attacks", "legal_defences", "load_bot", "load_bot_file", "lowest_response",
    "play_hosted_game", "play_hosted_match", "play_local", "read_frame", "referee_game",
    "run_blocking", "sacrifice_is_lowest", "settle", "sub_multisets", "time_left",
]
