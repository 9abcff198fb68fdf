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

Importing the package loads only the engine's names and the :mod:`._errors` exceptions
(the :class:`ArenaApiError` family lives with :class:`ArenaClient`). Every other name
imports its module on first use (PEP 562 ``__getattr__``), so a bot host
(``python -m tacocat.sdk.host``) starts without grpc, the live client or the referee's
side; ``from tacocat.sdk import X`` works the same for every name in ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

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

from ._errors import (
    BotLoadError,
    ConnectionLostError,
    HostError,
    ProtocolError,
    RefereeError,
    SdkError,
)

# What the package imports on first use (__getattr__), by module. The TYPE_CHECKING imports
# below must say the same (tests/sdk/test_lazy_imports.py checks).
_LAZY_MODULES: dict[str, tuple[str, ...]] = {
    "_arena_client": (  # grpc
        "AlreadyExistsError", "ArenaApiError", "ArenaClient", "AuthError",
        "InvalidRequestError", "NotFoundError", "PermissionDeniedError", "RateLimitedError",
        "ServerUnavailableError",
    ),
    "_feed": ("Answer", "Failure", "Seat", "SeatFeed", "referee_game", "run_blocking",
              "settle"),
    "_hosted": ("LocalSeat", "ProcessSeat", "play_hosted_game", "play_hosted_match"),
    "_live": ("LIVE", "connect", "connect_async"),  # grpc
    "_loader": ("load_bot", "load_bot_file"),
    "_local": ("play_local",),
    "_process": ("HostProcess",),
    "_protocol": (
        "DEFAULT_ADDRESS", "DEFAULT_PORT", "DEFAULT_TIME_LIMIT", "MAX_ACTION_CARDS",
        "MAX_CLIENT_MESSAGE", "MAX_SERVER_MESSAGE", "PLAY_METHOD", "REFEREE_SERVICE",
        "FrameBuffer", "frame", "read_frame",
    ),
    "_session": ("BotSession", "GameResult", "time_left"),
    "_tls": ("Tls",),  # grpc
}
_LAZY: dict[str, str] = {name: module for module, names in _LAZY_MODULES.items()
                         for name in names}

if TYPE_CHECKING:
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
else:
    # Hidden from type checkers, which would otherwise accept any attribute of the package.
    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


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
