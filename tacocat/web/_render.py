"""The HTML pages the app serves, under one name.

The pages live in modules by concept (:mod:`._layout`, :mod:`._ladders`, :mod:`._chart`,
:mod:`._match_page`, :mod:`._live_now`); :mod:`._app` renders through this one name, so it
does not depend on how they are split (the bot and user pages, with their loading, are
:mod:`._people`).
"""

from __future__ import annotations

from ._ladders import home_page, ladder_fragments, ladder_page
from ._layout import Static, error_page, ladder_url, match_url
from ._live_now import live_banner
from ._match_page import match_page

__all__ = [
    "Static",
    "error_page",
    "home_page",
    "ladder_fragments",
    "ladder_page",
    "ladder_url",
    "live_banner",
    "match_page",
    "match_url",
]
