"""Screenshots of the web UI for the README: ``python -m tests.web.screenshots [OUT_DIR]``.

Starts an embedded Valkey, fills a demo ladder with real in-process games, serves the web
UI and photographs it with Debian's Chromium (default OUT_DIR: docs/screenshots).
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import threading
from pathlib import Path

import redis as redis_py

from tacocat.arena import Match, decompress_replays
from tacocat.arena._valkey import EmbeddedValkey
from tacocat.engine import Reason
from tacocat.web import WebServer, replay_view

from .conftest import CHROMIUM, CHROMIUM_ARGS
from .data import Ladder, make_ladder

DEMO_BOTS = (("alice", "tacobot", "strong"), ("bob", "greedy", "greedy"),
             ("carol", "shuffler", "random"), ("dave", "lazy", "passive"),
             ("erin", "crashy", "crashing"), ("frank", "dice", "random2"))


def pick_step(ladder: Ladder) -> tuple[Match, int, int]:
    """A game of the top bot that ended at a goal, and a step (1-based) showing a jumbo
    attack in its third or later round: a busy board makes the better picture."""
    for match in reversed(ladder.recorded()):
        if not match.a.startswith("alice/") and not match.b.startswith("alice/"):
            continue
        for game, record in enumerate(ladder.arena.matches.replays(match.id)):
            if record.result.reason is not Reason.GOAL or len(record.rounds) < 4:
                continue
            for number, step in enumerate(replay_view(record)["steps"], 1):
                if (step["kind"] == "trick" and step["round"] >= 2
                        and len(step["trick"]["attack"]) >= 2):
                    return match, game, number
    match = ladder.recorded()[-1]
    return match, 0, 1


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "docs/screenshots")
    out.mkdir(parents=True, exist_ok=True)
    from playwright.sync_api import sync_playwright  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as tmp, EmbeddedValkey(Path(tmp)) as valkey:
        client = redis_py.Redis.from_url(valkey.url)
        ladder = make_ladder(client, name="main", bots=DEMO_BOTS, games_per_pairing=40,
                             games_per_match=10, leave_pending=3)
        loop = asyncio.new_event_loop()
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        server = WebServer(ladder.arena, valkey.url, port=0)
        asyncio.run_coroutine_threadsafe(server.start(), loop).result(10)
        base = server.url.rstrip("/")
        match, game, step = pick_step(ladder)
        running = ladder.arena.matches.get(ladder.pending[0])  # shown as being played
        ladder.arena.live.start(running, worker="demo")
        for record in decompress_replays(ladder.base.play(running).replays)[:3]:
            ladder.arena.live.add_game(running, record)
        try:
            with sync_playwright() as pw:
                browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
                desk = browser.new_page(viewport={"width": 1280, "height": 1240})
                desk.goto(f"{base}/ladders/main")
                desk.wait_for_selector("#live[data-state=live]")
                desk.screenshot(path=str(out / "ladder.png"),
                                clip={"x": 0, "y": 0, "width": 1280, "height": 1240})
                desk.goto(f"{base}/matches/{match.id}?game={game + 1}#step-{step}")
                desk.wait_for_selector("#viewer[data-step]")
                desk.locator("#viewer").screenshot(path=str(out / "replay.png"))
                desk.goto(f"{base}/")
                desk.screenshot(path=str(out / "home.png"))
                desk.goto(f"{base}/live/{running.id}?game=3#step-12")
                desk.wait_for_selector("#viewer[data-step]")
                desk.screenshot(path=str(out / "live.png"), full_page=True)
                desk.goto(f"{base}/bots/alice/tacobot")
                desk.screenshot(path=str(out / "bot.png"), full_page=True)
                phone = browser.new_page(viewport={"width": 390, "height": 844},
                                         device_scale_factor=2, is_mobile=True,
                                         has_touch=True)
                phone.goto(f"{base}/ladders/main")
                phone.wait_for_selector("#live[data-state=live]")
                phone.screenshot(path=str(out / "ladder-phone.png"), full_page=False)
                phone.goto(f"{base}/matches/{match.id}?game={game + 1}#step-{step}")
                phone.wait_for_selector("#viewer[data-step]")
                phone.screenshot(path=str(out / "replay-phone.png"), full_page=False)
                browser.close()
        finally:
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(5)
            client.close()
    for path in sorted(out.glob("*.png")):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
