"""``/metrics`` on the web UI: the arena's Redis-derived metrics and this process's own.

See :mod:`tacocat.server.metrics` for what is exported and why the counters come from Redis.
"""

from __future__ import annotations

import asyncio

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, CollectorRegistry, generate_latest

from tacocat.arena import Arena
from tacocat.server.metrics import ArenaCollector, server_metrics

REGISTRIES: web.AppKey[tuple[CollectorRegistry, ...]] = web.AppKey("metrics", tuple)


def add_metrics_route(app: web.Application, arena: Arena,
                      process: CollectorRegistry | None = None) -> None:
    """Serve ``GET /metrics``: a registry of this app's :class:`ArenaCollector` followed by
    ``process`` (default: the process-wide registry with :func:`server_metrics`)."""
    metrics = server_metrics()
    own = CollectorRegistry(auto_describe=False)
    own.register(ArenaCollector(arena.redis, prefix=arena.keys.prefix,
                                on_error=metrics.scrape_errors.inc))
    app[REGISTRIES] = (own, process if process is not None else REGISTRY)
    app.router.add_get("/metrics", metrics_page)


def _exposition(registries: tuple[CollectorRegistry, ...]) -> bytes:
    return b"".join(generate_latest(r) for r in registries)


async def metrics_page(request: web.Request) -> web.Response:
    body = await asyncio.to_thread(_exposition, request.app[REGISTRIES])
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE_LATEST})
