"""The referee's settings, every gRPC limit among them set explicitly."""

from __future__ import annotations

from dataclasses import dataclass, fields

from tacocat.arena.ratelimit import RateLimit
from tacocat.engine import STANDARD, Ruleset
from tacocat.protocol import (
    DEFAULT_PORT,
    DEFAULT_TIME_LIMIT,
    MAX_CLIENT_MESSAGE,
    MAX_SERVER_MESSAGE,
)
from tacocat.referee import BANK_LIMITS_PER_GAME

from ._errors import ConfigError
from ._tls import ServerTls


@dataclass(frozen=True, slots=True)
class RefereeConfig:
    """How the referee plays and what it tolerates. Times are in seconds."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    """0 picks a free port (see :attr:`RefereeServer.port`)."""
    time_limit: float = DEFAULT_TIME_LIMIT
    """Per decision, from the moment the request is sent."""
    rules: Ruleset = STANDARD
    max_games: int = 1000
    """Most games one PlayRequest may ask for."""
    hello_timeout: float = 10.0
    """A new stream must send its PlayRequest within this."""
    queue_timeout: float = 300.0
    """How long a client may wait for a live opponent."""
    max_timeouts: int = 3
    """A live client that times out this many decisions in a row has left: its match ends."""
    bank_limits_per_game: float = BANK_LIMITS_PER_GAME
    """Each side's time bank for a match, in decision limits per game (one game's worth more
    to spare): a client whose thinking time over the match passes it gives up on timeout."""
    max_concurrent_rpcs: int = 4096
    """Streams at once over all connections; more are refused with RESOURCE_EXHAUSTED."""
    max_concurrent_streams: int = 256
    """Streams at once on one HTTP/2 connection."""
    keepalive_time: float = 30.0
    """The referee pings an idle connection this often ..."""
    keepalive_timeout: float = 10.0
    """... and drops it when the ping is not answered within this."""
    min_client_ping_interval: float = 10.0
    """Clients pinging more often than this are sent GOAWAY."""
    max_connection_idle: float = 300.0
    """A connection with no stream for this long is closed."""
    max_connection_age: float = 4 * 3600.0
    """Connections are recycled after this (a long match finishes first, within the grace)."""
    max_connection_age_grace: float = 3600.0
    """... but a stream still open this long after the recycling is cut."""
    max_metadata_bytes: int = 8 * 1024
    """Largest request metadata (headers: the token, gRPC's own) accepted; past it the call
    fails with RESOURCE_EXHAUSTED before any handler runs."""
    record_log_size: int = 10_000
    """Finished games kept in memory (:attr:`RefereeServer.records`)."""
    live_game_burst: int = 2000
    live_games_per_second: float | None = 20.0
    """Live games per player (the token's user, or for anonymous clients the IP address,
    IPv6 by /64): at most ``live_game_burst`` at once, refilled at this rate; a match takes
    as many as it asks for. ``None``: no limit. Refusals are RESOURCE_EXHAUSTED."""
    max_matches_per_player: int = 64
    """Matches one player (as above) may have running or waiting at once."""
    tls: ServerTls | None = None
    """Serve TLS (and with a client CA, require client certificates); None: plaintext."""

    def __post_init__(self) -> None:
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"port {self.port} is not 0..65535")
        if not 0.001 <= self.time_limit <= 3600:
            raise ConfigError(f"time_limit {self.time_limit} s is not within 0.001..3600 s")
        if not 1 <= self.max_games <= 1_000_000:
            raise ConfigError(f"max_games {self.max_games} is not 1..1000000")
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, int | float) and f.name != "port" and value <= 0:
                raise ConfigError(f"{f.name} must be positive, got {value}")
        if self.live_games_per_second is not None and self.live_game_burst < self.max_games:
            raise ConfigError(
                f"live_game_burst ({self.live_game_burst}) must be at least max_games "
                f"({self.max_games}): a match of max_games could never start")
        if self.max_metadata_bytes < 1024:
            raise ConfigError(f"max_metadata_bytes {self.max_metadata_bytes} is under 1024: "
                              "gRPC's own headers would not fit")

    @property
    def live_game_limit(self) -> RateLimit | None:
        """The live-game rate limit as a token bucket (None when off)."""
        if self.live_games_per_second is None:
            return None
        return RateLimit(self.live_game_burst, self.live_games_per_second)

    @property
    def address(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{host}:{self.port}"

    def grpc_options(self) -> list[tuple[str, int]]:
        ms = _ms
        return [
            ("grpc.max_receive_message_length", MAX_CLIENT_MESSAGE),
            ("grpc.max_send_message_length", MAX_SERVER_MESSAGE),
            ("grpc.max_concurrent_streams", self.max_concurrent_streams),
            ("grpc.keepalive_time_ms", ms(self.keepalive_time)),
            ("grpc.keepalive_timeout_ms", ms(self.keepalive_timeout)),
            ("grpc.keepalive_permit_without_calls", 0),
            ("grpc.http2.min_ping_interval_without_data_ms", ms(self.min_client_ping_interval)),
            ("grpc.http2.max_ping_strikes", 2),
            ("grpc.max_connection_idle_ms", ms(self.max_connection_idle)),
            ("grpc.max_connection_age_ms", ms(self.max_connection_age)),
            ("grpc.max_connection_age_grace_ms", ms(self.max_connection_age_grace)),
            # Soft and hard limits alike: every request over it is refused, not some.
            ("grpc.max_metadata_size", self.max_metadata_bytes),
            ("grpc.absolute_max_metadata_size", self.max_metadata_bytes),
            # Two referees must never share a port by accident.
            ("grpc.so_reuseport", 0),
        ]


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))
