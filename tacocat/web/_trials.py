"""The page of an unrated SPRT test (``/trials/T7``, JSON at ``/api/trials/T7``): the live
report (games, score, Elo ± 95%, LLR with its bounds, the pairs) and, once it ended, the
verdict, in the words of ``tacocat test``. While the test runs, ``trial.js`` polls the JSON
every 2 seconds and rewrites the report; without JavaScript the page still shows where it
stood when loaded (reload for more). Bot pages link here (:func:`trials_section`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any
from urllib.parse import quote

from aiohttp import web

from tacocat.arena import Arena
from tacocat.arena.trials import Trial, Trials

from ._html import Html, attrs, join, tag
from ._layout import Page, Static, bot_link, breadcrumbs, fmt_time, page

POLL_MS = 2000
PAIRS = ("LL", "LD", "WL or DD", "WD", "WW")


def trial_url(trial_id: str) -> str:
    return f"/trials/{quote(trial_id, safe='')}"


def trial_json(trial: Trial) -> dict[str, Any]:
    elo, margin = trial.elo
    return {
        "id": trial.id, "owner": trial.owner, "candidate": trial.candidate,
        "baseline": trial.baseline, "status": trial.status.value, "open": trial.status.open,
        "reason": trial.reason, "elo0": trial.sprt.elo0, "elo1": trial.sprt.elo1,
        "alpha": trial.sprt.alpha, "beta": trial.sprt.beta, "max_games": trial.max_games,
        "games_per_match": trial.games_per_match, "games": trial.games, "wins": trial.wins,
        "ties": trial.ties, "losses": trial.losses, "aborted": trial.aborted,
        "pentanomial": list(trial.penta), "score": trial.pentanomial.score(), "elo": elo,
        "elo_margin": margin, "llr": trial.llr, "llr_lower": trial.sprt.lower,
        "llr_upper": trial.sprt.upper, "matches_recorded": trial.matches_recorded,
        "created_at": trial.created_at, "ended_at": trial.ended_at, "line": trial.line(),
        "verdict": trial.verdict(),
    }


def _report(trial: Trial) -> Html:
    """The figures, each in an element ``trial.js`` rewrites by its ``data-field``."""
    data = trial_json(trial)
    figure = [("games", f"{trial.games:,}"), ("score", f"{data['score']:.3f}"),
              ("elo", f"{data['elo']:+.1f} ± {data['elo_margin']:.1f}"),
              ("llr", f"{data['llr']:+.2f}"),
              ("bounds", f"({trial.sprt.lower:+.2f}, {trial.sprt.upper:+.2f})")]
    labels = {"games": "Games", "score": "Score of A", "elo": "Elo of A (95%)",
              "llr": "LLR", "bounds": "accepts H0 / H1 at"}
    cells = [tag("div", tag("dt", labels[k]), tag("dd", v, data_field=k, class_="num"))
             for k, v in figure]
    pairs = tag("table", tag("caption", "Duplicate pairs, from A's side"),
                tag("thead", tag("tr", *(tag("th", p, scope="col") for p in PAIRS))),
                tag("tbody", tag("tr", *(tag("td", f"{c:,}", class_="num", data_pair=str(i))
                                         for i, c in enumerate(trial.penta)))),
                class_="pairs")
    return join([tag("dl", *cells, class_="trial-figures"),
                 tag("div", pairs, class_="table-wrap")])


def trial_page(static: Static, trial: Trial) -> str:
    sprt = trial.sprt
    content = join([
        breadcrumbs(("Ladders", "/"), (f"test {trial.id}", None)),
        tag("h1", f"Test {trial.id}: ", bot_link(trial.candidate), " against ",
            bot_link(trial.baseline)),
        tag("p", f"Unrated SPRT by {trial.owner}: H0 {sprt.elo0:+g} Elo, H1 {sprt.elo1:+g} "
            f"Elo, alpha {sprt.alpha:g}, beta {sprt.beta:g}; at most {trial.max_games:,} "
            f"games in matches of {trial.games_per_match}. Started ",
            fmt_time(trial.created_at), ".", class_="lead"),
        tag("p", tag("span", trial.status.value, class_=f"badge {trial.status.value}",
                     id="trial-status"), class_="trial-state"),
        tag("section", tag("h2", "Report", id="report-title"), _report(trial),
            tag("pre", trial.line(), id="trial-line"),
            class_="panel", id="report", aria_labelledby="report-title"),
        tag("section", tag("h2", "Verdict", id="verdict-title"),
            tag("pre", trial.verdict(), id="trial-verdict"),
            class_="panel", id="verdict", aria_labelledby="verdict-title"),
    ])
    main = attrs(data_trial=trial.id, data_open="1" if trial.status.open else "0",
                 data_poll=f"/api/trials/{quote(trial.id, safe='')}",
                 data_interval=str(POLL_MS))
    return page(static, Page(f"test {trial.id}", content, scripts=("trial.js",),
                             main_attrs=main))


def trials_section(trials: Sequence[Trial], against: str | None = None) -> Html:
    """The bot page's list of tests with one of the bot's versions on either side;
    ``against`` is the version the page's bot plays now (None: it has none), which an empty
    list suggests testing against."""
    if not trials:
        if against is None:
            return tag("p", "No tests yet.", class_="empty")
        return tag("p", "No tests yet. Test a bot of yours against this one: ",
                   tag("code", f"tacocat test mybot.py --against {against}"), class_="empty")
    rows = [tag("tr", tag("th", tag("a", t.id, href=trial_url(t.id)), scope="row"),
                tag("td", bot_link(t.candidate), class_="side-a"),
                tag("td", bot_link(t.baseline), class_="side-b"),
                tag("td", tag("span", t.status.value, class_=f"badge {t.status.value}")),
                tag("td", f"{t.games:,}", class_="num"),
                tag("td", f"{t.llr:+.2f}", class_="num"),
                tag("td", fmt_time(t.created_at), class_="when"), data_trial=t.id)
            for t in trials]
    head = tag("tr", *(tag("th", h, scope="col") for h in
                       ("Test", "A", "B", "Status", "Games", "LLR", "Started")))
    return tag("div", tag("table", tag("caption", "Tests", class_="sr-only"),
                          tag("thead", head), tag("tbody", *rows), class_="trials"),
               class_="table-wrap", tabindex="0", role="region", aria_label="Tests")


def add_trial_routes(app: web.Application, arena: Arena, static: Static) -> None:
    trials = Trials(arena)

    async def html(request: web.Request) -> web.Response:
        trial = await asyncio.to_thread(trials.get, request.match_info["id"])
        return web.Response(text=trial_page(static, trial), content_type="text/html")

    async def api(request: web.Request) -> web.Response:
        trial = await asyncio.to_thread(trials.get, request.match_info["id"])
        return web.json_response(trial_json(trial))

    app.add_routes([web.get("/trials/{id}", html), web.get("/api/trials/{id}", api)])
