"""The ladder list (the home page) and one ladder's page with its live fragments.

The ladder page is made of fragments (:func:`ladder_fragments`): the same functions render
them into the first page and into every live update, so a page that updates and a page that
reloads show the same thing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from tacocat.arena import LogEntry, Standing

from ._chart import chart_fragment
from ._data import (
    CROSSTABLE_LIMIT,
    STANDINGS_PER_PAGE,
    Cell,
    LadderSnapshot,
    LadderSummary,
    LadderView,
    crosstable,
    ranked,
    split_version,
)
from ._html import Html, attrs, esc, join, tag
from ._layout import (
    Page,
    Static,
    bot_link,
    bot_url,
    breadcrumbs,
    fmt_int,
    fmt_pct,
    fmt_time,
    ladder_url,
    match_url,
    page,
    progress,
    version_label,
)
from ._live_now import live_fragment


def home_page(static: Static, ladders: Sequence[LadderSummary]) -> str:
    if not ladders:
        body = tag("p", "No ladders yet. An admin creates one through the arena API; bots "
                        "join it, and this page lists it.", class_="empty")
    else:
        cards = []
        for item in ladders:
            lad, st = item.ladder, item.status
            state = ("waiting for opponents" if st.waiting_for_opponents else
                     "complete" if st.complete else
                     "running" if st.matches_pending else "waiting")
            cards.append(tag(
                "li",
                tag("h2", tag("a", lad.name, href=ladder_url(lad.name))),
                tag("span", state, class_=f"badge {state.split(maxsplit=1)[0]}"),
                tag("dl", *(
                    tag("div", tag("dt", k), tag("dd", v)) for k, v in (
                        ("Bots playing", f"{st.playing} of {st.entries}"),
                        ("Matches", f"{st.matches_recorded:,}"),
                        ("Pending", f"{st.matches_pending:,}"),
                        ("Rules", lad.ruleset.name),
                    )
                ), class_="facts"),
                progress(st.games_toward_target, st.games_target,
                         f"Round robin progress of {lad.name}",
                         "round-robin games of the versions playing now"),
                tag("ol", *(tag("li", bot_link(row.version), " ",
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


FRAGMENTS = ("status", "livenow", "standings", "chart", "crosstable", "recent")


def ladder_fragments(snap: LadderSnapshot) -> dict[str, str]:
    return {
        "status": status_fragment(snap),
        "livenow": live_fragment(snap.live),
        "standings": standings_fragment(snap),
        "chart": chart_fragment(snap),
        "crosstable": crosstable_fragment(snap),
        "recent": recent_fragment(snap.recent, snap.status.matches_recorded, snap.ladder.name),
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
    retired = sum(1 for row in snap.board.standings if not row.active)
    toggle = tag("p", tag("label", Html('<input type="checkbox" id="show-retired"> '),
                          f"show retired versions ({retired})"),
                 class_="retired-toggle hint") if retired else ""
    content = join([
        header,
        toggle,
        tag("div", Html(frags["status"]), id="status", data_fragment="status",
            class_="status-strip"),
        section("livenow", "Live now",
                "Matches being played at this moment: open one to watch it game by game."),
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
                       data_events=events_url, data_retired="hidden")
    return page(static, Page(lad.name, content, scripts=("ladder.js",),
                             main_attrs=Html(main_attrs)))


def status_fragment(snap: LadderSnapshot) -> str:
    st = snap.status
    facts: tuple[tuple[str, str], ...] = (
        ("Bots playing", f"{st.playing} of {st.entries}"),
        ("Matches recorded", f"{st.matches_recorded:,}"),
        ("Pending", f"{st.matches_pending:,}"),
        ("Games, all versions", f"{st.games_played:,}"),
        ("Rounds done", f"{st.rounds_completed} of {st.rounds}"),
    )
    idle = st.entries - st.playing
    # A bot plays once a version of it passed its smoke game: joined bots with none (still
    # pending, or rejected) are counted apart, never as playing.
    not_playing = tag("p", f"{idle} joined bot{'s' if idle != 1 else ''} without an active "
                           "version (pending its smoke game, or rejected) "
                           f"{'do' if idle != 1 else 'does'} not play.",
                      class_="hint not-playing") if idle else ""
    if st.matches_aborted:  # given up after failing too often: each match's page says why
        facts += (("Aborted (not rated)", f"{st.matches_aborted:,}"),)
    waiting = tag("p", "Waiting for opponents: nothing is played or rated until two bots "
                       "play here.", class_="waiting hint") if st.waiting_for_opponents else ""
    return join([
        tag("dl", *(tag("div", tag("dt", k), tag("dd", v)) for k, v in facts), class_="facts"),
        # The bar counts the round robin of the versions playing now; the games above also
        # count retired versions' games and games past a pairing's target.
        progress(st.games_toward_target, st.games_target, "Round robin progress",
                 "round-robin games of the versions playing now"),
        not_playing, waiting,
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


def _pager(what: str, current: int, pages: int, total: int, per_page: int,
           view_of: Callable[[int], LadderView]) -> Html:
    """Links to the pages of a big table (nothing when it fits on one)."""
    if pages <= 1:
        return Html("")
    links = []
    for number in range(1, pages + 1):
        first, last = (number - 1) * per_page + 1, min(number * per_page, total)
        label = f"{first}–{last}"
        links.append(tag("span", label, class_="current", aria_current="page")
                     if number == current else
                     tag("a", label, href=view_of(number).query or "?",
                         aria_label=f"{what} ranks {label}"))
    return tag("nav", tag("span", f"{what}, by rank:", class_="muted"), *links,
               class_="pager", aria_label=f"{what} pages")


def _pages(total: int, per_page: int) -> int:
    return max(1, -(-total // per_page))


def standings_fragment(snap: LadderSnapshot) -> str:
    everyone = ranked(snap.board)
    if not everyone:
        return tag("p", "No bot plays on this ladder yet.", class_="empty")
    view = snap.view
    pages = _pages(len(everyone), STANDINGS_PER_PAGE)
    page_number = min(view.page, pages)
    rows = everyone[(page_number - 1) * STANDINGS_PER_PAGE:page_number * STANDINGS_PER_PAGE]
    pager = _pager("Standings", page_number, pages, len(everyone), STANDINGS_PER_PAGE,
                   lambda n: replace(view, page=n))
    # One scale for every page, so intervals compare across pages.
    rated = [r for _, r in everyone if r.low is not None and r.high is not None]
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
            tag("th", tag("a", tag("span", name, class_="bot-name"), class_="bot-link",
                          href=bot_url(owner, name)) if owner else tag("span", name,
                                                                        class_="bot-name"),
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
    return join([tag("div", table, class_="table-wrap", tabindex="0", role="region",
                     aria_label="Standings"), pager])


def _cell(cell: Cell | None, row: str, col: str, retired: str = "") -> Html:
    """One crosstable cell. ``row`` and ``col`` come escaped (:class:`Html`): a block has
    576 cells, and building them with :func:`tag` was most of the page's render time.
    ``retired`` is `` retired`` in a retired version's column (hidden with its row)."""
    if row == col:
        return Html(f'<td class="self{retired}" aria-label="same version"></td>')
    if cell is None or cell.score is None:
        return Html(f'<td class="none{retired}" title="{row} has not met {col}">·</td>')
    bucket = min(10, max(0, round(cell.score * 10)))
    score, los = fmt_pct(cell.score), fmt_pct(cell.los)
    title = (f"{row} against {col}: {cell.wins} won, {cell.ties} tied, {cell.losses} lost; "
             f"likelihood of superiority {los}")
    # Numbers and percentages need no escaping; the names are escaped already.
    return Html(f'<td class="cell sc{bucket}{retired}" title="{title}"><span class="score">'
                f'{score}</span><span class="los">LOS {los}</span></td>')


def crosstable_fragment(snap: LadderSnapshot) -> str:
    view = snap.view
    total = len(snap.board.standings)
    blocks = _pages(total, CROSSTABLE_LIMIT)
    block = min(view.block, blocks)
    offset = (block - 1) * CROSSTABLE_LIMIT
    order, matrix = crosstable(snap.board, CROSSTABLE_LIMIT, offset=offset)
    if total < 2:
        return tag("p", "The crosstable fills once two versions have met.", class_="empty")
    # Retired versions are marked as in the standings: hidden, row and column, until the
    # page's "show retired versions" is ticked.
    retired = {row.version for row in snap.board.standings if not row.active}
    marks = [" retired" if v in retired else "" for v in order]
    head = tag("tr", tag("td", ""), *(
        tag("th", tag("abbr", str(offset + i + 1), title=v), scope="col",
            class_=marks[i].strip() or None)
        for i, v in enumerate(order)))
    body = []
    names = [esc(v) for v in order]
    for i, (version, line) in enumerate(zip(order, matrix, strict=True)):
        body.append(tag("tr", tag("th", tag("span", f"{offset + i + 1}", class_="idx"),
                                  version_label(version), scope="row"),
                        *(_cell(c, names[i], names[j], marks[j]) for j, c in enumerate(line)),
                        class_=marks[i].strip() or None, data_version=version))
    # A block shows versions of neighbouring ranks against each other: the games that
    # decide the order. Every pair is in the JSON API.
    pager = _pager("Crosstable", block, blocks, total, CROSSTABLE_LIMIT,
                   lambda n: replace(view, block=n))
    table = tag("table", tag("caption", "Pairwise scores, row against column",
                             class_="sr-only"),
                tag("thead", head), tag("tbody", *body), class_="crosstable")
    return join([tag("div", table, class_="table-wrap", tabindex="0", role="region",
                     aria_label="Crosstable"), pager])


def recent_fragment(recent: Sequence[LogEntry], total: int = 0, ladder: str = "") -> str:
    """The latest matches; when they are not all of them, a line saying so and where the
    rest are."""
    if not recent:
        return tag("p", "No match recorded yet.", class_="empty")
    more = tag("p", f"The latest {len(recent):,} of {total:,} matches; all of them: ",
               tag("code", f"tacocat match --ladder {ladder} --count {total}"),
               class_="capped") if total > len(recent) else ""
    rows = []
    for entry in recent:
        rows.append(tag(
            "tr",
            tag("td", tag("a", f"#{entry.seq}", href=match_url(entry.match),
                          aria_label=f"match {entry.seq}: {entry.a} against {entry.b}"),
                class_="num"),
            tag("td", bot_link(entry.a), class_="side-a"),
            tag("td", tag("span", f"{entry.wins}–{entry.ties}–{entry.losses}", class_="wtl"),
                class_="score", title="A's wins–ties–losses"),
            tag("td", bot_link(entry.b), class_="side-b"),
            tag("td", fmt_time(entry.recorded_at), class_="when"),
            data_match=entry.match,
        ))
    head = tag("tr", *(tag("th", h, scope="col") for h in ("#", "A", "W–T–L", "B", "Recorded")))
    return tag("div", tag("table", tag("caption", "Recent matches, newest first",
                                       class_="sr-only"),
                          tag("thead", head), tag("tbody", *rows), class_="recent"),
               more, class_="table-wrap", tabindex="0", role="region",
               aria_label="Recent matches")
