"""The match page: the result, its games and the replay viewer's frame.

The viewer runs in the browser (``replay.js``): the page carries only its frame and the
game's steps (:mod:`._replay`) as JSON, so the server renders no board state.
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import quote

from tacocat.arena import MatchStatus
from tacocat.engine import Reason
from tacocat.models import MatchGameResult

from ._data import MatchView, side_version
from ._html import Html, esc, join, json_script, tag
from ._layout import (
    Page,
    Static,
    bot_link,
    breadcrumbs,
    fmt_time,
    ladder_url,
    match_url,
    page,
    version_label,
)


def _game_outcome(view: MatchView, game: MatchGameResult) -> Html:
    match = view.match
    if game.reason is Reason.FORFEIT and game.offender is not None:
        fault = game.fault.value if game.fault is not None else "forfeit"
        return join(["forfeit: ", tag("span", fault, class_="chip"), " by ",
                     version_label(side_version(match, game.offender))])
    return esc({"goal": "goal", "round_limit": "round limit", "aborted": "aborted"}.get(
        game.reason.value, game.reason.value))


def match_page(static: Static, view: MatchView, game: int | None,
               game_data: Mapping[str, object] | None, problem: str | None,
               live: Html | None = None, logs: Html | None = None, keep: str = "") -> str:
    """The match page; ``live`` (a banner) makes it the live viewer of a running match,
    whose ``view.records`` are the games finished so far. ``logs`` is the owner's panel
    (:mod:`._logs_view`), shown below the viewer; ``keep`` a query every game link keeps
    (the signed link that showed it)."""
    match, lad = view.match, view.ladder
    result = match.result
    crumbs = breadcrumbs(("Ladders", "/"), (lad.name, ladder_url(lad.name)),
                         (f"Match {match.id}", None))
    if result is not None:
        score = tag("p", bot_link(match.a),
                    tag("span", f"{result.wins}–{result.ties}–{result.losses}",
                        class_="big-score", title="A's wins–ties–losses"),
                    bot_link(match.b), class_="versus")
    else:
        score = tag("p", bot_link(match.a), tag("span", "vs", class_="big-score"),
                    bot_link(match.b), class_="versus")
    status = "playing" if live is not None else match.status.value
    facts = [("Ladder round", f"{match.round}"), ("Games", f"{match.games}"),
             ("Status", status)]
    if match.status is MatchStatus.RECORDED:
        facts += [("Result #", f"{match.seq}")]
        if result is not None:
            facts += [("Played in", f"{result.seconds:.1f} s")]
    info = tag("dl", *(tag("div", tag("dt", k), tag("dd", v)) for k, v in facts),
               tag("div", tag("dt", "Recorded"), tag("dd", fmt_time(match.recorded_at))),
               class_="facts")
    header = join([crumbs, tag("h1", "Match ", tag("code", match.id)), score, info])
    games_html: Html = Html("")
    if result is not None:
        rows = []
        for i, g in enumerate(result.games):
            winner = (version_label(side_version(match, g.winner)) if g.winner is not None
                      else tag("span", "none", class_="muted"))
            link: Html = Html("")
            if i < len(view.records):
                link = tag("a", "Replay", href=match_url(match.id, i, keep),
                           aria_current="true" if i == game else None,
                           aria_label=f"Replay game {i + 1}")
            rows.append(tag(
                "tr",
                tag("td", i + 1, class_="num"),
                tag("td", f"seat {g.a_seat}", class_="seat"),
                tag("td", winner),
                tag("td", _game_outcome(view, g)),
                tag("td", f"{g.rounds[0]}–{g.rounds[1]}", class_="num",
                    title="Rounds won by A–B"),
                tag("td", link),
                class_="current" if i == game else None,
            ))
        head = tag("tr", *(tag("th", h, scope="col") for h in
                           ("Game", "A sat in", "Winner", "How", "Rounds A–B", "")))
        games_html = tag("section", tag("h2", "Games", id="games-title"),
                         tag("div", tag("table", tag("thead", head), tag("tbody", *rows),
                                        class_="games"),
                             class_="table-wrap", tabindex="0", role="region",
                             aria_label="Games of the match"),
                         tag("p", tag("a", "Download all replays (.jsonl.gz)",
                                      href=f"/api/matches/{quote(match.id, safe='')}"
                                           "/replays.jsonl.gz"),
                             class_="hint"),
                         class_="panel", aria_labelledby="games-title")
    elif live is not None:
        games_html = tag("section", tag("h2", "Games so far", id="games-title"),
                         tag("ul", *(tag("li", tag("a", f"Game {view.place(i) + 1}",
                                                   href=f"?game={view.place(i) + 1}#viewer",
                                                   aria_current="true" if i == game else None))
                                     for i in range(len(view.records))),
                             class_="live-games", id="live-games"),
                         class_="panel", aria_labelledby="games-title")
    elif match.status is MatchStatus.ABORTED:
        games_html = tag("section", tag("p", f"This match was aborted: {match.reason}",
                                        class_="empty"), class_="panel")
    elif match.status is not MatchStatus.RECORDED:
        games_html = tag("section", tag("p", f"This match is {match.status.value}; its games "
                                             "appear here once it is recorded.",
                                        class_="empty"), class_="panel")
    viewer: Html = Html("")
    scripts: tuple[str, ...] = ()
    data: Html = Html("")
    if problem is not None:
        viewer = tag("section", tag("h2", "Replay"), tag("p", problem, class_="empty"),
                     class_="panel", id="viewer")
    elif game is not None and game_data is not None:
        viewer = viewer_skeleton(
            view.place(game), view.place(game - 1) if game > 0 else None,
            view.place(game + 1) if game + 1 < len(view.records) else None, keep)
        data = json_script("replay-data", game_data)
        scripts = ("replay.js",)
    elif live is not None:
        viewer = tag("section", tag("h2", "Replay"),
                     tag("p", "The first game is being played; it appears here when it ends.",
                         class_="empty"), class_="panel", id="viewer")
    # The replay first: it is what people open a match for; the games table follows.
    content = join([header, live or "", viewer, logs or "", games_html])
    if live is not None:
        scripts = (*scripts, "live.js")
    return page(static, Page(f"Match {match.id}", content, scripts=scripts, head_data=data))


_ICONS = {
    "first": "M3 3h2v10H3zM13 3v10L6 8z",
    "rewind": "M8 3v10L2 8zM14 3v10L8 8z",
    "prev": "M11 3v10L4 8z",
    "next": "M5 3v10l7-5z",
    "forward": "M2 3v10l6-5zM8 3v10l6-5z",
    "last": "M11 3h2v10h-2zM3 3v10l7-5z",
}


def viewer_skeleton(game: int, previous: int | None, following: int | None,
                    keep: str = "") -> Html:
    """The replay viewer's frame for game ``game`` of the match (0-based: shown from 1),
    with links to the ``previous`` and ``following`` games there are replays of (a running
    match's finished games need not follow each other); ``replay.js`` fills it from the
    JSON in the page."""

    def button(go: str, label: str, icon: str, keys: str | None = None) -> Html:
        svg = Html('<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true" '
                   f'focusable="false"><path fill="currentColor" d="{_ICONS[icon]}"/></svg>')
        return tag("button", svg, type="button", data_go=go, aria_label=label,
                   aria_keyshortcuts=keys, title=label + (f" ({keys})" if keys else ""))

    controls = tag(
        "div",
        button("first", "First step", "first", "Home"),
        button("prev-round", "Previous round", "rewind", "PageUp"),
        button("prev", "Previous step", "prev", "ArrowLeft"),
        tag("button", "Play", type="button", data_go="play", class_="play",
            aria_pressed="false", aria_label="Play automatically", title="Play (Space)"),
        button("next", "Next step", "next", "ArrowRight"),
        button("next-round", "Next round", "forward", "PageDown"),
        button("last", "Last step", "last", "End"),
        class_="controls", role="toolbar", aria_label="Replay controls",
    )
    nav_games = tag(
        "p",
        tag("a", "← previous game", href=match_url_placeholder(previous, keep),
            data_game=previous + 1)
        if previous is not None else "",
        tag("a", "next game →", href=match_url_placeholder(following, keep),
            data_game=following + 1)
        if following is not None else "",
        class_="game-nav")
    return tag(
        "section",
        tag("div", tag("h2", f"Replay of game {game + 1}", id="viewer-title"), nav_games,
            class_="viewer-head"),
        tag("p", "", class_="players", id="players"),
        controls,
        tag("div",
            tag("label", "Step", for_="step-slider", class_="sr-only"),
            Html('<input type="range" id="step-slider" min="0" max="0" value="0">'),
            tag("output", "", id="step-counter", for_="step-slider"),
            class_="scrubber"),
        tag("div", "", class_="board", id="board", role="img", aria_label="Track"),
        tag("div",
            tag("div", "", class_="seat-panel", id="seat-0", data_seat="0"),
            tag("div", "", class_="action", id="action", role="group",
                aria_label="What happens"),
            tag("div", "", class_="seat-panel", id="seat-1", data_seat="1"),
            class_="table"),
        tag("p", "", id="step-text", class_="step-text", aria_live="polite"),
        tag("details",
            tag("summary", "Rounds"),
            tag("ol", "", id="round-list", class_="round-list"),
            class_="rounds", open=True),
        tag("p", tag("kbd", "←"), " ", tag("kbd", "→"), " step · ", tag("kbd", "PgUp"), " ",
            tag("kbd", "PgDn"), " round · ", tag("kbd", "Home"), " ", tag("kbd", "End"),
            " · ", tag("kbd", "Space"), " play", class_="hint keys"),
        class_="panel viewer", id="viewer", aria_labelledby="viewer-title",
        data_game=game, tabindex="-1",
    )


def match_url_placeholder(game: int, keep: str = "") -> str:
    """A relative link to another game (0-based index) of the same match, keeping the page's
    path (and ``keep``, a query); the URL numbers games from 1."""
    return f"?{keep + '&' if keep else ''}game={game + 1}#viewer"
