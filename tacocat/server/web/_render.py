"""The HTML pages and the ladder page's live fragments.

Everything dynamic goes through :mod:`._html` (escaped unless built here). The ladder page is
made of fragments (:func:`ladder_fragments`): the same functions render them into the first
page and into every live update, so a page that updates and a page that reloads show the
same thing.
"""

from __future__ import annotations

import hashlib
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from urllib.parse import quote

from tacocat.arena import LogEntry, MatchStatus, Standing
from tacocat.arena.results import GameResult
from tacocat.engine import Reason

from ._data import (
    CROSSTABLE_LIMIT,
    Cell,
    LadderSnapshot,
    LadderSummary,
    MatchView,
    crosstable,
    ranked,
    side_version,
    split_version,
)
from ._html import Html, attrs, esc, join, json_script, tag

_PACKAGE = resources.files(__package__)
_PAGE = Template((_PACKAGE / "templates" / "page.html").read_text(encoding="utf-8"))

FAVICON = (
    "data:image/svg+xml," + quote(
        '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32">'
        '<path d="M4 30V8l6 6h12l6-6v22z" fill="#e8590c"/>'
        '<circle cx="12" cy="20" r="2" fill="#fff"/><circle cx="20" cy="20" r="2" '
        'fill="#fff"/></svg>', safe=":/=\" ")
)

NOTHING = Html("")

CHART_SERIES = 10
"""Versions drawn in the rating chart (the best ranked); more would be unreadable."""
CHART_POINTS = 240
"""Most points per line in the chart (a long history is sampled evenly)."""


class Static:
    """URLs of the static files, with a content hash so browsers never use a stale copy."""

    def __init__(self) -> None:
        self._urls: dict[str, str] = {}
        folder = _PACKAGE / "static"
        for entry in folder.iterdir():
            if entry.is_file():
                digest = hashlib.sha256(entry.read_bytes()).hexdigest()[:12]
                self._urls[entry.name] = f"/static/{entry.name}?v={digest}"

    def url(self, name: str) -> str:
        return self._urls[name]


@dataclass(frozen=True)
class Page:
    title: str
    content: Html
    scripts: Sequence[str] = ()
    main_attrs: Html = NOTHING
    head_data: Html = NOTHING


def page(static: Static, p: Page) -> str:
    scripts = join(Html(f'<script src="{esc(static.url(s))}" defer></script>')
                   for s in p.scripts)
    return _PAGE.substitute(
        title=esc(f"{p.title} · Tacocat Arena"), css=esc(static.url("style.css")),
        favicon=esc(FAVICON), main_attrs=p.main_attrs, content=p.content,
        scripts=Html(p.head_data + scripts),
    )


# -- formatting ---------------------------------------------------------------------------------


def fmt_int(value: float | None) -> str:
    return "–" if value is None else f"{round(value):d}"


def fmt_pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.0f}%"


def fmt_time(ts: float | None) -> Html:
    if ts is None:
        return Html("–")
    stamp = time.gmtime(ts)
    iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", stamp)
    return tag("time", time.strftime("%Y-%m-%d %H:%M UTC", stamp), datetime=iso)


def version_label(version: str) -> Html:
    """``name@N`` with the owner in a muted prefix: ``owner/`` ``name`` ``@N``."""
    owner, name, number = split_version(version)
    return tag("span",
               tag("span", f"{owner}/", class_="owner-prefix") if owner else "",
               tag("span", name, class_="bot-name"),
               tag("span", f"@{number}", class_="ver") if number else "",
               class_="vid", title=version)


def ladder_url(name: str) -> str:
    return f"/ladders/{quote(name, safe='')}"


def match_url(match_id: str, game: int | None = None) -> str:
    base = f"/matches/{quote(match_id, safe='')}"
    return base if game is None else f"{base}?game={game}#viewer"


def breadcrumbs(*items: tuple[str, str | None]) -> Html:
    parts = []
    for label, href in items:
        if href is None:
            parts.append(tag("li", tag("span", label, aria_current="page")))
        else:
            parts.append(tag("li", tag("a", label, href=href)))
    return tag("nav", tag("ol", *parts), class_="crumbs", aria_label="Breadcrumb")


def progress(done: int, target: int, label: str) -> Html:
    share = done / target if target else 0.0
    return tag(
        "div",
        tag("progress", fmt_pct(share), value=done, max=max(target, 1), aria_label=label),
        tag("span", f"{done:,} of {target:,} games" if target else "no pairings yet",
            class_="progress-text"),
        class_="progress",
    )


def error_page(static: Static, status: int, title: str, message: str) -> str:
    content = join([
        tag("h1", title),
        tag("p", message, class_="lead"),
        tag("p", tag("a", "Back to the ladders", href="/")),
    ])
    return page(static, Page(f"{status} {title}", Html(tag("section", content,
                                                              class_="panel error"))))


# -- home ---------------------------------------------------------------------------------------


def home_page(static: Static, ladders: Sequence[LadderSummary]) -> str:
    if not ladders:
        body = tag("p", "No ladders yet. An admin creates one through the arena API; bots "
                        "join it, and this page lists it.", class_="empty")
    else:
        cards = []
        for item in ladders:
            lad, st = item.ladder, item.status
            state = ("complete" if st.complete else
                     "running" if st.matches_pending else "waiting")
            cards.append(tag(
                "li",
                tag("h2", tag("a", lad.name, href=ladder_url(lad.name))),
                tag("span", state, class_=f"badge {state}"),
                tag("dl", *(
                    tag("div", tag("dt", k), tag("dd", v)) for k, v in (
                        ("Bots", f"{st.entries}"), ("Playing", f"{st.playing}"),
                        ("Matches", f"{st.matches_recorded:,}"),
                        ("Pending", f"{st.matches_pending:,}"),
                        ("Rules", lad.ruleset.name),
                    )
                ), class_="facts"),
                progress(st.games_toward_target, st.games_target,
                         f"Round robin progress of {lad.name}"),
                tag("ol", *(tag("li", version_label(row.version), " ",
                                tag("span", fmt_int(row.rating), class_="muted"))
                            for row in item.leaders),
                    class_="leaders", aria_label=f"Leaders of {lad.name}")
                if item.leaders else "",
                class_="ladder-card", data_ladder=lad.name,
            ))
        body = tag("ul", *cards, class_="ladder-list")
    content = join([
        tag("h1", "Ladders"),
        tag("p", "Round-robin ladders of Tacocat Spelled Backwards bots. Open one for live "
                 "standings, ratings over time, the crosstable and replays.", class_="lead"),
        body,
    ])
    return page(static, Page("Ladders", content))


# -- the ladder page ------------------------------------------------------------------------


FRAGMENTS = ("status", "standings", "chart", "crosstable", "recent")


def ladder_fragments(snap: LadderSnapshot) -> dict[str, str]:
    return {
        "status": status_fragment(snap),
        "standings": standings_fragment(snap),
        "chart": chart_fragment(snap),
        "crosstable": crosstable_fragment(snap),
        "recent": recent_fragment(snap.recent),
    }


def ladder_page(static: Static, snap: LadderSnapshot, events_url: str) -> str:
    lad = snap.ladder
    frags = ladder_fragments(snap)

    def section(key: str, title: str, intro: str = "") -> Html:
        return tag(
            "section",
            tag("h2", title, id=f"{key}-title"),
            tag("p", intro, class_="hint") if intro else "",
            tag("div", Html(frags[key]), id=key, data_fragment=key),
            class_=f"panel {key}-panel", aria_labelledby=f"{key}-title",
        )

    header = join([
        breadcrumbs(("Ladders", "/"), (lad.name, None)),
        tag("div",
            tag("h1", lad.name),
            tag("p", tag("span", "", class_="dot", aria_hidden="true"),
                tag("span", "connecting…", id="live-text"),
                class_="live", id="live", role="status", data_state="connecting"),
            class_="title-row"),
        tag("p", f"{lad.ruleset.name} rules · {lad.games_per_pairing} games per pairing in "
                 f"matches of {lad.games_per_match} · {lad.decision_seconds:g} s per decision",
            class_="lead"),
    ])
    content = join([
        header,
        tag("div", Html(frags["status"]), id="status", data_fragment="status",
            class_="status-strip"),
        section("standings", "Standings",
                "Rating: maximum-likelihood fit on the Elo scale; the bar is its 95% "
                "interval. Elo: the live per-game rating. W/T/L count rated games."),
        section("chart", "Rating over time",
                "Live Elo of each version after every recorded match."),
        section("crosstable", "Crosstable",
                "Row's score against column (ties count half) and the likelihood of "
                "superiority (LOS) from their games."),
        section("recent", "Recent matches"),
    ])
    main_attrs = attrs(data_ladder=lad.name, data_version=snap.version,
                       data_events=events_url)
    return page(static, Page(lad.name, content, scripts=("ladder.js",),
                             main_attrs=Html(main_attrs)))


def status_fragment(snap: LadderSnapshot) -> str:
    st = snap.status
    facts = (
        ("Bots", f"{st.entries}"), ("Playing", f"{st.playing}"),
        ("Matches recorded", f"{st.matches_recorded:,}"),
        ("Pending", f"{st.matches_pending:,}"),
        ("Games played", f"{st.games_played:,}"),
        ("Rounds done", f"{st.rounds_completed} of {st.rounds}"),
    )
    return join([
        tag("dl", *(tag("div", tag("dt", k), tag("dd", v)) for k, v in facts), class_="facts"),
        progress(st.games_toward_target, st.games_target, "Round robin progress"),
    ])


def _ci_bar(row: Standing, lo: float, hi: float) -> Html:
    if row.rating is None or row.low is None or row.high is None or hi <= lo:
        return Html("")

    def x(value: float) -> float:
        return round(100 * (value - lo) / (hi - lo), 2)

    left, right, mid = x(row.low), x(row.high), x(row.rating)
    return Html(
        '<svg class="ci" viewBox="0 0 100 10" preserveAspectRatio="none" aria-hidden="true" '
        'focusable="false">'
        f'<rect class="ci-track" x="0" y="4.5" width="100" height="1"/>'
        f'<rect class="ci-range" x="{left}" y="2" width="{max(right - left, 0.5)}" '
        'height="6" rx="1"/>'
        f'<rect class="ci-point" x="{max(mid - 0.6, 0)}" y="0" width="1.2" height="10"/>'
        "</svg>"
    )


def standings_fragment(snap: LadderSnapshot) -> str:
    rows = ranked(snap.board)
    if not rows:
        return tag("p", "No bot plays on this ladder yet.", class_="empty")
    rated = [r for _, r in rows if r.low is not None and r.high is not None]
    lo = min((r.low for r in rated if r.low is not None), default=0.0)
    hi = max((r.high for r in rated if r.high is not None), default=0.0)
    pad = max((hi - lo) * 0.04, 5.0)
    lo, hi = lo - pad, hi + pad
    body = []
    for rank, row in rows:
        owner, name, number = split_version(row.version)
        forfeits = join(tag("span", f"{fault} ×{n}", class_="chip")
                        for fault, n in row.forfeits.items()) or Html("–")
        rating = (
            tag("span", "unrated", class_="muted") if row.rating is None else join([
                tag("span", fmt_int(row.rating), class_="num"),
                tag("span", f"±{fmt_int(row.margin)}", class_="pm",
                    title=f"95% interval {fmt_int(row.low)} to {fmt_int(row.high)}"),
            ]))
        body.append(tag(
            "tr",
            tag("td", "–" if rank is None else rank, class_="rank"),
            tag("th", tag("span", name, class_="bot-name"),
                tag("span", f"@{number}", class_="ver-inline") if number else "",
                tag("span", "retired", class_="badge retired") if not row.active else "",
                scope="row", class_="bot"),
            tag("td", number, class_="ver"),
            tag("td", owner, class_="owner"),
            tag("td", tag("div", rating, class_="rating"), _ci_bar(row, lo, hi),
                class_="rating-cell"),
            tag("td", fmt_int(row.elo), class_="num elo"),
            tag("td", f"{row.games:,}", class_="num games"),
            tag("td", f"{row.wins:,}", class_="num w"),
            tag("td", f"{row.ties:,}", class_="num t"),
            tag("td", f"{row.losses:,}", class_="num l"),
            tag("td", forfeits, class_="forfeits"),
            data_version=row.version, class_=None if row.active else "retired",
        ))
    head = tag("tr", *(tag("th", label, scope="col", class_=cls, title=title)
                       for label, cls, title in (
                           ("#", "rank", "Rank by rating"), ("Bot", "bot", None),
                           ("Ver.", "ver", "Version"), ("Owner", "owner", None),
                           ("Rating ± 95%", "rating-cell", None),
                           ("Elo", "num elo", "Live Elo"), ("Games", "num games", "Rated games"),
                           ("W", "num w", "Wins"), ("T", "num t", "Ties"),
                           ("L", "num l", "Losses"),
                           ("Forfeits", "forfeits", "Games forfeited, by reason"))))
    table = tag("table", tag("caption", f"Standings after {snap.board.version:,} matches",
                             class_="sr-only"),
                tag("thead", head), tag("tbody", *body), class_="standings")
    return tag("div", table, class_="table-wrap", tabindex="0", role="region",
               aria_label="Standings")


def _cell(cell: Cell | None, row: str, col: str) -> Html:
    if row == col:
        return tag("td", "", class_="self", aria_label="same version")
    if cell is None or cell.score is None:
        return tag("td", "·", class_="none", title=f"{row} has not met {col}")
    bucket = min(10, max(0, round(cell.score * 10)))
    title = (f"{row} against {col}: {cell.wins} won, {cell.ties} tied, {cell.losses} lost; "
             f"likelihood of superiority {fmt_pct(cell.los)}")
    return tag("td", tag("span", fmt_pct(cell.score), class_="score"),
               tag("span", f"LOS {fmt_pct(cell.los)}", class_="los"),
               class_=f"cell sc{bucket}", title=title)


def crosstable_fragment(snap: LadderSnapshot) -> str:
    order, matrix = crosstable(snap.board, CROSSTABLE_LIMIT)
    if len(order) < 2:
        return tag("p", "The crosstable fills once two versions have met.", class_="empty")
    head = tag("tr", tag("td", ""), *(
        tag("th", tag("abbr", str(i + 1), title=v), scope="col") for i, v in enumerate(order)))
    body = []
    for i, (version, line) in enumerate(zip(order, matrix, strict=True)):
        body.append(tag("tr", tag("th", tag("span", f"{i + 1}", class_="idx"),
                                  version_label(version), scope="row"),
                        *(_cell(c, version, order[j]) for j, c in enumerate(line))))
    more = len(snap.board.standings) - len(order)
    note = tag("p", f"The {len(order)} best ranked versions; {more} more in the JSON API.",
               class_="hint") if more > 0 else ""
    table = tag("table", tag("caption", "Pairwise scores, row against column",
                             class_="sr-only"),
                tag("thead", head), tag("tbody", *body), class_="crosstable")
    return join([tag("div", table, class_="table-wrap", tabindex="0", role="region",
                     aria_label="Crosstable"), note])


def _sample(points: Sequence[tuple[int, float]], limit: int) -> list[tuple[int, float]]:
    if len(points) <= limit:
        return list(points)
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def chart_fragment(snap: LadderSnapshot) -> str:
    history = snap.history
    initial = 1500.0
    order = [row.version for row in snap.board.standings if row.version in history.series]
    order = order[:CHART_SERIES]
    if not order:
        return tag("p", "The chart starts with the first recorded match.", class_="empty")
    lines: dict[str, list[tuple[int, float]]] = {}
    for version in order:
        points = history.series[version]
        first = points[0].seq - 1
        lines[version] = _sample([(first, initial), *((p.seq, p.elo) for p in points)],
                                 CHART_POINTS)
    x_max = max(history.version, 1)
    values = [elo for line in lines.values() for _, elo in line]
    lo = math.floor(min(values) / 50) * 50
    hi = math.ceil(max(values) / 50) * 50
    if hi - lo < 100:
        lo, hi = lo - 50, hi + 50
    width, height = 960.0, 300.0
    left, right, top, bottom = 48.0, 12.0, 12.0, 30.0

    def px(seq: float) -> float:
        return round(left + (width - left - right) * seq / x_max, 1)

    def py(elo: float) -> float:
        return round(top + (height - top - bottom) * (hi - elo) / (hi - lo), 1)

    parts: list[str] = []
    step = _nice_step(hi - lo, 6)
    tick = math.ceil(lo / step) * step
    while tick <= hi:
        y = py(tick)
        parts.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y}" y2="{y}"/>'
                     f'<text class="axis" x="{left - 6}" y="{y + 4}" text-anchor="end">'
                     f"{tick:g}</text>")
        tick += step
    xstep = max(1, _nice_step(x_max, 6))
    tick = 0
    while tick <= x_max:
        x = px(tick)
        parts.append(f'<line class="grid minor" x1="{x}" x2="{x}" y1="{top}" '
                     f'y2="{height - bottom}"/><text class="axis" x="{x}" '
                     f'y="{height - bottom + 18}" text-anchor="middle">{tick}</text>')
        tick += xstep
    for i, version in enumerate(order):
        coords = " ".join(f"{px(s)},{py(e)}" for s, e in lines[version])
        last_s, last_e = lines[version][-1]
        parts.append(
            f'<g class="series s{i}"><title>{esc(version)}: {fmt_int(last_e)}</title>'
            f'<polyline points="{coords}"/>'
            f'<circle cx="{px(last_s)}" cy="{py(last_e)}" r="3"/></g>')
    label = (f"Live Elo over the ladder's {history.version:,} recorded matches for the "
             f"{len(order)} best ranked versions")
    svg = Html(
        f'<svg class="chart" viewBox="0 0 {width:g} {height:g}" role="img" '
        f'aria-label="{esc(label)}">'
        + "".join(parts)
        + f'<text class="axis" x="{width - right}" y="{height - 2}" text-anchor="end">'
          "matches recorded</text></svg>"
    )
    legend = tag("ul", *(tag("li", tag("span", "", class_=f"swatch s{i}", aria_hidden="true"),
                                tag("span", version_label(v)),
                                tag("span", fmt_int(lines[v][-1][1]), class_="muted"))
                         for i, v in enumerate(order)), class_="legend")
    return join([svg, legend])


def _nice_step(span: float, count: int) -> int:
    raw = max(span / count, 1.0)
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * magnitude:
            return int(factor * magnitude)
    return int(10 * magnitude)


def recent_fragment(recent: Sequence[LogEntry]) -> str:
    if not recent:
        return tag("p", "No match recorded yet.", class_="empty")
    rows = []
    for entry in recent:
        rows.append(tag(
            "tr",
            tag("td", tag("a", f"#{entry.seq}", href=match_url(entry.match),
                          aria_label=f"match {entry.seq}: {entry.a} against {entry.b}"),
                class_="num"),
            tag("td", version_label(entry.a), class_="side-a"),
            tag("td", tag("span", f"{entry.wins}–{entry.ties}–{entry.losses}", class_="wtl"),
                class_="score", title="A's wins–ties–losses"),
            tag("td", version_label(entry.b), class_="side-b"),
            tag("td", fmt_time(entry.recorded_at), class_="when"),
            data_match=entry.match,
        ))
    head = tag("tr", *(tag("th", h, scope="col") for h in ("#", "A", "W–T–L", "B", "Recorded")))
    return tag("div", tag("table", tag("caption", "Recent matches, newest first",
                                       class_="sr-only"),
                          tag("thead", head), tag("tbody", *rows), class_="recent"),
               class_="table-wrap", tabindex="0", role="region", aria_label="Recent matches")


# -- the match page -------------------------------------------------------------------------


def _game_outcome(view: MatchView, game: GameResult) -> Html:
    match = view.match
    if game.reason is Reason.FORFEIT and game.offender is not None:
        fault = game.fault.value if game.fault is not None else "forfeit"
        return join(["forfeit: ", tag("span", fault, class_="chip"), " by ",
                     version_label(side_version(match, game.offender))])
    return esc({"goal": "goal", "round_limit": "round limit", "aborted": "aborted"}.get(
        game.reason.value, game.reason.value))


def match_page(static: Static, view: MatchView, game: int | None,
               game_data: Mapping[str, object] | None, problem: str | None) -> str:
    match, lad = view.match, view.ladder
    result = match.result
    crumbs = breadcrumbs(("Ladders", "/"), (lad.name, ladder_url(lad.name)),
                         (f"Match {match.id}", None))
    if result is not None:
        score = tag("p", version_label(match.a),
                    tag("span", f"{result.wins}–{result.ties}–{result.losses}",
                        class_="big-score", title="A's wins–ties–losses"),
                    version_label(match.b), class_="versus")
    else:
        score = tag("p", version_label(match.a), tag("span", "vs", class_="big-score"),
                    version_label(match.b), class_="versus")
    facts = [("Ladder round", f"{match.round}"), ("Games", f"{match.games}"),
             ("Status", match.status.value)]
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
                link = tag("a", "Replay", href=match_url(match.id, i),
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
        viewer = viewer_skeleton(game, len(view.records))
        data = json_script("replay-data", game_data)
        scripts = ("replay.js",)
    content = join([header, games_html, viewer])
    return page(static, Page(f"Match {match.id}", content, scripts=scripts, head_data=data))


_ICONS = {
    "first": "M3 3h2v10H3zM13 3v10L6 8z",
    "rewind": "M8 3v10L2 8zM14 3v10L8 8z",
    "prev": "M11 3v10L4 8z",
    "next": "M5 3v10l7-5z",
    "forward": "M2 3v10l6-5zM8 3v10l6-5z",
    "last": "M11 3h2v10h-2zM3 3v10l7-5z",
}


def viewer_skeleton(game: int, games: int) -> Html:
    """The replay viewer's frame; ``replay.js`` fills it from the JSON in the page."""

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
        tag("a", "← previous game", href=match_url_placeholder(game - 1), data_game=game - 1)
        if game > 0 else "",
        tag("a", "next game →", href=match_url_placeholder(game + 1), data_game=game + 1)
        if game + 1 < games else "",
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


def match_url_placeholder(game: int) -> str:
    """A relative link to another game of the same match (keeps the page's path)."""
    return f"?game={game}#viewer"
