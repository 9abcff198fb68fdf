"""The ladder page of a big ladder: the standings and the crosstable come a page at a time,
and the live updates keep the page the browser shows."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import redis as redis_py
from aiohttp.test_utils import TestClient, TestServer

from tacocat.arena import MatchGameResult, MatchResult
from tacocat.arena.history import rating_history
from tacocat.engine import Reason
from tacocat.web import WebSettings, create_app
from tacocat.web._data import CROSSTABLE_LIMIT, STANDINGS_PER_PAGE
from tests.arena.helpers import make_field, stub_ladder

BOTS = 60


def big_ladder(redis: redis_py.Redis) -> Any:
    arena, queue = stub_ladder(redis, "big", BOTS, games_per_pairing=2, games_per_match=2)
    for match_id in queue[:40]:  # the lower-numbered bot of each pair wins both games
        match = arena.matches.get(match_id)
        winner = "a" if match.a < match.b else "b"
        arena.matches.record(match_id, MatchResult(
            (MatchGameResult(0, Reason.GOAL, winner), MatchGameResult(1, Reason.GOAL, winner)),
            0.0))
    return arena


def standings_rows(html: str) -> list[str]:
    table = html.split('class="standings"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<tr data-version="([^"]+)"', table)


def crosstable_rows(html: str) -> list[str]:
    table = html.split('class="crosstable"', 1)[1].split("</table>", 1)[0]
    return re.findall(r'<th scope="row"><span class="idx">(\d+)</span>', table)


def test_standings_and_crosstable_come_a_page_at_a_time(redis: redis_py.Redis,
                                                         redis_url: str) -> None:
    arena = big_ladder(redis)
    board = arena.ladders.leaderboard("big")
    ranked = [s.version for s in board.standings]

    async def main() -> None:
        app = create_app(arena, redis_url, WebSettings(ping_seconds=1.0, min_interval=0.02))
        async with TestClient(TestServer(app)) as client:
            first = await (await client.get("/ladders/big")).text()
            assert standings_rows(first) == ranked[:STANDINGS_PER_PAGE]
            assert 'href="?page=2&amp;block=1"' in first and "51–60" in first
            assert crosstable_rows(first) == [str(i) for i in range(1, CROSSTABLE_LIMIT + 1)]

            second = await (await client.get("/ladders/big?page=2&block=3")).text()
            assert standings_rows(second) == ranked[STANDINGS_PER_PAGE:]
            assert crosstable_rows(second) == [str(i) for i in range(49, BOTS + 1)]
            assert 'data-events="/api/ladders/big/events?page=2&amp;block=3"' in second
            # Past the end: the last page.
            assert standings_rows(await (await client.get("/ladders/big?page=9")).text()) \
                == ranked[STANDINGS_PER_PAGE:]

            bad = await client.get("/ladders/big?page=zero")
            assert bad.status == 400
            assert "page must be a whole number from 1" in await bad.text()

            # The live stream renders the page that asked for it.
            async with client.get("/api/ladders/big/events?page=2&block=3") as events:
                async for line in events.content:
                    if line.startswith(b"data: "):
                        update = json.loads(line[6:])
                        break
            assert standings_rows(update["html"]["standings"]) == ranked[STANDINGS_PER_PAGE:]
            assert crosstable_rows(update["html"]["crosstable"])[0] == "49"

    asyncio.run(main())


def test_rating_history_read_on_equals_a_fresh_read(redis: redis_py.Redis) -> None:
    arena = big_ladder(redis)
    before = rating_history(arena.redis, arena.keys, "big")
    assert before.version == 40
    pending = [m.id for m in arena.matches.of_ladder("big", count=2000) if m.result is None]
    for match_id in pending[:25]:
        arena.matches.record(match_id, MatchResult(
            (MatchGameResult(0, Reason.GOAL, "b"), MatchGameResult(1, Reason.GOAL, "a")), 0.0))
    later = rating_history(arena.redis, arena.keys, "big", since=before)
    fresh = rating_history(arena.redis, arena.keys, "big")
    assert later.version == fresh.version == 65
    assert later.series == fresh.series and later.log_id == fresh.log_id
    # A ladder made anew under the same name starts afresh.
    arena.redis.flushall()
    field = make_field(arena.redis)
    field.arena.ladders.create(field.admin, "big")
    assert rating_history(arena.redis, arena.keys, "big", since=later).series == {}
