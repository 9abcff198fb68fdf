"""The referee's gRPC server: ``Referee`` plus standard health checking and reflection."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Protocol

import grpc
import grpc.aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from tacocat.protocol import REFEREE_SERVICE

from ._auth import Authenticator
from ._config import RefereeConfig
from ._errors import ConfigError, StartError
from ._limits import GameLimiter
from ._records import RecordLog, RecordSink
from ._referee import RefereeService
from .metrics import ServerMetrics, server_metrics

log = logging.getLogger("tacocat.server")


class HostedService(Protocol):
    """Another gRPC service served on the referee's port (the arena API)."""

    name: str
    """The full service name (``tacocat.v1.Arena``), for health checking and reflection."""
    max_request_bytes: int
    """The largest request message it must accept (the server-wide limit becomes the
    largest of all services')."""
    max_response_bytes: int

    def register(self, server: grpc.aio.Server) -> None: ...

    async def close(self) -> None:
        """Called on stop, before the server closes: end long-lived streams."""


class RefereeServer:
    """The live referee. ``async with RefereeServer(config) as server: ...``, or
    :meth:`start` / :meth:`stop`.

    Every finished game goes to :attr:`records` (the last ``config.record_log_size``) and to
    each of ``sinks``. ``authenticator`` maps the tokens of live players to their names;
    without one, only anonymous play against house bots is possible. ``limiter`` keeps the
    live-game rate limits (default: in this process's memory; with an arena,
    :class:`~tacocat.server.ArenaLimiter` shares them through Redis). ``metrics`` receives
    the live-game gauge and each live decision's time (default: the process-wide
    :func:`~tacocat.server.metrics.server_metrics` on prometheus-client's default registry).

    Every transport limit is explicit (:meth:`RefereeConfig.grpc_options`), and the port
    speaks TLS when ``config.tls`` is set (docs/SECURITY.md).
    """

    def __init__(self, config: RefereeConfig | None = None, *,
                 authenticator: Authenticator | None = None,
                 sinks: Sequence[RecordSink] = (),
                 services: Sequence[HostedService] = (),
                 limiter: GameLimiter | None = None,
                 metrics: ServerMetrics | None = None) -> None:
        self.config = config or RefereeConfig()
        self.services = list(services)
        """Served next to the referee on the same port (``services=[ArenaService(...)]``)."""
        self.records = RecordLog(self.config.record_log_size)
        metrics = metrics if metrics is not None else server_metrics()
        self.service = RefereeService(self.config, authenticator, [self.records, *sinks],
                                      limiter, metrics=metrics)
        metrics.track_live_games(self.service)
        self.port = 0
        """The port listened on (the real one when ``config.port`` is 0)."""
        self._server: grpc.aio.Server | None = None
        self._health = health.aio.HealthServicer()

    @property
    def address(self) -> str:
        host = self.config.host
        return f"[{host}]:{self.port}" if ":" in host else f"{host}:{self.port}"

    async def start(self) -> int:
        """Listen and serve; returns the port."""
        config = self.config
        server = grpc.aio.server(options=self._grpc_options(),
                                 maximum_concurrent_rpcs=config.max_concurrent_rpcs)
        server.add_generic_rpc_handlers((self.service.handler(),))
        for hosted in self.services:
            hosted.register(server)
        health_pb2_grpc.add_HealthServicer_to_server(self._health, server)
        reflection.enable_server_reflection(
            (REFEREE_SERVICE, *(h.name for h in self.services), health.SERVICE_NAME,
             reflection.SERVICE_NAME), server)
        try:
            if config.tls is None:
                port = server.add_insecure_port(config.address)
            else:
                port = server.add_secure_port(config.address, config.tls.credentials())
        except ConfigError as exc:
            raise StartError(f"cannot serve TLS: {exc}") from exc
        except RuntimeError as exc:
            raise StartError(f"cannot listen on {config.address}: {exc}") from exc
        if port == 0:
            raise StartError(f"cannot listen on {config.address} (in use?)")
        await server.start()
        self._server, self.port = server, port
        serving = health_pb2.HealthCheckResponse.SERVING
        await self._health.set("", serving)
        await self._health.set(REFEREE_SERVICE, serving)
        for hosted in self.services:
            await self._health.set(hosted.name, serving)
        log.info("referee listening on %s (%s, %g s per decision)", self.address,
                 config.tls.describe() if config.tls else "plaintext", config.time_limit)
        return port

    async def stop(self, grace: float = 5.0) -> None:
        """Report NOT_SERVING, let running matches finish for ``grace`` seconds, abort the
        rest (recorded as aborted), then close."""
        if self._server is None:
            return
        await self._health.enter_graceful_shutdown()
        for hosted in self.services:
            await hosted.close()
        await self.service.shutdown(grace)
        await self._server.stop(1.0)
        self._server = None

    def _grpc_options(self) -> list[tuple[str, int]]:
        """The config's options, with the message limits raised to what hosted services
        need (the referee's own messages stay small: its protocol bounds them)."""
        raise_to = {
            "grpc.max_receive_message_length": max(
                (h.max_request_bytes for h in self.services), default=0),
            "grpc.max_send_message_length": max(
                (h.max_response_bytes for h in self.services), default=0),
        }
        return [(key, max(value, raise_to.get(key, 0)))
                for key, value in self.config.grpc_options()]

    async def wait_for_termination(self) -> None:
        if self._server is not None:
            await self._server.wait_for_termination()

    async def __aenter__(self) -> RefereeServer:
        await self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop(grace=0.0)


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""Ctrl-C, a service manager's stop, a closed terminal: each stops the server cleanly."""


async def serve(server: RefereeServer, *, grace: float = 5.0,
                ready: Callable[[RefereeServer], None] | None = None) -> None:
    """Run ``server`` until SIGINT, SIGTERM or SIGHUP, then stop it gracefully."""
    await server.start()
    if ready is not None:
        ready(server)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in _STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        for sig in _STOP_SIGNALS:
            loop.remove_signal_handler(sig)
        await server.stop(grace)
