"""SVG plots of result files for the site; the same input always gives the same bytes.

CI renders each plot again in memory and compares its bytes with the committed file, so nothing here
may depend on the clock, the process or the machine's settings: every plot is drawn on its own
``Figure`` (no pyplot, no current figure), under matplotlib's default style plus the fixed settings of
``_RC``, and saved without a date or a creator. Text stays text (``svg.fonttype: none``): the files are
smaller, and the row names can be searched and checked. Sizes are set in inches for a page column
about 800 px wide; a figure grows in height with its number of rows.

Colours are Okabe and Ito's (2008, "Color Universal Design"), told apart under the common colour-vision
deficiencies.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import matplotlib
import matplotlib.style
from matplotlib import ticker
from matplotlib.artist import Artist
from matplotlib.axes import Axes
from matplotlib.backends.backend_svg import FigureCanvasSVG
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from clear_rag.report.tables import headline as headline_of

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

BLUE, GREEN, ORANGE = "#0072B2", "#009E73", "#E69F00"
VERMILION, PURPLE, YELLOW = "#D55E00", "#CC79A7", "#F0E442"
MUTED, INK = "#BBBBBB", "#222222"
WINE = "#882255"  # Tol's "muted" scheme: a fifth warm colour darker than Okabe-Ito's four
# losses, from the nearest miss to the farthest; the last, lost in parsing (before any search), in grey
WARM = (YELLOW, ORANGE, VERMILION, PURPLE, WINE, "#666666")
CALM = (GREEN, "#56B4E9", BLUE)  # what went right: found; correct (cited right or not); refused rightly

WIDTH = 8.4  # inches: 605 pt, which a browser shows as 806 px
ROW = 0.36  # inches per row: room for a name wrapped onto two lines
LABEL_CHARS = 40  # a longer row name is wrapped at a space
TITLE_CHARS = 95  # at 11 pt, what fits across
_RC: dict[RcKeyType, Any] = {
    "svg.hashsalt": "clear-rag",  # clip-path and marker ids come from this instead of a random uuid
    "svg.fonttype": "none",
    "font.family": ["sans-serif"],  # written as "'DejaVu Sans', sans-serif": a browser without it falls back
    "font.sans-serif": ["DejaVu Sans"],  # shipped with matplotlib: the same metrics on every machine
    "font.size": 9.0,
    "axes.titlesize": 9.5,
    "axes.labelsize": 9.0,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "text.parse_math": False,  # a "$" in a row name is a dollar sign, not mathtext
    "axes.spines.top": False,
    "axes.spines.right": False,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "figure.facecolor": "white",
}


def _render(draw: Callable[[], Figure]) -> bytes:
    """The SVG bytes of the figure ``draw`` builds, under the fixed style and with no metadata that
    changes between runs (a date, matplotlib's version)."""
    # "default" first: a matplotlibrc on the machine would otherwise change the bytes.
    with matplotlib.style.context("default"), matplotlib.rc_context(_RC):
        figure = draw()
        FigureCanvasSVG(figure)
        buffer = io.BytesIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return buffer.getvalue()


def _figure(rows: int, title: str, footnote: str, handles: list[Artist], *, foot: float = 0.75) -> Figure:
    """A figure as wide as the page and as tall as its ``rows``: ``title`` and a one-line legend of
    ``handles`` above the panels, ``footnote`` at the bottom left. Only the panels are laid out by
    matplotlib (constrained): its "outside" legend is drawn over a suptitle, so the head is placed here.
    ``foot`` (inches) holds the x axis and the footnote."""
    title = textwrap.fill(title, TITLE_CHARS)
    head = 0.12 + 0.22 * (title.count("\n") + 1) + 0.32  # margin, title lines, legend
    height = head + foot + ROW * max(rows, 1)
    figure = Figure(figsize=(WIDTH, height), layout="constrained")
    band = 0.26  # the footnote's strip, inches
    rect = (0.0, band / height, 1.0, 1.0 - (band + head) / height)
    figure.get_layout_engine().set(rect=rect, w_pad=0.06, wspace=0.04)  # type: ignore[call-arg,union-attr]
    figure.text(0.5, 1 - 0.1 / height, title, ha="center", va="top", fontsize=11, linespacing=1.3)
    figure.legend(
        handles=handles,
        loc="lower center",
        bbox_to_anchor=(0.5, 1 - (head - 0.04) / height),
        ncols=len(handles),
        handlelength=1.4,
        columnspacing=1.4,
        borderaxespad=0,
    )
    figure.text(0.006, 0.06 / height, footnote, fontsize=7.5, color="#555555", ha="left", va="bottom")
    return figure


def _label(name: str) -> str:
    return textwrap.fill(name, LABEL_CHARS, break_long_words=False, break_on_hyphens=False)


def _row_axis(axes: Axes, names: list[str]) -> None:
    """Row names on the y axis, the first at the top."""
    axes.set_yticks(range(len(names)), [_label(n) for n in names])
    axes.set_ylim(len(names) - 0.5, -0.5)
    axes.tick_params(axis="y", length=0)


def _run_date(result: dict[str, Any]) -> str:
    return str(result.get("date", ""))[:10] or "undated"


def _mrr(result: dict[str, Any], headline: str) -> str | None:
    """The metric beside the headline: "cited right" beside an answer suite's "correct"; else the MRR
    with the headline's prefix ("doc mrr@10" beside "doc ndcg@10"), else plain "mrr@10", else any;
    None when the suite has none or the headline is it."""
    names: list[str] = result["metric_names"]
    if headline == "correct" and "cited right" in names:
        return "cited right"
    prefix = headline[: -len("ndcg@10")] if headline.endswith("ndcg@10") else ""
    found = [n for n in (f"{prefix}mrr@10", "mrr@10") if n in names]
    found += [n for n in names if n.endswith("mrr@10")]
    return next((n for n in found if n != headline), None)


def suite_svg(result: dict[str, Any], source: str) -> bytes:
    """Each row's paired difference from the baseline, on the headline metric and on MRR (or, for
    graded answers, citations; one panel each, one panel if the suite has only one), with its 95%
    bootstrap interval. A difference whose interval excludes 0 is drawn strong, one whose interval
    includes 0 muted; the baseline row is marked "baseline" at 0. ``source`` (the result file) and the
    run date make the footnote."""
    if not result.get("rows"):
        raise ValueError(f"{source}: the result has no rows to plot; run the suite with --save-results first")
    headline = headline_of(result)
    mrr = _mrr(result, headline)
    metrics = [headline] if mrr is None else [headline, mrr]
    return _render(lambda: _suite_figure(result, metrics, f"{source}, run {_run_date(result)}"))


def _suite_figure(result: dict[str, Any], metrics: list[str], footnote: str) -> Figure:
    rows: list[dict[str, Any]] = result["rows"]
    baseline = result.get("baseline")
    handles: list[Artist] = [
        Patch(color=BLUE, label="95% interval excludes 0"),
        Patch(color=MUTED, label="95% interval includes 0"),
        Line2D([], [], color=INK, linewidth=1, marker="|", markersize=7, label="95% bootstrap interval"),
    ]
    title = f"{result.get('suite', '')}: each row against the baseline, {baseline}"
    figure = _figure(len(rows), title, footnote, handles)
    panels = figure.subplots(1, len(metrics), sharey=True, sharex=True, squeeze=False)[0]
    spans = [
        (c["ci_low"], c["ci_high"])
        for row in rows
        for c in (row.get("comparisons", {}).get("baseline", {}).get(m) for m in metrics)
        if c
    ]
    low = min([0.0, *(s[0] for s in spans)])
    high = max([0.0, *(s[1] for s in spans)])
    pad = 0.08 * (high - low or 0.1)
    for axes, metric in zip(panels, metrics, strict=True):
        axes.set_xlim(low - pad, high + pad)
        axes.xaxis.set_major_locator(ticker.MaxNLocator(nbins=5, steps=[1, 2, 5, 10]))  # more ticks crowd
        # The word goes to whichever side of 0 has more room.
        side = "left" if high >= -low else "right"
        for y, row in enumerate(rows):
            change = row.get("comparisons", {}).get("baseline", {}).get(metric)
            if row["name"] == baseline or change is None:
                word = " baseline " if row["name"] == baseline else " not compared "
                axes.text(0, y, word, ha=side, va="center", color="#555555", fontstyle="italic")
                continue
            difference, ci_low, ci_high = change["difference"], change["ci_low"], change["ci_high"]
            excludes_zero = ci_low > 0 or ci_high < 0
            axes.barh(y, difference, height=0.6, color=BLUE if excludes_zero else MUTED)
            error = [[difference - ci_low], [ci_high - difference]]
            axes.errorbar(difference, y, xerr=error, fmt="none", ecolor=INK, elinewidth=1, capsize=3)
        axes.axvline(0, color=INK, linewidth=0.8)
        axes.set_title(metric)
        axes.set_xlabel(f"Δ {metric}, row − baseline")
        axes.grid(axis="x", color="#E5E5E5", linewidth=0.6)
        axes.set_axisbelow(True)
        axes.tick_params(axis="y", length=0)
    _row_axis(panels[0], [row["name"] for row in rows])
    return figure


def categories_svg(result: dict[str, Any], source: str) -> bytes | None:
    """The headline metric of each row in each question category: one small panel per category, rows
    sharing the y axis, the baseline row's bar and value marked in each; a category without the metric
    (SciFact's "no rationale" has no span labels, so no span nDCG) keeps its panel, saying so. None when
    fewer than two categories have the metric: one (BEIR's single "all") repeats the suite's headline."""
    rows: list[dict[str, Any]] = result.get("rows", [])
    categories = list(dict.fromkeys(c for row in rows for c in row.get("by_category", {})))
    headline = headline_of(result) if rows else ""
    measured = {c for row in rows for c, values in row.get("by_category", {}).items() if headline in values}
    if len(measured) < 2:
        return None
    footnote = f"{source}, run {_run_date(result)}"
    return _render(lambda: _categories_figure(result, categories, footnote))


def _categories_figure(result: dict[str, Any], categories: list[str], footnote: str) -> Figure:
    rows: list[dict[str, Any]] = result["rows"]
    headline = headline_of(result)
    baseline = result.get("baseline")
    counts: dict[str, int] = result.get("golden", {}).get("categories", {})
    handles: list[Artist] = [
        Patch(color=BLUE, label="other rows"),
        Patch(color=ORANGE, label=f"baseline: {baseline} (dashed: its value)"),
    ]
    title = f"{result.get('suite', '')}: {headline} by question category"
    figure = _figure(len(rows), title, footnote, handles)
    panels = figure.subplots(1, len(categories), sharey=True, sharex=True, squeeze=False)[0]
    for axes, category in zip(panels, categories, strict=True):
        values = [row.get("by_category", {}).get(category, {}).get(headline) for row in rows]
        if all(v is None for v in values):
            note = f"no {headline}\non these questions"
            axes.text(0.5, 0.5, note, transform=axes.transAxes, ha="center", va="center", color="#555555")
        for y, (row, value) in enumerate(zip(rows, values, strict=True)):
            if value is None:
                continue
            is_baseline = row["name"] == baseline
            axes.barh(y, value, height=0.66, color=ORANGE if is_baseline else BLUE)
            if is_baseline:
                axes.axvline(value, color=ORANGE, linewidth=1, linestyle=(0, (3, 2)))
        axes.set_xlim(0, 1)
        axes.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])
        axes.set_title(f"{category}\n{counts[category]} questions" if category in counts else category)
        axes.set_xlabel(headline)
        axes.grid(axis="x", color="#E5E5E5", linewidth=0.6)
        axes.set_axisbelow(True)
        axes.tick_params(axis="y", length=0)
    _row_axis(panels[0], [row["name"] for row in rows])
    return figure


def loss_svg(
    columns: list[str], rows: list[list[Any]], title: str, source: str, calm: Sequence[str] = ("found",)
) -> bytes:
    """Per row, its questions split by verdict as one stacked bar: the ``calm`` verdicts ("found" where
    the answer was lost, ``clear_rag.eval.loss``; the correct outcomes of a graded answer,
    ``clear_rag.eval.answers``) in calm colours, the others in warm ones in verdict order, each count
    printed where its segment is wide enough. ``columns`` is ``["row", "questions", verdict, ...]`` and
    each row ``[name, total, count, ...]`` (the ``lost`` or ``answers`` table); ``source`` is the
    footnote as it is."""
    verdicts = columns[2:]
    if len(columns) < 3 or not rows:
        raise ValueError(
            f"loss_svg needs columns ['row', 'questions', verdict, ...] and at least one row; "
            f"got {len(columns)} columns and {len(rows)} rows"
        )
    losses = [v for v in verdicts if v not in calm]
    if len(verdicts) - len(losses) > len(CALM) or len(losses) > len(WARM):
        raise ValueError(f"loss_svg has {len(WARM)} warm colours but {len(losses)} losses: {losses}")
    for row in rows:
        if len(row) != len(columns) or sum(row[2:]) != row[1]:
            raise ValueError(
                f"loss row {row!r} does not match columns {columns!r}: it needs one count per verdict, "
                f"summing to its questions"
            )
    return _render(lambda: _loss_figure(verdicts, rows, title, source, calm))


def _text_colour(background: str) -> str:
    """Black or white, whichever reads on ``background`` (WCAG relative luminance, roughly)."""
    red, green, blue = (c**2.2 for c in to_rgb(background))
    return "black" if 0.2126 * red + 0.7152 * green + 0.0722 * blue > 0.3 else "white"


def _loss_figure(
    verdicts: list[str], rows: list[list[Any]], title: str, source: str, calm: Sequence[str]
) -> Figure:
    warm, cool = iter(WARM), iter(CALM)
    colours = {v: next(cool) if v in calm else next(warm) for v in verdicts}
    handles: list[Artist] = [Patch(color=colours[v], label=v) for v in verdicts]
    figure = _figure(len(rows), title, source, handles)
    axes = figure.subplots()
    _row_axis(axes, [str(row[0]) for row in rows])
    most = max(int(row[1]) for row in rows) or 1
    axes.set_xlim(0, most)
    figure.draw_without_rendering()  # settles the layout, so the axes' width in points is known
    points_per_question = axes.get_window_extent().width * 72 / figure.dpi / most
    for y, row in enumerate(rows):
        left = 0
        for verdict, count in zip(verdicts, row[2:], strict=True):
            colour = colours[verdict]
            axes.barh(y, count, left=left, height=0.66, color=colour, edgecolor="white", linewidth=0.6)
            if count * points_per_question >= 5.2 * len(str(count)) + 4:
                centre = left + count / 2
                text = axes.text(centre, y, str(count), ha="center", va="center", fontsize=8)
                text.set_color(_text_colour(colour))
            left += count
    axes.set_xlabel("questions")
    return figure


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
    return _render(lambda: _ratio_figure(title, bars, xlabel, source))


def _ratio_figure(title: str, bars: list[tuple[str, float]], xlabel: str, source: str) -> Figure:
    handles: list[Artist] = [
        Patch(color=BLUE, label="above parity (> 1)"),
        Patch(color=ORANGE, label="below parity (< 1)"),
    ]
    figure = _figure(len(bars), title, source, handles)
    axes = figure.subplots()
    _row_axis(axes, [name for name, _ in bars])
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
    return _render(lambda: _curves_figure(title, panels, xlabel, source))


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
    figure = _figure(8 * rows, title, source, handles)
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
