"""SVG plots of benchmark results on log axes: ratios against parity, and growth curves. Drawn in the
fixed style of ``clear_rag.report.svg``, so the same input always gives the same bytes."""

from __future__ import annotations

import math

from matplotlib import ticker
from matplotlib.artist import Artist
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from clear_rag.report.svg import (
    BLUE,
    GREEN,
    INK,
    ORANGE,
    PURPLE,
    VERMILION,
    WINE,
    make_figure,
    render,
    row_axis,
)


def _log_ticks(low: float, high: float) -> list[float]:
    """Round ticks for a log axis from ``low`` to ``high``: 1-2-5 steps, or decades over a wide range."""
    steps = (1.0,) if math.log10(high / low) > 2.5 else (1.0, 2.0, 5.0)
    decades = range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
    return [s * 10.0**d for d in decades for s in steps if low <= s * 10.0**d <= high]


def ratio_svg(title: str, bars: list[tuple[str, float]], xlabel: str, source: str) -> bytes:
    """One horizontal bar per ``(name, ratio)`` on a log axis centred on 1 (parity, a labelled line):
    a bar above parity in one colour, one below in another, each with its value to 2 decimals. The
    colours say which side, not which is better: for a latency ratio below parity is the good side.
    ``source`` is the footnote as it is."""
    if not bars:
        raise ValueError(f"ratio_svg {title!r}: no bars to plot")
    for name, ratio in bars:
        if not (math.isfinite(ratio) and ratio > 0):
            raise ValueError(
                f"ratio_svg {title!r}: bar {name!r} has ratio {ratio!r}; a log axis needs a positive "
                "finite number"
            )
    return render(lambda: _ratio_figure(title, bars, xlabel, source))


def _ratio_figure(title: str, bars: list[tuple[str, float]], xlabel: str, source: str) -> Figure:
    handles: list[Artist] = [
        Patch(color=BLUE, label="above parity (> 1)"),
        Patch(color=ORANGE, label="below parity (< 1)"),
    ]
    figure = make_figure(len(bars), title, source, handles)
    axes = figure.subplots()
    row_axis(axes, [name for name, _ in bars])
    axes.set_xscale("log")
    # Room for the labels beyond the longest bar, and at least 0.5 to 2 so parity is never at an edge.
    reach = max(math.log(2.0), 1.35 * max(abs(math.log(r)) for _, r in bars))
    axes.set_xlim(math.exp(-reach), math.exp(reach))
    axes.xaxis.set_major_locator(ticker.FixedLocator(_log_ticks(math.exp(-reach), math.exp(reach))))
    axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:g}×"))
    axes.xaxis.set_minor_locator(ticker.NullLocator())
    for y, (_, ratio) in enumerate(bars):
        above = ratio >= 1
        axes.barh(y, ratio - 1, left=1, height=0.6, color=BLUE if above else ORANGE)
        axes.annotate(
            f"{ratio:.2f}",
            (ratio, y),
            xytext=(3 if above else -3, 0),
            textcoords="offset points",
            ha="left" if above else "right",
            va="center",
            fontsize=8.5,
        )
    axes.axvline(1, color=INK, linewidth=1)
    axes.text(1, -0.62, "parity", ha="center", va="bottom", fontsize=8.5, color=INK)
    axes.set_xlabel(xlabel)
    axes.grid(axis="x", color="#E5E5E5", linewidth=0.6)
    axes.set_axisbelow(True)
    return figure


Curve = tuple[str, list[tuple[float, float]]]  # a line's name and its (x, y) points
Panel = tuple[str, str, list[Curve]]  # a panel's title, its y-axis label and its lines


def curves_svg(title: str, panels: list[Panel], xlabel: str, source: str) -> bytes:
    """Panels side by side, each a line per name on log-log axes (a straight line of slope 1 is
    linear growth): markers at the measured points only, one colour per name across all panels so a
    peer is the same colour everywhere. ``source`` is the footnote as it is."""
    if not panels or not any(lines for _, _, lines in panels):
        raise ValueError(f"curves_svg {title!r}: no lines to plot")
    for panel, _, lines in panels:
        for name, points in lines:
            bad = [p for p in points if not all(math.isfinite(v) and v > 0 for v in p)]
            if bad:
                raise ValueError(
                    f"curves_svg {title!r}: panel {panel!r}, line {name!r} has point {bad[0]!r}; a log "
                    "axis needs positive finite numbers"
                )
    return render(lambda: _curves_figure(title, panels, xlabel, source))


def _curves_figure(title: str, panels: list[Panel], xlabel: str, source: str) -> Figure:
    names = list(dict.fromkeys(name for _, _, lines in panels for name, _ in lines))
    palette = (BLUE, ORANGE, GREEN, VERMILION, PURPLE, "#56B4E9", WINE)
    colour = {name: palette[n % len(palette)] for n, name in enumerate(names)}
    handles: list[Artist] = [
        Line2D([], [], color=colour[n], marker="o", markersize=4, label=n) for n in names
    ]
    # Up to three panels side by side; more go on two rows, so that none is narrower than a third.
    columns = len(panels) if len(panels) <= 3 else math.ceil(len(panels) / 2)
    rows = math.ceil(len(panels) / columns)
    figure = make_figure(8 * rows, title, source, handles)
    grid = list(figure.subplots(rows, columns, squeeze=False).flat)
    for spare in grid[len(panels) :]:
        spare.set_visible(False)
    for axes, (panel, ylabel, lines) in zip(grid, panels, strict=False):
        for name, points in lines:
            xs, ys = zip(*sorted(points), strict=True)
            axes.plot(xs, ys, color=colour[name], marker="o", markersize=4, linewidth=1.4)
        axes.set_xscale("log")
        axes.set_yscale("log")
        axes.set_title(panel)
        axes.set_ylabel(ylabel)
        axes.set_xlabel(xlabel)
        # Plain numbers, not mathtext powers of ten (text.parse_math is off, so those print as source).
        axes.xaxis.set_major_formatter(ticker.FuncFormatter(lambda x, _: f"{x:,.0f}"))
        axes.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:,g}"))
        axes.yaxis.set_minor_formatter(ticker.NullFormatter())
        axes.xaxis.set_minor_locator(ticker.NullLocator())
        axes.grid(which="major", color="#E5E5E5", linewidth=0.6)
        axes.set_axisbelow(True)
    return figure
