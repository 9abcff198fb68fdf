"""The web UI's JSON API and pages through aiohttp's test client, on a real Redis with a
ladder whose games were played by the engine.

Each test runs its own event loop (``asyncio.run``) around an aiohttp ``TestClient``; the arena
is also read directly (sync facade) to check that the API says the same.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import redis as redis_py
from aiohttp.test_utils import TestClient, TestServer

from tacocat.arena import MatchStatus
from tacocat.web import CSP, WebError, WebServer, WebSettings, WebStartError, create_app
from tacocat.web._ladders import recent_fragment

from .data import (
    HOSTILE,
    HOSTILE_FAULT,
    Ladder,
    expected_steps,
    inject_hostile_bot,
    record_with_hostile_players,
)

Check = Callable[[TestClient[Any, Any]], Awaitable[None]]


def run(ladder: Ladder, redis_url: str, check: Check) -> None:
    async def main() -> None:
        app = create_app(ladder.arena, redis_url,
                         WebSettings(ping_seconds=1.0, min_interval=0.02))
        async with TestClient(TestServer(app)) as client:
            await check(client)

    asyncio.run(main())


async def get_json(client: TestClient[Any, Any], path: str, status: int = 200) -> Any:
    response = await client.get(path)
    assert response.status == status, (path, response.status, await response.text())
    assert response.content_type == "application/json"
    return await response.json()


async def get_html(client: TestClient[Any, Any], path: str, status: int = 200) -> str:
    response = await client.get(path)
    assert response.status == status, (path, response.status)
    assert response.content_type == "text/html"
    assert response.headers["Content-Security-Policy"] == CSP
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    return await response.text()


def test_ladders_list_every_ladder_with_its_progress(ladder: Ladder, redis_url: str) -> None:
    arena = ladder.arena
    arena.ladders.create(ladder.base.admin, "empty")
    status = arena.ladders.status("main")
    recorded = ladder.recorded()

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, "/api/ladders")
        by_name = {lad["name"]: lad for lad in data["ladders"]}
        assert sorted(by_name) == ["empty", "main"]
        main = by_name["main"]
        assert main["status"]["entries"] == 4
        assert main["status"]["games_played"] == sum(m.games for m in recorded)
        assert main["status"]["games_target"] == status.games_target == 6 * 8
        assert main["status"]["matches_pending"] == len(ladder.pending) == 2
        assert not main["status"]["complete"]
        assert main["ruleset"]["hand_sizes"] == [4, 6, 9, 7, 9, 6, 4]
        assert by_name["empty"]["status"]["entries"] == 0
        home = await get_html(client, "/")
        assert 'href="/ladders/main"' in home and 'href="/ladders/empty"' in home

    run(ladder, redis_url, check)


def test_ladder_json_is_the_arenas_standings(ladder: Ladder, redis_url: str) -> None:
    arena = ladder.arena
    board = arena.ladders.leaderboard("main")
    recent = arena.ladders.recent_matches("main")

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, "/api/ladders/main")
        assert data["version"] == board.version == len(ladder.recorded())
        rows = data["standings"]
        assert [r["version"] for r in rows] == [s.version for s in board.standings]
        assert [r["rank"] for r in rows] == [1, 2, 3, 4]
        for row, want in zip(rows, board.standings, strict=True):
            assert (row["wins"], row["ties"], row["losses"], row["games"]) == (
                want.wins, want.ties, want.losses, want.games)
            assert row["rating"] == want.rating and row["low"] == want.low
            assert row["elo"] == want.elo and row["forfeits"] == dict(want.forfeits)
            owner, _, rest = row["version"].partition("/")
            assert row["owner"] == owner and f"{row['name']}@{row['number']}" == rest
        crashing = next(r for r in rows if r["owner"] == "dave")
        assert crashing["forfeits"] == {"crash": crashing["games"]}
        assert [m["match"] for m in data["recent"]] == [e.match for e in recent]
        assert data["recent"][0]["seq"] == board.version

    run(ladder, redis_url, check)


def test_the_matches_list_says_how_many_there_are_and_its_cap(ladder: Ladder,
                                                               redis_url: str) -> None:
    recorded = len(ladder.recorded())
    newest = [e.match for e in ladder.arena.ladders.recent_matches("main", 2)]

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, "/api/ladders/main/matches?count=2")
        assert [m["match"] for m in data["matches"]] == newest  # the latest, newest first
        assert data["total"] == recorded > 2 and data["max_count"] == 1000
        asked_too_many = await get_json(client, "/api/ladders/main/matches?count=5000")
        assert len(asked_too_many["matches"]) == recorded == asked_too_many["total"]

    run(ladder, redis_url, check)
    # The ladder page's list of recent matches says when it is not all of them.
    latest = ladder.arena.ladders.recent_matches("main", 2)
    assert f"The latest 2 of {recorded} matches; all of them: <code>tacocat match --ladder " \
        f"main --count {recorded}</code>" in recent_fragment(latest, recorded, "main")
    assert "The latest" not in recent_fragment(latest, 2, "main")


def test_crosstable_has_every_pair_from_both_sides(ladder: Ladder, redis_url: str) -> None:
    board = ladder.arena.ladders.leaderboard("main")

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, "/api/ladders/main/crosstable")
        order = data["versions"]
        assert order == [s.version for s in board.standings]
        cells = data["cells"]
        for i, a in enumerate(order):
            assert cells[i][i] is None
            for j, b in enumerate(order):
                if i == j:
                    continue
                cell, mirror = cells[i][j], cells[j][i]
                pair = board.pair(a, b)
                assert pair is not None
                assert (cell["wins"], cell["ties"], cell["losses"]) == (
                    pair.wins, pair.ties, pair.losses)
                assert (cell["wins"], cell["losses"]) == (mirror["losses"], mirror["wins"])
                assert cell["score"] == pytest.approx(
                    (pair.wins + pair.ties / 2) / (pair.wins + pair.ties + pair.losses))
                assert cell["los"] == pytest.approx(1 - mirror["los"])
        assert len(data["pairs"]) == 6
        page = await get_html(client, "/ladders/main")
        assert page.count('class="cell sc') == 12
        for row in ladder.arena.ladders.leaderboard("main").standings:  # names link to bot pages
            owner, name = row.version.rpartition("@")[0].split("/")
            assert f'href="/bots/{owner}/{name}"' in page

    run(ladder, redis_url, check)


def test_rating_history_ends_at_the_live_elo(ladder: Ladder, redis_url: str) -> None:
    board = ladder.arena.ladders.leaderboard("main")
    recorded = ladder.recorded()

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, "/api/ladders/main/history")
        assert data["version"] == board.version
        for row in board.standings:
            points = data["series"][row.version]
            played = sorted(m.seq for m in recorded if row.version in (m.a, m.b)
                            if m.seq is not None)
            assert [p[0] for p in points] == played
            assert points[-1][2] == row.elo  # exactly: same updates, same order
        page = await get_html(client, "/ladders/main")
        assert page.count("<polyline") == len(board.standings)

    run(ladder, redis_url, check)


def test_match_json_hides_the_seed_until_recorded(ladder: Ladder, redis_url: str) -> None:
    done = ladder.recorded()[0]
    pending = ladder.arena.matches.get(ladder.pending[0])
    result = done.result
    assert result is not None and pending.status is MatchStatus.SCHEDULED

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, f"/api/matches/{done.id}")
        assert (data["a"], data["b"], data["status"]) == (done.a, done.b, "recorded")
        assert data["seed"] == done.seed
        shown = data["result"]
        assert (shown["wins"], shown["ties"], shown["losses"]) == (
            result.wins, result.ties, result.losses)
        assert [g["a_seat"] for g in shown["games"]] == [0, 1, 0, 1]
        for game, want in zip(shown["games"], result.games, strict=True):
            assert game["reason"] == want.reason.value
            side = want.winner
            assert game["winner_version"] == (None if side is None else
                                              done.a if side == "a" else done.b)
        hidden = await get_json(client, f"/api/matches/{pending.id}")
        assert hidden["status"] == "scheduled"
        assert hidden["seed"] is None and hidden["result"] is None
        page = await get_html(client, f"/matches/{pending.id}")
        assert pending.seed and pending.seed not in page and "scheduled" in page

    run(ladder, redis_url, check)


def test_every_game_replays_step_by_step_as_recorded(ladder: Ladder, redis_url: str) -> None:
    arena = ladder.arena
    matches = ladder.recorded()

    async def check(client: TestClient[Any, Any]) -> None:
        goal_games = forfeits = 0
        for match in matches:
            records = arena.matches.replays(match.id)
            for i, record in enumerate(records):
                data = await get_json(client, f"/api/matches/{match.id}/games/{i + 1}")
                assert data["record"] == record.to_json() and data["game"] == i + 1
                assert data["players"] == [match.a, match.b][::1 if i % 2 == 0 else -1]
                steps = data["steps"]
                assert [s["index"] for s in steps] == list(range(len(steps)))
                assert steps[-1]["kind"] == "result"
                assert steps[-1]["result"]["winner"] == record.result.winner
                assert [r["first_step"] for r in data["rounds"]] == [
                    s["index"] for s in steps if s["kind"] == "deal"]
                if record.result.reason.value == "goal":
                    goal_games += 1
                    want = expected_steps(record.to_json())
                    assert [s["kind"] for s in steps] == [w["kind"] for w in want]
                    for got, exp in zip(steps, want, strict=True):
                        for key in ("hands", "replace", "duel", "showdown", "winner"):
                            if key in exp:
                                assert got[key] == exp[key], (match.id, i, got["index"], key)
                        if exp["kind"] == "trick":
                            assert got["trick"]["attack"] == exp["attack"]
                            assert got["trick"]["response"] == exp["response"]
                        if "position" in exp:
                            assert got["position"] == exp["position"]
                else:
                    forfeits += 1
                    assert record.result.reason.value == "forfeit"
                    assert "forfeits (crash)" in steps[-1]["text"]
                    assert steps[-1]["result"]["fault"] == "crash"
        assert goal_games >= 10 and forfeits >= 10

    run(ladder, redis_url, check)


def test_replays_download_is_the_stored_blob(ladder: Ladder, redis_url: str) -> None:
    match = ladder.recorded()[0]
    blob = ladder.arena.matches.replays_blob(match.id)

    async def check(client: TestClient[Any, Any]) -> None:
        response = await client.get(f"/api/matches/{match.id}/replays.jsonl.gz")
        assert response.status == 200
        assert response.content_type == "application/gzip"
        body = await response.read()
        assert body == blob
        lines = gzip.decompress(body).decode().splitlines()
        assert len(lines) == match.games and json.loads(lines[0])["format"] == \
            "tacocat-replay/1"

    run(ladder, redis_url, check)


def test_unknown_and_malformed_names_are_not_found(ladder: Ladder, redis_url: str) -> None:
    match = ladder.recorded()[0]

    async def check(client: TestClient[Any, Any]) -> None:
        for path in ("/api/ladders/nope", "/api/ladders/nope/crosstable",
                     "/api/ladders/nope/history", "/api/ladders/nope/events",
                     "/api/ladders/Bad%20Name", "/api/matches/main.1.0000000000000000",
                     "/api/matches/garbage", f"/api/matches/{match.id}/games/5",
                     f"/api/matches/{match.id}/games/0", f"/api/matches/{match.id}/games/-1",
                     f"/api/matches/{match.id}/games/x"):
            data = await get_json(client, path, 404)
            assert data["status"] == 404 and data["message"]
        for path in ("/ladders/nope", "/matches/garbage", "/no/such/page"):
            text = await get_html(client, path, 404)
            assert "Back to the ladders" in text
        bad = await client.get("/api/ladders/main/matches?count=many")
        assert bad.status == 400
        health = await client.get("/healthz")
        assert health.status == 200 and await health.text() == "ok\n"

    run(ladder, redis_url, check)


def test_pages_carry_no_inline_script(ladder: Ladder, redis_url: str) -> None:
    match = ladder.recorded()[0]

    async def check(client: TestClient[Any, Any]) -> None:
        for path in ("/", "/ladders/main", f"/matches/{match.id}?game=2"):
            text = await get_html(client, path)
            for script in re.findall(r"<script[^>]*>", text):
                assert 'type="application/json"' in script or " src=" in script, script
            assert " on" not in "".join(re.findall(r"<[a-z]+[^>]*>", text)).replace(
                " one", ""), "no inline event handlers"
        static = await client.get("/static/style.css")
        assert static.status == 200 and static.content_type == "text/css"

    run(ladder, redis_url, check)


def test_markup_in_names_is_escaped_in_html_and_kept_in_json(
    ladder: Ladder, redis_url: str
) -> None:
    evil = inject_hostile_bot(ladder)
    match = record_with_hostile_players(ladder)

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, "/api/ladders/main")
        row = next(r for r in data["standings"] if r["version"] == evil)
        assert row["name"] == HOSTILE and row["forfeits"] == {HOSTILE_FAULT: 1}
        for path in ("/ladders/main", f"/matches/{match.id}?game=1"):
            text = await get_html(client, path)
            assert "<script>alert" not in text and "<img src=x" not in text
        page = await get_html(client, "/ladders/main")
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
        assert "&lt;img src=x onerror=alert(2)&gt;" in page
        viewer = await get_html(client, f"/matches/{match.id}?game=1")
        assert "\\u003cscript\\u003ealert(1)\\u003c/script\\u003e#0" in viewer
        game = await get_json(client, f"/api/matches/{match.id}/games/1")
        assert game["players"] == [f"{HOSTILE}#0", HOSTILE_FAULT]

    run(ladder, redis_url, check)


def test_event_stream_sends_an_update_per_recorded_match(
    ladder: Ladder, redis_url: str, redis: redis_py.Redis
) -> None:
    async def next_event(lines: Any) -> dict[str, Any]:
        event: dict[str, str] = {}
        async for raw in lines:
            line = raw.decode().rstrip("\n")
            if not line:
                if "data" in event:
                    return {"id": event.get("id"), "event": event.get("event"),
                            **json.loads(event["data"])}
                event = {}
                continue
            if line.startswith(":"):
                continue
            name, _, value = line.partition(": ")
            event[name] = value
        raise AssertionError("stream ended")

    async def check(client: TestClient[Any, Any]) -> None:
        response = await client.get("/api/ladders/main/events")
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/event-stream")
        first = await asyncio.wait_for(next_event(response.content), 5)
        version = first["version"]
        assert first["event"] == "update" and first["id"] == str(version)
        assert set(first["html"]) == {"status", "livenow", "standings", "chart", "crosstable",
                                  "recent"}
        match = await asyncio.to_thread(ladder.record_next)
        while True:
            update = await asyncio.wait_for(next_event(response.content), 5)
            if update["version"] == version + 1:
                break
            assert update["version"] == version
        assert match.seq == version + 1
        assert f'data-match="{match.id}"' in update["html"]["recent"]
        assert update["status"]["matches_recorded"] == version + 1
        response.close()

    run(ladder, redis_url, check)


def test_stopping_the_server_ends_open_event_streams(ladder: Ladder, redis_url: str) -> None:
    async def main() -> float:
        server = WebServer(ladder.arena, redis_url, port=0)
        await server.start()
        async with aiohttp.ClientSession() as session:
            response = await session.get(f"{server.url}api/ladders/main/events")
            assert response.status == 200
            await asyncio.wait_for(response.content.readuntil(b"event: update"), 5)
            started = time.monotonic()
            await asyncio.wait_for(server.stop(), 10)
            response.close()
            return time.monotonic() - started

    assert asyncio.run(main()) < 2.0


def test_a_taken_port_is_a_web_start_error_naming_it(ladder: Ladder, redis_url: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]

        async def main() -> None:
            await WebServer(ladder.arena, redis_url, port=port).start()

        with pytest.raises(WebStartError, match=f"web UI cannot listen on 127.0.0.1:{port}"):
            asyncio.run(main())
    assert issubclass(WebStartError, WebError)


def test_tacocat_serve_says_when_the_web_port_is_taken(redis_url: str, tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0", "--web-port",
             str(port), "--redis-url", redis_url, "--data-dir", str(tmp_path)],
            capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, done.stderr
    assert f"tacocat serve: web UI cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr


def test_tacocat_serve_runs_the_web_ui(redis_url: str, redis: redis_py.Redis,
                                       tmp_path: Path) -> None:
    process = subprocess.Popen(
        [sys.executable, "-m", "tacocat.cli", "serve", "--port", "0", "--web-port", "0",
         "--redis-url", redis_url, "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        url = None
        deadline = time.monotonic() + 30
        while url is None and time.monotonic() < deadline:
            line = process.stdout.readline()
            assert line, f"serve exited: {process.stderr.read() if process.stderr else ''}"
            if line.startswith("web UI on "):
                url = line.removeprefix("web UI on ").strip()
        assert url is not None and url.startswith("http://127.0.0.1:")
        with urllib.request.urlopen(f"{url}api/ladders", timeout=10) as reply:
            assert json.load(reply) == {"ladders": []}
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert "Ladders" in reply.read().decode()
    finally:
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(20)
        except subprocess.TimeoutExpired:
            process.kill()
            raise
    assert code == 0
