"""The page shell every page is poured into, and the small pieces the pages share.

Everything dynamic goes through :mod:`._html` (escaped unless built here).
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from string import Template
from urllib.parse import quote

from ._data import split_version
from ._html import Html, esc, join, tag

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


def bot_url(owner: str, name: str) -> str:
    """The bot's page."""
    return f"/bots/{quote(owner, safe='')}/{quote(name, safe='')}"


def bot_link(version: str) -> Html:
    """:func:`version_label` linking to the bot's page."""
    owner, name, _ = split_version(version)
    if not owner:
        return version_label(version)
    return tag("a", version_label(version), class_="bot-link", href=bot_url(owner, name))


def ladder_url(name: str) -> str:
    return f"/ladders/{quote(name, safe='')}"


def match_url(match_id: str, game: int | None = None, keep: str = "") -> str:
    """The match page; with ``game`` (0-based index), its replay of that game. URLs, pages
    and the CLI number games from 1: ``?game=1`` is the first. ``keep``: a query to keep
    (an owner's signed logs link)."""
    base = f"/matches/{quote(match_id, safe='')}"
    if game is None:
        return f"{base}?{keep}" if keep else base
    return f"{base}?{keep + '&' if keep else ''}game={game + 1}#viewer"


def live_url(match_id: str) -> str:
    return f"/live/{quote(match_id, safe='')}"


def breadcrumbs(*items: tuple[str, str | None]) -> Html:
    parts = []
    for label, href in items:
        if href is None:
            parts.append(tag("li", tag("span", label, aria_current="page")))
        else:
            parts.append(tag("li", tag("a", label, href=href)))
    return tag("nav", tag("ol", *parts), class_="crumbs", aria_label="Breadcrumb")


def progress(done: int, target: int, label: str, what: str = "games") -> Html:
    share = done / target if target else 0.0
    return tag(
        "div",
        tag("progress", fmt_pct(share), value=done, max=max(target, 1), aria_label=label),
        tag("span", f"{done:,} of {target:,} {what}" if target else "no pairings yet",
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
