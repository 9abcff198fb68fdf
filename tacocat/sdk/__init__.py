"""The bot SDK: everything a bot author needs.

Write a :class:`Bot`, then run it unchanged three ways:

- :func:`play_local` against a house bot (or any bot) in this process;
- :func:`connect` against the live gRPC referee (``tacocat serve``);
- ``python -m tacocat.sdk.host bot.py`` over stdin/stdout, as the arena's sandbox does.

Every game gets its own bot object (a new instance of the bot's class, or a copy of the
object handed to :func:`play_local`/:func:`connect`), because the arena plays several games
of a match at once: keep per-game memory in attributes, anything meant to outlive a game in
class attributes or module globals. Bots only ever see the engine's types
(:class:`Observation`, :class:`Round`, ...): the protocol's messages are converted at the
edge. The arena API (submit bots, ladders, leaderboards, replays) is :class:`ArenaClient`.

Exceptions::

    SdkError
     ├── BotLoadError      a bot file or spec cannot be turned into a Bot
     ├── ProtocolError     a peer broke the game protocol (bad frame, unexpected message)
     ├── RefereeError      the referee refused the match; carries the protocol's error code
     │    └── MatchEndedError   the referee ended the match: this bot timed out 3 times in a row
     ├── ConnectionLostError    the live connection to the referee failed or ended early
     └── ArenaApiError     the arena server refused a call (AuthError, NotFoundError, ...;
                           see :mod:`tacocat.sdk.arena`)

Importing the package loads only the engine's names and the :mod:`._errors` exceptions.
Every other name imports its module on first use (PEP 562 ``__getattr__``), so a bot host
(``python -m tacocat.sdk.host``) starts without grpc, the live client or the referee; ``from
tacocat.sdk import X`` works the same for every name in ``__all__``.
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
    AlreadyExistsError,
    ArenaApiError,
    AuthError,
    BotLoadError,
    ConnectionLostError,
    InvalidRequestError,
    MatchEndedError,
    NotFoundError,
    PermissionDeniedError,
    ProtocolError,
    RateLimitedError,
    RefereeError,
    SdkError,
    ServerUnavailableError,
)

# What the package imports on first use (__getattr__), by module (relative to this package,
# or absolute). The TYPE_CHECKING imports below must say the same
# (tests/sdk/test_lazy_imports.py checks).
_LAZY_MODULES: dict[str, tuple[str, ...]] = {
    "._arena_client": ("ArenaClient",),  # grpc
    "._live": ("LIVE", "connect", "connect_async"),  # grpc
    ".loader": ("load_bot", "load_bot_file"),
    "._local": ("play_local",),
    "._game_result": ("GameResult",),
    "._session": ("time_left",),
    "._tls": ("Tls",),  # grpc
    "tacocat.protocol": ("DEFAULT_ADDRESS", "DEFAULT_PORT", "DEFAULT_TIME_LIMIT"),
}
_LAZY: dict[str, str] = {name: module for module, names in _LAZY_MODULES.items()
                         for name in names}

if TYPE_CHECKING:
    from tacocat.protocol import DEFAULT_ADDRESS, DEFAULT_PORT, DEFAULT_TIME_LIMIT

    from ._arena_client import ArenaClient
    from ._game_result import GameResult
    from ._live import LIVE, connect, connect_async
    from ._local import play_local
    from ._session import time_left
    from ._tls import Tls
    from .loader import load_bot, load_bot_file
else:
    # Hidden from type checkers, which would otherwise accept any attribute of the package.
    def __getattr__(name: str) -> Any:
        module = _LAZY.get(name)
        if module is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, __name__), name)
        globals()[name] = value  # later lookups skip __getattr__
        return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "DEFAULT_ADDRESS", "DEFAULT_PORT", "DEFAULT_TIME_LIMIT", "LIVE",
    "AlreadyExistsError", "ArenaApiError", "ArenaClient", "AuthError", "Bot", "BotLoadError",
    "ConnectionLostError", "Decision", "Fault", "GameResult", "InvalidRequestError",
    "MatchEndedError", "NotFoundError", "Observation", "Outcome", "PermissionDeniedError",
    "ProtocolError",
    "RateLimitedError", "Reason", "RefereeError", "Round", "Ruleset", "SdkError",
    "ServerUnavailableError", "Tls", "Trick", "attack_kind", "best_defence", "connect",
    "connect_async", "is_full_defence", "legal_attacks", "legal_defences", "load_bot",
    "load_bot_file", "lowest_response", "play_local", "sacrifice_is_lowest", "sub_multisets",
    "time_left",
]
