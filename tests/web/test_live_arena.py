"""Watching a ladder while it plays, end to end: ``tacocat serve`` and a sandboxed
``tacocat worker`` as processes, two slow bots submitted through the arena API, and
Debian's Chromium on the ladder page: the badge goes live, the "live now" panel lists the
running match, and its live viewer shows each game as the worker finishes it."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tacocat.sdk.arena import ArenaClient

from ..cli.helpers import ArenaProcesses

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Most of a second per game: slow enough to watch a match being played.
SLOW_BOT = b'''\
import time

from tacocat.engine.bots import GreedyBot


class Slow(GreedyBot):
    """%s"""

    def duel(self, obs):
        time.sleep(0.08)
        return super().duel(obs)
'''


def test_watch_a_match_while_the_worker_plays_it(running: ArenaProcesses, page: Any,
                                                 tmp_path: Path) -> None:
    admin_token = (tmp_path / ".tacocat" / "data" / "admin.token").read_text().strip()
    with ArenaClient(running.address, admin_token) as admin:
        admin.create_ladder("watched", games_per_pairing=8, games_per_match=8)
        for owner in ("alice", "bob"):
            admin.create_user(owner)
            token = admin.create_token(owner).token
            with ArenaClient(running.address, token) as client:
                client.submit_bytes("slow.py", SLOW_BOT % owner.encode(), "slow", "watched")
    page.goto(f"{running.web}/ladders/watched")
    page.wait_for_selector("#live[data-state=live]")
    link = page.wait_for_selector("#livenow li[data-match] a", timeout=60_000)
    assert link is not None
    page.screenshot(path=str(tmp_path / "ladder-live.png"))
    link.click()
    page.wait_for_url(re.compile(r"/live/"))
    page.wait_for_selector("#live-match[data-state=live]")
    # The first finished game appears; then the viewer follows to later ones (or, on a
    # slow machine, the match ends first and the page turns into the match page).
    page.wait_for_selector("#viewer[data-step]", timeout=30_000)
    first = page.inner_text("#viewer-title")
    assert re.fullmatch(r"Replay of game \d", first), first
    assert "alice/slow@1" in page.inner_text("#players")
    page.screenshot(path=str(tmp_path / "live-viewer.png"), full_page=True)
    page.wait_for_function(
        """(t) => location.pathname.startsWith('/matches/') ||
                  document.getElementById('viewer-title')?.textContent !== t""",
        arg=first, timeout=30_000)
    # When the worker records the match, the viewer turns into the match page.
    page.wait_for_url(re.compile(r"/matches/"), timeout=60_000)
    assert page.locator("table.games tbody tr").count() == 8
