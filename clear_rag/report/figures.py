"""Which plots a result file has, and each one's SVG bytes (drawn by ``plots``).

A suite file has ``suite`` (each row against the baseline on the headline metric and MRR, with
intervals), ``categories`` where its questions have categories, ``lost`` where its rows carry loss
verdicts, and ``answers`` where they carry graded answers; a benchmark with peers has ``ratios``.
``plots_for`` renders them all (what the asset graph and ``clear-rag report`` write to
``site/plots/``), ``render_plot`` one (what the check compares a committed file with).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from clear_rag.atomic import write_atomic
from clear_rag.errors import InputError
from clear_rag.report.sources import Results, plot_path
from clear_rag.report.tables import query_rows

Plot = Callable[[str, Results], bytes | None]


def _source(name: str, results: Results) -> str:
    """The footnote of a plot whose drawing function takes no date: the file and the day it was run."""
    return f"{results.path(name).as_posix()}, run {str(results.load(name).get('date', ''))[:10]}"


def _suite(name: str, results: Results) -> bytes | None:
    from clear_rag.report import plots  # matplotlib takes a second to import: only when drawing

    return plots.suite_svg(results.load(name), results.path(name).as_posix())


def _categories(name: str, results: Results) -> bytes | None:
    from clear_rag.report import plots

    return plots.categories_svg(results.load(name), results.path(name).as_posix())


def _lost(name: str, results: Results) -> bytes | None:
    from clear_rag.report import plots

    columns, rows = query_rows("lost", results.folder(name), name)
    if not rows:
        return None
    title = f"Where the answer was lost: {results.load(name).get('suite', name)}"
    return plots.loss_svg(columns, rows, title, _source(name, results))


def _answers(name: str, results: Results) -> bytes | None:
    from clear_rag.eval.answers import CORRECT_OUTCOMES
    from clear_rag.report import plots

    columns, rows = query_rows("answers", results.folder(name), name)
    if not rows:
        return None
    title = f"How the answers were graded: {results.load(name).get('suite', name)}"
    return plots.loss_svg(columns, rows, title, _source(name, results), calm=CORRECT_OUTCOMES)


def _ratios(name: str, results: Results) -> bytes | None:
    from clear_rag.report import logplots
    from clear_rag.report.bench import bench_ratios

    found = bench_ratios(results.load(name), name.removeprefix("bench/"))
    if found is None:
        return None
    title, bars, xlabel = found
    return logplots.ratio_svg(title, bars, xlabel, _source(name, results))


SUITE_PLOTS: dict[str, Plot] = {
    "suite": _suite,
    "categories": _categories,
    "lost": _lost,
    "answers": _answers,
}


def _curves(name: str, results: Results) -> bytes | None:
    from clear_rag.report import logplots
    from clear_rag.report.bench import scale_curves

    found = scale_curves(results.load(name), name.removeprefix("bench/"))
    if found is None:
        return None
    title, panels, xlabel = found
    return logplots.curves_svg(title, panels, xlabel, _source(name, results))


BENCH_PLOTS: dict[str, Plot] = {"ratios": _ratios, "curves": _curves}


def _kinds(name: str) -> dict[str, Plot]:
    return BENCH_PLOTS if name.startswith("bench/") else SUITE_PLOTS


def plots_for(name: str, results: Results) -> dict[str, bytes]:
    """Every plot result file ``name`` has, by kind (those its data cannot draw are left out)."""
    drawn = {which: _draw(name, which, results) for which in _kinds(name)}
    return {which: svg for which, svg in drawn.items() if svg is not None}


def check_kind(name: str, which: str, results: Results) -> None:
    """Raise an error naming the file where ``which`` is not a plot it can have."""
    if which not in _kinds(name):
        raise InputError(
            f"has no plot {which!r}",
            path=results.path(name).as_posix(),
            fix=f"Name one of: {', '.join(_kinds(name))}",
        )


def _draw(name: str, which: str, results: Results) -> bytes | None:
    """One plot, drawn once per ``results`` (a check and a write of the same page share it)."""
    if (name, which) not in results.drawn:
        svg = _kinds(name)[which](name, results)
        if svg is None:
            return None
        results.drawn[(name, which)] = svg
    return results.drawn[(name, which)]


def render_plot(name: str, which: str, results: Results) -> bytes:
    check_kind(name, which, results)
    svg = _draw(name, which, results)
    if svg is None:
        raise InputError(
            f"holds nothing to draw the plot {which!r} from",
            path=results.path(name).as_posix(),
            fix="Remove the plot block, or regenerate the file with this version",
        )
    return svg


def write_plots(name: str, results: Results, root: Path = Path(".")) -> list[Path]:
    """Write every plot of ``name`` under ``root/site/plots/`` through the one atomic writer; returns the
    files whose bytes changed (an unchanged plot is left alone, its mtime too)."""
    changed = []
    for which, svg in plots_for(name, results).items():
        target = root / plot_path(name, which)
        if not target.is_file() or target.read_bytes() != svg:
            target.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(target, svg)
            changed.append(target)
    return changed
