"""What the ladder and bot pages count and suggest, in Debian's Chromium: who plays (a
rejected bot does not), which games each count counts, a retired version hidden from the
crosstable as from the standings, and a test command naming the page's own bot."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import ServerThread
from .data import Ladder

pytestmark = pytest.mark.browser


def _facts(page: Any, scope: str) -> dict[str, str]:
    found: dict[str, str] = page.evaluate(
        """(scope) => Object.fromEntries([...document.querySelectorAll(scope + ' dl.facts div')]
             .map(d => [d.querySelector('dt').textContent, d.querySelector('dd').textContent]))""",
        scope)
    return found


def test_header_counts_only_bots_that_play_and_says_which_games_it_counts(
        live_server: ServerThread, page: Any, ladder: Ladder) -> None:
    arena, base = ladder.arena, ladder.base
    # A fifth bot joins, but its only version fails its smoke game.
    base.add_bot("erin", "broken", "greedy", activate=False)
    arena.ladders.join(base.users["erin"], "broken", "main")
    arena.bots.reject("erin/broken@1", "crashed in its smoke game")
    # alice's second version retires her first, whose games stay counted.
    newer = arena.bots.submit(base.users["alice"], "greedy", "greedy.py", b"# v2\n")
    arena.bots.activate(newer.id)
    status = arena.ladders.status("main")
    assert status.games_played > status.games_toward_target  # the two counts differ

    page.goto(f"{live_server.url}/ladders/main")
    page.wait_for_selector("#live[data-state=live]")
    facts = _facts(page, "#status")
    assert facts["Bots playing"] == "4 of 5", facts
    assert facts["Games, all versions"] == f"{status.games_played:,}"
    assert page.inner_text("#status .progress-text") == (
        f"{status.games_toward_target:,} of {status.games_target:,} round-robin games of "
        "the versions playing now")
    assert "1 joined bot without an active version (pending its smoke game, or rejected) " \
           "does not play" in page.inner_text("#status")

    # The crosstable hides the retired version, row and column, as the standings do.
    row = page.locator("#crosstable tr[data-version='alice/greedy@1']")
    column = page.locator("#crosstable thead th.retired")
    assert row.count() == 1 and column.count() == 1
    assert not row.is_visible() and not column.is_visible()
    assert not page.locator("#crosstable td.retired:visible").count()
    assert page.locator("#crosstable tr[data-version='bob/random@1']").is_visible()
    page.check("#show-retired")
    assert row.is_visible() and column.is_visible()

    page.goto(f"{live_server.url}/")
    card = _facts(page, ".ladder-card[data-ladder=main]")
    assert card["Bots playing"] == "4 of 5", card


def test_bot_page_suggests_a_test_against_its_own_bot(
        live_server: ServerThread, page: Any, ladder: Ladder) -> None:
    page.goto(f"{live_server.url}/bots/bob/random")
    text = page.inner_text("#bot-trials")
    assert "tacocat test mybot.py --against bob/random@1" in text, text
    assert "mybot@3" not in text
