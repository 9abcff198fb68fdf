"""Bot pages and user pages: a bot's versions with their ratings, its recent matches and its
head-to-head record; a user's bots.

The data is read in one worker-thread call (:func:`load_bot_page`, :func:`load_user_page`)
from the ladders the bot joined; the pages are rendered like the others (escaped by
:mod:`._html`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import quote

from tacocat.arena import Arena, BotInfo, BotVersion, LogEntry, Standing
from tacocat.arena.ids import version_id
from tacocat.arena.trials import Trial, Trials

from ._data import log_json, standing_json
from ._html import Html, attrs, join, tag
from ._layout import (
    Page,
    Static,
    bot_link,
    breadcrumbs,
    fmt_int,
    fmt_pct,
    fmt_time,
    ladder_url,
    match_url,
    page,
    version_label,
)
from ._trials import trials_section

RECENT_BOT_MATCHES = 20
SCANNED_MATCHES = 500
"""How far back in each ladder's results log the bot's recent matches are looked for."""


def bot_url(bot: str) -> str:
    owner, _, name = bot.partition("/")
    return f"/bots/{quote(owner, safe='')}/{quote(name, safe='')}"


def user_url(name: str) -> str:
    return f"/users/{quote(name, safe='')}"


@dataclass(frozen=True)
class HeadToHead:
    ladder: str
    version: str  # the bot's version
    opponent: str  # the other bot's version
    games: int
    wins: int
    ties: int
    losses: int


@dataclass(frozen=True)
class BotPage:
    bot: BotInfo
    versions: tuple[BotVersion, ...]
    ratings: tuple[tuple[str, Standing], ...]  # (ladder, standing of one of its versions)
    recent: tuple[tuple[str, LogEntry], ...]  # (ladder, match), newest first
    head_to_head: tuple[HeadToHead, ...]
    trials: tuple[Trial, ...] = ()
    """Unrated SPRT tests with one of its versions on either side, newest first."""


def load_bot_page(arena: Arena, bot_id: str) -> BotPage:
    """Raises :class:`~tacocat.arena.NotFound` for an unknown bot."""
    bot = arena.bots.get(bot_id)
    versions = tuple(reversed(arena.bots.versions(bot.id)))
    mine = {v.id for v in versions}
    ratings: list[tuple[str, Standing]] = []
    recent: list[tuple[str, LogEntry]] = []
    h2h: list[HeadToHead] = []
    for ladder in arena.ladders.of_bot(bot.id):
        board = arena.ladders.leaderboard(ladder)
        ratings += [(ladder, s) for s in board.standings if s.version in mine]
        for pair in board.pairs:
            for me, other in ((pair.a, pair.b), (pair.b, pair.a)):
                if me in mine and other not in mine:
                    seen = board.pair(me, other)
                    if seen is not None:
                        h2h.append(HeadToHead(ladder, me, other, seen.games, seen.wins,
                                              seen.ties, seen.losses))
        recent += [(ladder, e) for e in arena.ladders.recent_matches(ladder, SCANNED_MATCHES)
                   if e.a in mine or e.b in mine]
    recent.sort(key=lambda item: item[1].recorded_at, reverse=True)
    return BotPage(bot, versions, tuple(ratings), tuple(recent[:RECENT_BOT_MATCHES]),
                   tuple(sorted(h2h, key=lambda h: (h.ladder, -h.games))),
                   tuple(Trials(arena).find(bot=bot.id, count=RECENT_BOT_MATCHES)))


@dataclass(frozen=True)
class UserPage:
    name: str
    bots: tuple[BotInfo, ...]


def load_user_page(arena: Arena, name: str) -> UserPage:
    """Raises :class:`~tacocat.arena.NotFound` for an unknown user."""
    user = arena.users.get(name)
    return UserPage(user.name, tuple(arena.bots.all(user.name)))


def bot_json(data: BotPage) -> dict[str, Any]:
    """The bot page's data, for ``/api/bots/OWNER/NAME``."""
    bot = data.bot
    return {
        "id": bot.id, "owner": bot.owner, "name": bot.name, "created_at": bot.created_at,
        "current": bot.current,
        "versions": [{"id": v.id, "number": v.number, "status": v.status.value,
                      "reason": v.reason, "created_at": v.created_at, "kind": v.kind,
                      "size": v.size, "sha256": v.sha256} for v in data.versions],
        "ratings": [{"ladder": ladder, **standing_json(None, s)} for ladder, s in data.ratings],
        "recent": [{"ladder": ladder, **log_json(e)} for ladder, e in data.recent],
        "head_to_head": [asdict(h) for h in data.head_to_head],
        "trials": [{"id": t.id, "candidate": t.candidate, "baseline": t.baseline,
                    "status": t.status.value} for t in data.trials],
    }


def user_json(data: UserPage) -> dict[str, Any]:
    return {"name": data.name, "bots": [asdict(b) for b in data.bots]}


def _table(caption: str, headers: tuple[str, ...], rows: list[Html], cls: str) -> Html:
    head = tag("tr", *(tag("th", h, scope="col") for h in headers))
    return tag("div", tag("table", tag("caption", caption, class_="sr-only"),
                          tag("thead", head), tag("tbody", *rows), class_=cls),
               class_="table-wrap", tabindex="0", role="region", aria_label=caption)


def _section(key: str, title: str, body: Html) -> Html:
    return tag("section", tag("h2", title, id=f"{key}-title"), body,
               class_=f"panel {key}-panel", id=key, aria_labelledby=f"{key}-title")


def bot_page(static: Static, data: BotPage) -> str:
    bot = data.bot
    rated: dict[str, list[tuple[str, Standing]]] = {}
    for ladder, standing in data.ratings:
        rated.setdefault(standing.version, []).append((ladder, standing))
    rows = []
    for v in data.versions:
        where = rated.get(v.id, [])
        ratings = join(
            [tag("span", tag("a", ladder, href=ladder_url(ladder)), " ",
                 tag("span", "unrated" if s.rating is None else
                     f"{fmt_int(s.rating)} ±{fmt_int(s.margin)}",
                     class_="num"),
                 f" · {s.games:,} games", class_="ladder-rating") for ladder, s in where],
            sep=" ") or Html("–")
        rows.append(tag("tr", tag("th", f"@{v.number}", scope="row", class_="ver"),
                        tag("td", fmt_time(v.created_at), class_="when"),
                        tag("td", tag("span", v.status.value, class_=f"badge {v.status.value}"),
                            " ", tag("span", v.reason, class_="muted") if v.reason else ""),
                        tag("td", ratings, class_="ratings"),
                        data_version=v.id))
    versions = _table("Versions, newest first", ("Version", "Submitted", "Status", "Rating"),
                      rows, "versions")
    recent_rows = []
    for ladder, e in data.recent:
        recent_rows.append(tag(
            "tr",
            tag("td", tag("a", f"#{e.seq}", href=match_url(e.match)), class_="num"),
            tag("td", tag("a", ladder, href=ladder_url(ladder))),
            tag("td", bot_link(e.a), class_="side-a"),
            tag("td", f"{e.wins}–{e.ties}–{e.losses}", class_="score",
                title="A's wins–ties–losses"),
            tag("td", bot_link(e.b), class_="side-b"),
            tag("td", fmt_time(e.recorded_at), class_="when"),
            data_match=e.match))
    recent = (_table("Recent matches", ("#", "Ladder", "A", "W–T–L", "B", "Recorded"),
                     recent_rows, "recent") if recent_rows else
              tag("p", "No recorded match yet.", class_="empty"))
    h2h_rows = []
    for h in data.head_to_head:
        score = (h.wins + h.ties / 2) / h.games if h.games else None
        h2h_rows.append(tag(
            "tr", tag("td", tag("a", h.ladder, href=ladder_url(h.ladder))),
            tag("td", version_label(h.version)),
            tag("td", bot_link(h.opponent), class_="opponent"),
            tag("td", f"{h.games:,}", class_="num"),
            tag("td", f"{h.wins}–{h.ties}–{h.losses}", class_="num"),
            tag("td", fmt_pct(score), class_="num score"), data_opponent=h.opponent))
    h2h = (_table("Head to head", ("Ladder", "Version", "Opponent", "Games", "W–T–L", "Score"),
                  h2h_rows, "h2h") if h2h_rows else
           tag("p", "No games against other bots yet.", class_="empty"))
    plays = f"@{bot.current} plays" if bot.current else "no active version yet"
    content = join([
        breadcrumbs(("Ladders", "/"), (bot.owner, user_url(bot.owner)), (bot.name, None)),
        tag("h1", tag("span", f"{bot.owner}/", class_="owner-prefix"), bot.name),
        tag("p", "by ", tag("a", bot.owner, href=user_url(bot.owner)),
            f" · {bot.versions} version{'s' if bot.versions != 1 else ''} · {plays} · "
            "created ", fmt_time(bot.created_at), class_="lead"),
        _section("versions", "Versions", versions),
        _section("bot-recent", "Recent matches", recent),
        _section("h2h", "Head to head", h2h),
        _section("bot-trials", "Tests (unrated SPRT)",
                 trials_section(data.trials, version_id(bot.id, bot.current) if bot.current
                                else None)),
    ])
    return page(static, Page(bot.id, content, main_attrs=attrs(data_bot=bot.id)))


def user_page(static: Static, data: UserPage) -> str:
    if data.bots:
        rows = [tag("tr", tag("th", tag("a", b.name, href=bot_url(b.id)), scope="row"),
                    tag("td", f"{b.versions}", class_="num"),
                    tag("td", f"@{b.current}" if b.current else "–"),
                    tag("td", fmt_time(b.created_at), class_="when"), data_bot=b.id)
                for b in data.bots]
        body = _table(f"Bots of {data.name}", ("Bot", "Versions", "Plays", "Created"), rows,
                      "bots")
    else:
        body = tag("p", f"{data.name} has no bots yet.", class_="empty")
    content = join([
        breadcrumbs(("Ladders", "/"), (data.name, None)),
        tag("h1", data.name),
        _section("user-bots", "Bots", body),
    ])
    return page(static, Page(data.name, content))

