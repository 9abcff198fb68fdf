"""An aborted match (failed the same way too often: issue 30, item 4) shows its reason on its
page and in the JSON API, and the ladder's status counts it."""

from __future__ import annotations

from typing import Any

from aiohttp.test_utils import TestClient

from tacocat.arena import MatchStatus

from .data import Ladder
from .test_api import get_html, get_json, run

REASON = ("it ran past its job timeout of 99 s; 3 runs failed this way, so it is not played "
          "again (not rated; the ladder goes on) <b>")


def test_an_aborted_match_shows_why_on_its_page_and_in_the_api(ladder: Ladder,
                                                                redis_url: str) -> None:
    arena = ladder.arena
    pending = ladder.pending[0]
    before = arena.ladders.status("main")
    assert arena.matches.abort(pending, REASON)
    assert not arena.matches.abort(pending, "again")  # only a scheduled match is aborted
    match = arena.matches.get(pending)
    assert match.status is MatchStatus.ABORTED and match.reason == REASON
    status = arena.ladders.status("main")
    assert status.matches_aborted == 1 and status.games_aborted == match.games
    assert status.matches_pending == before.matches_pending - 1

    async def check(client: TestClient[Any, Any]) -> None:
        data = await get_json(client, f"/api/matches/{pending}")
        assert (data["status"], data["reason"], data["seed"]) == ("aborted", REASON, None)
        page = await get_html(client, f"/matches/{pending}")
        assert "This match was aborted: it ran past its job timeout of 99 s" in page
        assert "<b>" not in page.split("This match was aborted")[1][:400]  # escaped
        ladder_page = await get_html(client, "/ladders/main")
        assert "Aborted (not rated)" in ladder_page
        listed = await get_json(client, "/api/ladders")
        (main,) = [lad for lad in listed["ladders"] if lad["name"] == "main"]
        assert main["status"]["matches_aborted"] == 1

    run(ladder, redis_url, check)
