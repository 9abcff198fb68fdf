"""A test's page (unrated SPRT) in Debian's Chromium: the report while it runs, updated
without a reload, the verdict at the end, and the link from the bot page. The test's
matches are played for real by the engine, in process, and recorded through the arena."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tacocat.arena import MatchResult
from tacocat.arena.trials import Trials, TrialStatus, make_sprt
from tacocat.engine import STANDARD
from tacocat.referee import play_in_process

from .conftest import ServerThread
from .data import Ladder

pytestmark = pytest.mark.browser


def play_next(ladder: Ladder, trials: Trials, queued: list[str]) -> None:
    match = trials.get_match(queued.pop(0))
    factories = ladder.base.factories
    games = play_in_process(factories[match.a.rpartition("@")[0]],
                            factories[match.b.rpartition("@")[0]], match.schedule(),
                            rules=STANDARD, names=(match.a, match.b)).games
    result = MatchResult.from_records([g.record for g in games], match.a, match.b, 0.1)
    trials.record(match.id, result, enqueue=queued.append)


def test_the_test_page_follows_the_report_to_the_verdict(
        live_server: ServerThread, page: Any, ladder: Ladder, tmp_path: Path) -> None:
    arena = ladder.arena
    trials = Trials(arena)
    greedy = arena.bots.get("alice/greedy").current_version
    passive = arena.bots.get("carol/passive").current_version
    assert greedy and passive
    board = arena.ladders.leaderboard("main")
    trial = trials.create(ladder.base.users["alice"], greedy, passive,
                          sprt=make_sprt(0, 200, 0.05, 0.05), max_games=400,
                          games_per_match=4)
    queued: list[str] = []
    trials.tick(queued.append)
    play_next(ladder, trials, queued)

    page.goto(f"{live_server.url}/bots/alice/greedy")
    link = page.locator(f"#bot-trials tr[data-trial={trial.id}] th a")
    assert link.inner_text() == trial.id
    link.click()
    page.wait_for_url(f"**/trials/{trial.id}")
    assert page.get_attribute("main", "data-open") == "1"
    assert page.inner_text("[data-field=games]") == "4"
    assert page.inner_text("[data-field=bounds]") == "(-2.94, +2.94)"
    assert page.text_content("#trial-status") == "running"
    assert "no verdict yet" in page.inner_text("#trial-verdict")
    assert "alice/greedy@1" in page.inner_text("h1")
    page.evaluate("window.__sameDocument = true")

    while trials.get(trial.id).status is TrialStatus.RUNNING:
        play_next(ladder, trials, queued)
    done = trials.get(trial.id)
    assert done.status is TrialStatus.H1, done.verdict()
    page.wait_for_selector("main[data-open='0']", timeout=15_000)
    assert page.evaluate("window.__sameDocument") is True  # updated, not reloaded
    assert page.text_content("#trial-status") == "H1"
    assert page.inner_text("[data-field=games]") == f"{done.games:,}"
    assert page.inner_text("#trial-verdict").startswith("SPRT H1 accepted")
    assert page.inner_text("#trial-line") == done.line()
    page.screenshot(path=str(tmp_path / "trial.png"), full_page=True)
    assert [int(page.inner_text(f"[data-pair='{i}']")) for i in range(5)] == list(done.penta)
    # Unrated: the ladder's standings are as they were.
    assert arena.ladders.leaderboard("main") == board

    api = page.request.get(f"{live_server.url}/api/trials/{trial.id}").json()
    assert api["status"] == "H1" and api["pentanomial"] == list(done.penta)
    missing = page.goto(f"{live_server.url}/trials/T999")
    assert missing is not None and missing.status == 404
    assert "no test 'T999'" in page.inner_text("main")

