"""Matches being played now: the ladder page's "live now" panel and the live viewer's banner
(the viewer itself is the match page over the games finished so far, see ``live.js``)."""

from __future__ import annotations

from collections.abc import Sequence

from tacocat.arena import Match
from tacocat.arena.live import LiveMatch

from ._html import Html, tag
from ._layout import live_url, version_label


def live_fragment(live: Sequence[LiveMatch]) -> str:
    if not live:
        return tag("p", "No match is being played right now.", class_="empty")
    items = [tag("li",
                 tag("a", version_label(m.a), tag("span", " vs ", class_="muted"),
                     version_label(m.b), href=live_url(m.id),
                     aria_label=f"watch {m.a} against {m.b}"),
                 # A count, not "game N": a match plays many games at once, and they end
                 # out of schedule order.
                 tag("span", f"{m.games} of {m.total} games played",
                     class_="muted live-progress"),
                 data_match=m.id)
             for m in live]
    return tag("ul", *items, class_="live-now")


def live_banner(match: Match, running: LiveMatch | None, games: int, events_url: str) -> Html:
    text = (f"Live: {games} of {match.games} games played; each appears here as it ends."
            if running is not None else "Waiting for a worker to start this match.")
    return tag("section",
               tag("p", tag("span", "", class_="dot", aria_hidden="true"),
                   tag("span", text, id="live-match-text"), class_="live", id="live-match",
                   role="status", data_state="live" if running is not None else "waiting"),
               tag("label", Html('<input type="checkbox" id="follow" checked> '),
                   "follow: show each game as it ends"),
               class_="panel live-banner", data_live=events_url, data_games=games)
