"""The live gRPC referee (``tacocat serve``): bots connect with ``tacocat.sdk.connect``.

With an arena (Redis), the same port serves ``tacocat.v1.Arena`` (``proto/tacocat/v1/
arena.proto``, :class:`ArenaService`): users and tokens, submissions, ladders, leaderboards.

A client streams ``Referee.Play`` (``proto/tacocat/v1/game.proto``) to play a match against
a house bot or, with a token, against another live client. The match is played by the one
match loop (:mod:`tacocat.referee`, the client on a ``LiveSeat``), which gives each decision a
time limit and turns every timeout, illegal action, malformed message and disconnect into a
forfeit of that game alone.
Health checking and reflection are on; every finished game's replay record goes to the
record sinks.

Exceptions::

    ServerError
     ├── ConfigError     a referee setting is out of range (port, time limit, limits)
     └── StartError      the referee cannot start (the port is taken, the host unknown,
                         a TLS file unusable)

Security (docs/SECURITY.md): TLS and mutual TLS (:class:`ServerTls`), explicit transport
limits (:meth:`RefereeConfig.grpc_options`), per-player live-game limits
(:class:`MemoryLimiter`, :class:`ArenaLimiter`).
"""

from ._arena_auth import (
    AdminToken,
    ArenaAuthenticator,
    FirstOf,
    bootstrap_admin_token,
    read_token_file,
    write_token_file,
)
from ._arena_service import ArenaService
from ._auth import Authenticator, TokenTable, token_from_metadata
from ._config import RefereeConfig
from ._errors import ConfigError, ServerError, StartError
from ._limits import ArenaLimiter, GameLimiter, MemoryLimiter
from ._records import FinishedGame, JsonlRecordFile, RecordLog, RecordSink
from ._referee import RefereeService
from ._server import HostedService, RefereeServer, serve
from ._tls import ServerTls

__all__ = [
    "AdminToken", "ArenaAuthenticator", "ArenaLimiter", "ArenaService", "Authenticator",
    "ConfigError", "FinishedGame", "FirstOf", "GameLimiter", "HostedService",
    "JsonlRecordFile", "MemoryLimiter", "RecordLog", "RecordSink", "RefereeConfig",
    "RefereeServer", "RefereeService", "ServerError", "ServerTls", "StartError",
    "TokenTable", "bootstrap_admin_token", "read_token_file", "serve", "token_from_metadata",
    "write_token_file",
]
