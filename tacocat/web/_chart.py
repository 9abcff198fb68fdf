"""The ladder page's rating chart: live Elo over recorded matches as an inline SVG.

Drawn on the server like the other fragments, so a live update replaces it like any other
fragment and the page needs no charting script.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._data import LadderSnapshot
from ._html import Html, esc, join, tag
from ._layout import fmt_int, version_label

CHART_SERIES = 12
"""Versions drawn in the rating chart (the best ranked); more would be unreadable. Each has
its own palette entry (style.css ``--c0``..``--c11``), the second half also dashed."""
DASHED_FROM = 6
CHART_POINTS = 240
"""Most points per line in the chart (a long history is sampled evenly)."""


def _sample(points: Sequence[tuple[int, float]], limit: int) -> list[tuple[int, float]]:
    if len(points) <= limit:
        return list(points)
    step = (len(points) - 1) / (limit - 1)
    return [points[round(i * step)] for i in range(limit)]


def chart_fragment(snap: LadderSnapshot) -> str:
    history = snap.history
    initial = 1500.0
    # Retired versions' lines stop where they retired: drawn grey, and shown only when the
    # page's "show retired versions" is ticked, so they never crowd out the ones that play.
    charted = [row for row in snap.board.standings if row.version in history.series]
    order = [row.version for row in charted if row.active][:CHART_SERIES]
    retired = {row.version for row in charted if not row.active}
    order += [row.version for row in charted if not row.active][:CHART_SERIES]
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
            f'<g class="series {_series_class(i, version in retired)}" data-series="{i}">'
            f"<title>{esc(version)}: {fmt_int(last_e)}</title>"
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
    legend = tag("ul", *(tag("li", tag("span", "", class_="swatch " + _series_class(
                                           i, v in retired), aria_hidden="true"),
                                tag("span", version_label(v)),
                                tag("span", fmt_int(lines[v][-1][1]), class_="muted"),
                                class_="retired" if v in retired else None)
                         for i, v in enumerate(order)), class_="legend")
    return join([svg, legend])


def _series_class(index: int, retired: bool) -> str:
    if retired:
        return "retired"
    return f"s{index}" + (" dashed" if index >= DASHED_FROM else "")


def _nice_step(span: float, count: int) -> int:
    raw = max(span / count, 1.0)
    magnitude = 10 ** math.floor(math.log10(raw))
    for factor in (1, 2, 5, 10):
        if raw <= factor * magnitude:
            return int(factor * magnitude)
    return int(10 * magnitude)
