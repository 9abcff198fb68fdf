"""Escaping-by-default HTML building: every value is escaped unless it is already :class:`Html`.

Bot names, owners, match ids and replay player names are user input. The pages are built from
small functions that pass every dynamic value through :func:`esc` (or :func:`tag`, which
escapes its children and attribute values), so markup can only come from this package's own
string literals. Data for scripts goes into ``<script type="application/json">`` blocks with
``<``, ``>`` and ``&`` written as JSON escapes, so no value can end the block.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable
from typing import Any


class Html(str):
    """A string that already is safe HTML (built here); :func:`esc` leaves it alone."""

    __slots__ = ()


def esc(value: object) -> Html:
    """``value`` as HTML text: escaped unless it is :class:`Html` already."""
    if isinstance(value, Html):
        return value
    return Html(html.escape(str(value), quote=True))


def join(parts: Iterable[object], sep: str = "") -> Html:
    """Escape and concatenate."""
    return Html(sep.join(esc(p) for p in parts))


def attrs(**values: object) -> Html:
    """`` name="value"`` pairs: ``class_`` is ``class``, ``data_x`` is ``data-x``, ``aria_x``
    is ``aria-x``; ``True`` gives a bare attribute, ``None``/``False`` none at all."""
    out = []
    for key, value in values.items():
        if value is None or value is False:
            continue
        name = key.rstrip("_").replace("_", "-")
        out.append(f" {name}" if value is True else f' {name}="{esc(value)}"')
    return Html("".join(out))


def tag(name: str, *children: object, **attributes: object) -> Html:
    """``<name attrs>children</name>``, children escaped unless :class:`Html`."""
    return Html(f"<{name}{attrs(**attributes)}>{join(children)}</{name}>")


def void(name: str, **attributes: object) -> Html:
    """An element without content (``<input>``, ``<meta>``, ...)."""
    return Html(f"<{name}{attrs(**attributes)}>")


def json_script(element_id: str, data: Any) -> Html:
    """A ``<script type="application/json">`` block that no value can break out of."""
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return Html(f'<script type="application/json" id="{esc(element_id)}">{text}</script>')
