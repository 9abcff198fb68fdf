"""Running the web UI: :class:`WebServer` on an aiohttp runner, inside an existing loop.

``tacocat serve`` starts it next to the gRPC server in the same event loop::

    web = WebServer(arena, redis_url, host="127.0.0.1", port=8080)
    await web.start()          # returns the port (the real one for port 0)
    print(web.url)
    ...
    await web.stop()           # ends the live streams, then closes
"""

from __future__ import annotations

from types import TracebackType

from aiohttp import web

from tacocat.arena import Arena

from ._app import WebSettings, create_app
from ._errors import WebStartError


class WebServer:
    """The web UI on ``host:port`` (port 0 picks a free one)."""

    def __init__(self, arena: Arena, redis_url: str, *, host: str = "127.0.0.1",
                 port: int = 8080, settings: WebSettings | None = None) -> None:
        self.app = create_app(arena, redis_url, settings)
        self.host = host
        self.port = port
        self._runner: web.AppRunner | None = None

    @property
    def url(self) -> str:
        """The base URL, ``http://HOST:PORT/`` (an all-interfaces host shows as 127.0.0.1)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "[::1]", "": "127.0.0.1"}.get(self.host,
                                                                            self.host)
        if ":" in host and not host.startswith("["):
            host = f"[{host}]"
        return f"http://{host}:{self.port}/"

    async def start(self) -> int:
        runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=2.0)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self.port)
        try:
            await site.start()
        except OSError as exc:
            await runner.cleanup()
            raise WebStartError(f"web UI cannot listen on {self.host}:{self.port}: "
                             f"{exc.strerror or exc}") from exc
        self._runner = runner
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                self.port = int(address[1])
                break
        return self.port

    async def stop(self) -> None:
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()

    async def __aenter__(self) -> WebServer:
        await self.start()
        return self

    async def __aexit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()
