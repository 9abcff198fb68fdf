"""The web UI of the arena: live leaderboards, crosstables, rating charts, a replay viewer,
bot and user pages, and matches watched while they are played.

An aiohttp application (:func:`create_app`) on the synchronous :class:`tacocat.arena.Arena`,
with HTML pages (plain HTML, CSS and vanilla JavaScript; no build step), the same
data as JSON under ``/api/``, and server-sent events fed from the arena's Redis pub/sub for
live ladder pages. :class:`WebServer` runs it inside an existing event loop (``tacocat
serve``). Routes: see :mod:`tacocat.web._app`. A ladder page without the server:
``ladder_page(Static(), load_ladder(arena, name, view=LadderView()), events_url)``.
"""

from ._app import CSP, WebSettings, create_app
from ._data import LadderView, load_ladder
from ._errors import WebError, WebStartError
from ._render import Static, ladder_page
from ._replay import replay_view
from ._server import WebServer

__all__ = [
    "CSP", "LadderView", "Static", "WebError", "WebServer", "WebSettings", "WebStartError",
    "create_app", "ladder_page", "load_ladder", "replay_view",
]
