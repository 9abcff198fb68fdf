"""Bot pages, user pages, the "live now" panel and the live viewer, in Debian's Chromium
against the app on a real port and a real Redis, with games played by the engine.

Each page is also photographed (into pytest's tmp dir; ``TACOCAT_SCREENSHOTS=DIR`` keeps
them) and the picture checked for being a page, not a blank: what was looked at while
building these pages stays looked at.
"""

from __future__ import annotations

import base64
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tacocat.arena import decompress_replays
from tacocat.web import WebServer, WebSettings

from .conftest import ServerThread
from .data import Ladder, make_ladder

pytestmark = pytest.mark.browser


def shoot(page: Any, tmp_path: Path, name: str) -> Path:
    """A full-page screenshot; fails if it is (nearly) one colour."""
    folder = Path(os.environ.get("TACOCAT_SCREENSHOTS", "") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    assert path.stat().st_size > 10_000, f"{path} is nearly empty"
    colours = page.evaluate("""async (src) => {
      const img = new Image(); img.src = src; await img.decode();
      const c = document.createElement('canvas'); c.width = 64; c.height = 64;
      const g = c.getContext('2d'); g.drawImage(img, 0, 0, 64, 64);
      const d = g.getImageData(0, 0, 64, 64).data; const seen = new Set();
      for (let i = 0; i < d.length; i += 4) {
        seen.add((d[i] >> 4) << 8 | (d[i + 1] >> 4) << 4 | d[i + 2] >> 4);
      }
      return seen.size; }""", "data:image/png;base64," + base64.b64encode(
        path.read_bytes()).decode())
    assert colours > 8, f"{path} shows {colours} colours: a blank page?"
    return path


def test_bot_page_shows_versions_ratings_matches_and_head_to_head(
        live_server: ServerThread, page: Any, ladder: Ladder, tmp_path: Path) -> None:
    arena = ladder.arena
    # A second version of alice's bot: the page lists both, newest first.
    alice = ladder.base.users["alice"]
    second = arena.bots.submit(alice, "greedy", "greedy.py", b"# v2\n" + arena.bots.source(
        "alice/greedy@1"))
    page.goto(f"{live_server.url}/bots/alice/greedy")
    assert page.inner_text("h1") == "alice/greedy"
    versions = page.locator("#versions tbody tr")
    assert versions.count() == 2
    assert versions.nth(0).get_attribute("data-version") == second.id
    assert "pending" in versions.nth(0).inner_text().lower()
    first = versions.nth(1)
    board = arena.ladders.leaderboard("main")
    standing = board.standing("alice/greedy@1")
    assert standing is not None and standing.rating is not None
    assert f"{round(standing.rating)} ±" in first.locator(".ratings").inner_text()
    assert first.locator("time").count() == 1  # its submission time
    # Recent matches: every row involves alice's bot, and links to the match page.
    rows = page.locator("#bot-recent tbody tr")
    assert rows.count() >= 1
    for i in range(rows.count()):
        assert "alice/greedy@1" in rows.nth(i).inner_text().replace("\n", "")
    # Head to head: one row per opponent it met, with the same record as the leaderboard.
    opponents = {r.get_attribute("data-opponent")
                 for r in page.locator("#h2h tbody tr").all()}
    met = {p.b if p.a == "alice/greedy@1" else p.a for p in board.pairs
           if "alice/greedy@1" in (p.a, p.b)}
    assert opponents == met and len(met) == 3
    pair = board.pair("alice/greedy@1", "bob/random@1")
    assert pair is not None
    row = page.locator("#h2h tbody tr[data-opponent='bob/random@1']")
    assert f"{pair.wins}–{pair.ties}–{pair.losses}" in row.inner_text()
    # The same data as JSON.
    data = page.request.get(f"{live_server.url}/api/bots/alice/greedy").json()
    assert [v["id"] for v in data["versions"]] == [second.id, "alice/greedy@1"]
    assert {h["opponent"] for h in data["head_to_head"]} == met
    assert data["ratings"][0]["ladder"] == "main"
    assert data["ratings"][0]["rating"] == standing.rating
    user = page.request.get(f"{live_server.url}/api/users/alice").json()
    assert [b["id"] for b in user["bots"]] == ["alice/greedy"]
    # From the page to its owner's page.
    page.click(".lead a")
    page.wait_for_url("**/users/alice")
    shoot(page, tmp_path, "user")
    page.goto(f"{live_server.url}/bots/alice/greedy")
    shoot(page, tmp_path, "bot")


def test_user_page_lists_the_users_bots(live_server: ServerThread, page: Any,
                                        ladder: Ladder) -> None:
    arena = ladder.arena
    arena.bots.submit(ladder.base.users["bob"], "second", "second.py", b"# another\n")
    page.goto(f"{live_server.url}/users/bob")
    assert page.inner_text("h1") == "bob"
    bots = [r.get_attribute("data-bot") for r in page.locator("#user-bots tbody tr").all()]
    assert sorted(bots) == ["bob/random", "bob/second"]
    page.click("#user-bots a >> text=random")
    page.wait_for_url("**/bots/bob/random")
    assert page.inner_text("h1") == "bob/random"
    missing = page.goto(f"{live_server.url}/users/nobody")
    assert missing is not None and missing.status == 404


def test_live_viewer_follows_a_running_match_game_by_game(
        live_server: ServerThread, page: Any, ladder: Ladder, tmp_path: Path) -> None:
    arena = ladder.arena
    match = arena.matches.get(ladder.pending[0])
    records = decompress_replays(ladder.base.play(match).replays)
    assert len(records) >= 3
    # Before a worker takes it, its live page waits (and does not leave).
    page.goto(f"{live_server.url}/live/{match.id}")
    page.wait_for_selector("#live-match[data-state=waiting]")
    page.wait_for_timeout(1500)
    assert f"/live/{match.id}" in page.url

    page.goto(f"{live_server.url}/ladders/main")
    page.wait_for_selector("#live[data-state=live]")  # the badge leaves "connecting…"
    assert "No match is being played" in page.inner_text("#livenow")

    # A worker starts the match: the ladder page lists it, live, with a link to watch it.
    arena.live.start(match, worker="test")
    link = page.wait_for_selector(f"#livenow li[data-match='{match.id}'] a")
    assert link is not None and f"0 of {match.games} games played" in page.inner_text("#livenow")
    shoot(page, tmp_path, "ladder-live-now")
    link.click()
    page.wait_for_url(f"**/live/{match.id}")
    page.wait_for_selector("#live-match[data-state=live]")
    assert "being played" in page.inner_text("#viewer")

    # Each game that ends shows up at once, and the viewer (following) moves to it. Batched
    # games end out of order: each is shown under its number in the match (the n-th game
    # to end is not game n), with the right bot on each seat.
    for ended, index in enumerate((2, 0, 3), 1):
        record = records[index]
        arena.live.add_game(match, record)
        page.wait_for_url(re.compile(rf"/live/{re.escape(match.id)}\?game={index + 1}(#.*)?$"),
                          timeout=15_000)
        page.wait_for_selector("#viewer[data-step='0']")
        assert page.inner_text("#viewer-title") == f"Replay of game {index + 1}"
        assert f"{ended} of {match.games} games played" in page.inner_text("#live-match")
        assert page.locator("#live-games li").count() == ended
        players = page.inner_text("#players")
        assert record.players[0] in players and record.players[1] in players
        a_seat = match.schedule()[index].a_seat
        assert record.players[a_seat] == match.a
        assert "side A" in page.inner_text(f"#seat-{a_seat}")
        assert "side B" in page.inner_text(f"#seat-{1 - a_seat}")
    assert page.inner_text("#live-games") == "Game 1\nGame 3\nGame 4"
    # A game not finished yet says so; the others are a click away.
    page.goto(f"{live_server.url}/live/{match.id}?game=2")
    assert "Game 2 is still being played" in page.inner_text("#viewer")
    page.goto(f"{live_server.url}/live/{match.id}?game=3")
    page.wait_for_selector("#viewer[data-step='0']")
    assert page.get_attribute(".game-nav a >> text=previous game", "href").startswith("?game=1")
    assert page.get_attribute(".game-nav a >> text=next game", "href").startswith("?game=4")
    page.keyboard.press("End")  # the viewer works as on the match page
    assert page.get_attribute("#viewer", "data-kind") == "result"
    shoot(page, tmp_path, "live-viewer")

    # Recorded: the live entry goes, and the viewer becomes the match page.
    assert arena.matches.record(match.id, ladder.base.play(match)).recorded
    arena.live.end(match)
    page.wait_for_url(re.compile(rf"/matches/{re.escape(match.id)}$"), timeout=15_000)
    assert page.locator("table.games tbody tr").count() == match.games
    assert not arena.live.matches("main")


def test_ladder_badge_reaches_live_without_server_sent_events(
        live_server: ServerThread, page: Any, ladder: Ladder) -> None:
    # As in a browser that cannot open the stream: the page polls, and says it is live.
    page.add_init_script("delete window.EventSource")
    page.goto(f"{live_server.url}/ladders/main")
    page.wait_for_selector("#live[data-state=live]", timeout=15_000)
    assert "polling" in page.inner_text("#live")
    version = int(page.get_attribute("main", "data-version"))
    match = ladder.record_next()
    page.wait_for_selector(f"main[data-version='{version + 1}']", timeout=15_000)
    assert page.locator(f"#recent tr[data-match='{match.id}']").count() == 1


def test_ladder_page_says_it_reconnects_across_a_server_restart(
        page: Any, ladder: Ladder, redis_url: str) -> None:
    settings = WebSettings(ping_seconds=2.0, min_interval=0.05)
    with ServerThread(WebServer(ladder.arena, redis_url, port=0, settings=settings)) as first:
        url = first.url
        page.goto(f"{url}/ladders/main")
        page.wait_for_selector("#live[data-state=live]", timeout=15_000)
    # Stopped: the page says so instead of going quiet.
    page.wait_for_selector("#live[data-state=reconnecting]", timeout=15_000)
    assert "lost the server; reconnecting" in page.inner_text("#live")
    port = int(url.rsplit(":", 1)[1])
    with ServerThread(WebServer(ladder.arena, redis_url, port=port, settings=settings)):
        page.wait_for_selector("#live[data-state=live]", timeout=40_000)
        version = int(page.get_attribute("main", "data-version"))
        match = ladder.record_next()
        page.wait_for_selector(f"main[data-version='{version + 1}']", timeout=20_000)
        assert page.locator(f"#recent tr[data-match='{match.id}']").count() == 1


def test_match_page_puts_the_replay_first_and_numbers_games_from_one(
        live_server: ServerThread, page: Any, ladder: Ladder, tmp_path: Path) -> None:
    match = ladder.recorded()[0]
    page.goto(f"{live_server.url}/matches/{match.id}")
    shoot(page, tmp_path, "match")
    order = page.evaluate("""() => [...document.querySelectorAll('main section')]
        .map(s => s.id || s.querySelector('h2')?.id || '')""")
    assert order.index("viewer") < order.index("games-title") if "games-title" in order \
        else order.index("viewer") < len(order) - 1
    assert page.inner_text("#viewer-title") == "Replay of game 1"
    page.click(".game-nav a >> text=next game")
    page.wait_for_url(re.compile(r"\?game=2(#.*)?$"))
    assert page.inner_text("#viewer-title") == "Replay of game 2"
    first_row = page.locator("table.games tbody tr").first
    assert first_row.locator("td").first.inner_text() == "1"


def test_retired_versions_are_hidden_until_asked_for(
        live_server: ServerThread, page: Any, ladder: Ladder) -> None:
    arena = ladder.arena
    newer = arena.bots.submit(ladder.base.users["alice"], "greedy", "greedy.py", b"# v2\n")
    arena.bots.activate(newer.id)  # alice/greedy@1 retires, keeping its results
    page.goto(f"{live_server.url}/ladders/main")
    page.wait_for_selector("#live[data-state=live]")
    old = page.locator("#standings tr[data-version='alice/greedy@1']")
    assert old.count() == 1 and not old.is_visible()
    assert "alice/greedy@1" not in page.inner_text("#chart")
    assert page.locator("#standings tr[data-version='bob/random@1']").is_visible()
    page.check("#show-retired")
    assert old.is_visible()
    assert "alice/greedy@1" in page.inner_text("#chart")
    page.uncheck("#show-retired")
    assert not old.is_visible()
    # The home page's leaders skip it too.
    page.goto(f"{live_server.url}/")
    assert "alice/greedy@1" not in page.inner_text(".leaders")


def test_a_ladder_of_one_bot_waits_for_opponents(live_server: ServerThread, page: Any,
                                                 ladder: Ladder) -> None:
    arena, admin = ladder.arena, ladder.base.admin
    arena.ladders.create(admin, "lonely", games_per_pairing=4, games_per_match=2)
    arena.ladders.join(ladder.base.users["alice"], "greedy", "lonely")
    page.goto(f"{live_server.url}/")
    card = page.locator(".ladder-card[data-ladder=lonely]")
    assert card.locator(".badge").inner_text().lower() == "waiting for opponents"
    assert "complete" not in card.inner_text().lower()
    page.goto(f"{live_server.url}/ladders/lonely")
    page.wait_for_selector("#live[data-state=live]")
    assert "Waiting for opponents" in page.inner_text("#status")


def test_twelve_chart_series_never_share_a_look(browser: Any, redis: Any,
                                               redis_url: str) -> None:
    bots = tuple((f"user{i}", f"bot{i}", ("greedy", "random", "passive")[i % 3])
                 for i in range(12))
    many = make_ladder(redis, name="many", bots=bots, games_per_pairing=2, games_per_match=2,
                       leave_pending=0)
    server = WebServer(many.arena, redis_url, port=0)
    with ServerThread(server) as running:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        try:
            tab = context.new_page()
            tab.goto(f"{running.url}/ladders/many")
            looks = tab.evaluate("""() => [...document.querySelectorAll('svg.chart .series')]
              .map(g => { const s = getComputedStyle(g.querySelector('polyline'));
                          return s.stroke + ' ' + s.strokeDasharray; })""")
        finally:
            context.close()
    assert len(looks) == 12
    assert len(set(looks)) == 12, looks  # a colour, or a colour and a dash, of its own
