"""An arena gRPC server (Referee + Arena on one port) running in a background thread, for
tests that talk to it over loopback with the synchronous :class:`ArenaClient`."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from tacocat.arena import Arena
from tacocat.server import (
    ArenaAuthenticator,
    ArenaLimiter,
    ArenaService,
    RefereeConfig,
    RefereeServer,
)

_T = TypeVar("_T")


@dataclass
class ServerThread:
    loop: asyncio.AbstractEventLoop
    server: RefereeServer
    service: ArenaService

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    def call(self, coro: Coroutine[Any, Any, _T], timeout: float = 10.0) -> _T:
        """Run ``coro`` on the server's loop and wait for it."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self, grace: float = 0.0) -> None:
        self.call(self.server.stop(grace))


@contextlib.contextmanager
def serve_in_thread(arena: Arena, config: RefereeConfig | None = None,
                    **service_options: Any) -> Iterator[ServerThread]:
    """Start the server on a free loopback port; stop it (no grace) on exit. ``config``
    (its port is ignored) sets TLS and limits; live-game limits live in the arena's Redis."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True, name="test-server")
    thread.start()

    async def start() -> tuple[RefereeServer, ArenaService]:
        service = ArenaService(arena, **service_options)
        settings = dataclasses.replace(config or RefereeConfig(), port=0)
        server = RefereeServer(settings, authenticator=ArenaAuthenticator(arena),
                               services=[service], limiter=ArenaLimiter(arena))
        await server.start()
        return server, service

    try:
        server, service = asyncio.run_coroutine_threadsafe(start(), loop).result(10)
        running = ServerThread(loop, server, service)
        try:
            yield running
        finally:
            running.stop()
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
        loop.close()
