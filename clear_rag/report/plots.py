"""SVG plots of result files for the site: each row against the baseline, by question category, and
where the answers were lost or how they were graded. Drawn in the fixed style of
``clear_rag.report.svg``, so the same input always gives the same bytes."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from matplotlib import ticker
from matplotlib.artist import Artist
from matplotlib.colors import to_rgb
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from clear_rag.report.svg import BLUE, CALM, INK, MUTED, ORANGE, WARM, make_figure, render, row_axis
from clear_rag.report.tables import headline as headline_of


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
    return render(lambda: _suite_figure(result, metrics, f"{source}, run {_run_date(result)}"))


def _suite_figure(result: dict[str, Any], metrics: list[str], footnote: str) -> Figure:
    rows: list[dict[str, Any]] = result["rows"]
    baseline = result.get("baseline")
    handles: list[Artist] = [
        Patch(color=BLUE, label="95% interval excludes 0"),
        Patch(color=MUTED, label="95% interval includes 0"),
        Line2D([], [], color=INK, linewidth=1, marker="|", markersize=7, label="95% bootstrap interval"),
    ]
    title = f"{result.get('suite', '')}: each row against the baseline, {baseline}"
    figure = make_figure(len(rows), title, footnote, handles)
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
    row_axis(panels[0], [row["name"] for row in rows])
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
    return render(lambda: _categories_figure(result, categories, footnote))


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
    figure = make_figure(len(rows), title, footnote, handles)
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
    row_axis(panels[0], [row["name"] for row in rows])
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
    return render(lambda: _loss_figure(verdicts, rows, title, source, calm))


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
    figure = make_figure(len(rows), title, source, handles)
    axes = figure.subplots()
    row_axis(axes, [str(row[0]) for row in rows])
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
