"""Fixtures for the web UI tests: a real Redis (``tests/conftest.py``), a populated ladder, the
web app on a real port in a background thread, and Debian's Chromium driven by Playwright.

The browser is ``/usr/bin/chromium`` (the ``chromium`` Debian package), never a browser that
Playwright downloads. A missing one fails the browser tests with a message saying what to
install; they never skip.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis as redis_py

from tacocat.web import WebServer, WebSettings
from tacocat.web._app import HUB

from ..cli.helpers import ArenaProcesses
from .data import Ladder, make_ladder

CHROMIUM = Path(os.environ.get("TACOCAT_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


@pytest.fixture
def running(tmp_path: Path) -> Iterator[ArenaProcesses]:
    """``tacocat serve`` and a sandboxed ``tacocat worker`` as processes, in ``tmp_path``."""
    arena = ArenaProcesses(tmp_path)
    try:
        arena.start()
        yield arena
    finally:
        arena.stop()


@pytest.fixture
def ladder(redis: redis_py.Redis) -> Ladder:
    """Ladder ``main``: four bots (one crashes, so there are forfeits), every match played."""
    return make_ladder(redis)


class ServerThread:
    """The web UI on 127.0.0.1:<free port>, served by an event loop in a thread."""

    def __init__(self, server: WebServer) -> None:
        self.server = server
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="web-ui",
                                        daemon=True)

    def __enter__(self) -> ServerThread:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self.server.start(), self.loop).result(10)
        hub = self.server.app[HUB]
        asyncio.run_coroutine_threadsafe(asyncio.wait_for(hub.connected.wait(), 10),
                                         self.loop).result(15)
        return self

    @property
    def url(self) -> str:
        return self.server.url.rstrip("/")

    def call(self, coro: Any, timeout: float = 10) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def __exit__(self, *exc: object) -> None:
        try:
            self.call(self.server.stop(), 15)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(10)
            self.loop.close()


@pytest.fixture
def live_server(ladder: Ladder, redis_url: str) -> Iterator[ServerThread]:
    server = WebServer(ladder.arena, redis_url, port=0,
                       settings=WebSettings(ping_seconds=2.0, min_interval=0.05))
    with ServerThread(server) as running:
        yield running


# One browser per module, not per session: while Playwright's sync API is open, its event
# loop counts as running in this thread, so a later module in the same process (the suite is
# spread over processes, each running many modules) could not asyncio.run() or dial gRPC.
@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(
            f"{CHROMIUM} is missing: the browser tests need Debian's Chromium. Install it "
            "with `apt-get install -y chromium` (./dev setup does), or point "
            "TACOCAT_CHROMIUM at a Chromium binary. Never `playwright install`.",
            pytrace=False)
    try:
        from playwright.sync_api import sync_playwright  # noqa: PLC0415
    except ImportError:
        pytest.fail("the browser tests need Playwright's Python package: pip install "
                    "-e '.[dev]' (it is in the dev extra)", pytrace=False)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def page_errors() -> list[str]:
    """Script errors and dialogs (``alert``) of the ``page`` fixture's tab."""
    return []


@pytest.fixture
def page(browser: Any, page_errors: list[str]) -> Iterator[Any]:
    """A desktop-sized tab; any script error or dialog in it fails the test."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    tab = context.new_page()
    def on_dialog(dialog: Any) -> None:
        page_errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    tab.on("pageerror", lambda exc: page_errors.append(str(exc)))
    tab.on("dialog", on_dialog)
    try:
        yield tab
    finally:
        context.close()
    assert not page_errors, f"the page raised or opened dialogs: {page_errors}"
