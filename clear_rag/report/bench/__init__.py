"""The benchmark files under ``results/bench/`` as Markdown: their figures, and clear-rag against each peer.

``bench_table(doc, name)`` renders ``results/bench/<name>.json`` by its kind (the file's ``benchmark``
field, else its name): retrieval, growth, ingest, serve or make-run, each a small function over the
fields its script in ``bench/`` writes. A kind not known here yet gets its top-level fields, so that a
new benchmark file renders before anyone writes its table. Under every table one line says where and
when it ran, on which versions, under what load, and from which file.

Figures are printed as the file records them, rounded one way (``number``). Ratios are derived from
two of the file's figures by ``retrieval_ratios``, which the table and the plot's bars
(``bench_ratios``) both read, always oriented so that above 1 favours clear-rag: queries per second
clear-rag ÷ peer, build seconds peer ÷ clear-rag.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from clear_rag.errors import InputError
from clear_rag.report.bench.ann import _ann, ann_ratios
from clear_rag.report.bench.common import ENVIRONMENT, footer, number, source, times
from clear_rag.report.bench.dense import _dense, dense_ratios
from clear_rag.report.bench.growth import _growth, _ingest
from clear_rag.report.bench.models import _batch, _embed, _package_size, _rankflow
from clear_rag.report.bench.retrieval import Ratio, _retrieval, retrieval_ratios
from clear_rag.report.bench.scale import _executor, _index_size, _memory, _scale, one_query_rates
from clear_rag.report.bench.waits import _first_question, _make_run, _pdf, _serve, _serve_memory
from clear_rag.report.tables import markdown_table

T = TypeVar("T")

__all__ = [
    "KINDS",
    "Ratio",
    "bench_ratios",
    "bench_table",
    "kind_of",
    "number",
    "retrieval_ratios",
    "scale_curves",
    "times",
]


def bench_ratios(doc: dict[str, Any], name: str) -> tuple[str, list[tuple[str, float]], str] | None:
    """(plot title, [(bar label, clear-rag ÷ peer, above 1 favours clear-rag)], x-axis label) for a
    benchmark with peers; None for one without."""
    if kind_of(doc, name) == "ann":
        bars = _read(lambda: ann_ratios(doc), name)
        if not bars:
            return None
        return (
            "Other indexes against clear-rag's exact search: single-query latency, one thread each "
            "(bench/ann.py)",
            bars,
            "peer latency ÷ clear-rag exact latency (below 1: the peer answers faster)",
        )
    if kind_of(doc, name) == "dense":
        bars = _read(lambda: dense_ratios(doc), name)
        return (
            (
                "Exact dense search: clear-rag against each peer (bench/dense.py)",
                bars,
                "peer seconds ÷ clear-rag seconds, median of rounds (above 1: clear-rag faster)",
            )
            if bars
            else None
        )
    if kind_of(doc, name) != "retrieval":
        return None
    ratios = _read(lambda: retrieval_ratios(doc, name), name)
    if not ratios:
        return None
    return (
        "clear-rag against each peer (retrieval benchmark, one thread each unless named)",
        [(r.label, r.value) for r in ratios],
        "clear-rag ÷ peer: queries/s ours ÷ theirs, build s theirs ÷ ours (above 1: clear-rag faster)",
    )


# -- one function per benchmark -----------------------------------------------------------------


def _generic(doc: dict[str, Any], name: str) -> str:
    """A benchmark not known here yet: its top-level figures and words, as the file has them."""
    rows = []
    for key, value in doc.items():
        if key in ENVIRONMENT or isinstance(value, dict | list):
            continue
        shown = number(value) if isinstance(value, float) else str(value)
        rows.append([key, shown])
    return markdown_table(["field", "value"], rows)


KINDS: dict[str, Callable[[dict[str, Any], str], str]] = {
    "retrieval": _retrieval,
    "dense": _dense,
    "growth": _growth,
    "ingest": _ingest,
    "serve": _serve,
    "serve-memory": _serve_memory,
    "make-run": _make_run,
    "first-question": _first_question,
    "pdf": _pdf,
    "ann": _ann,
    "scale": _scale,
    "embed": _embed,
    "embed-steps": _embed,
    "batch": _batch,
    "rankflow": _rankflow,
    "package-size": _package_size,
    "index-size": _index_size,
    "executor": _executor,
}
# Other readings of a kind's file, named by a block's last word: `<!-- results: bench/growth bench memory -->`
VIEWS: dict[str, Callable[[dict[str, Any], str], str]] = {"memory": _memory}


def kind_of(doc: dict[str, Any], name: str) -> str | None:
    """The kind of benchmark: its ``benchmark`` field where that is a known kind, else its file name
    (make-run's field is a sentence); None for a kind not known here."""
    for key in (doc.get("benchmark"), name):
        if isinstance(key, str) and key in KINDS:
            return key
    return None


def _read(render: Callable[[], T], name: str) -> T:
    """``render()``, with a file that lacks a field its kind needs named, instead of a traceback."""
    try:
        return render()
    except (KeyError, TypeError, ZeroDivisionError) as err:
        raise InputError(
            f"lacks a figure its table needs ({type(err).__name__}: {err})",
            path=source(name),
            fix="Regenerate it with the benchmark that writes it (see the reproduce page)",
        ) from None


def bench_table(doc: dict[str, Any], name: str, view: str | None = None) -> str:
    """``results/bench/<name>.json`` as Markdown: its figures, its ratios against peers where it has
    any, and the line saying where, when and from which file; ``view`` reads it another way (VIEWS)."""
    kind = kind_of(doc, name)
    render = KINDS[kind] if kind is not None else _generic
    if view is not None:
        if view not in VIEWS:
            raise InputError(
                f"has no view {view!r}",
                path=source(name),
                fix=f"Name one of {', '.join(sorted(VIEWS))} after `bench` in the block, or none",
            )
        render = VIEWS[view]
    body = _read(lambda: render(doc, name), name)
    return f"{body}\n\n{footer(doc, name)}\n"


def scale_curves(doc: dict[str, Any], name: str) -> tuple[str, list[Any], str] | None:
    """(title, panels, x label) of the chunks series for ``logplots.curves_svg``; None for another kind."""
    if kind_of(doc, name) != "scale":
        return None

    def line(label: str, value: Callable[[dict[str, Any]], float]) -> tuple[str, list[tuple[float, float]]]:
        return label, [(float(p["chunks"]), float(value(p))) for p in doc["points"]]

    def keyword(engine: str, field: str) -> tuple[str, list[tuple[float, float]]]:
        return line(engine, lambda p: p["keyword"]["engines"][engine][field])

    def ingest(field: str) -> tuple[str, list[tuple[float, float]]]:
        """The real ingest path, at the chunk counts it ran at (``--ingest-chunks``)."""
        points = [p["ingest"] for p in doc["points"] if "ingest" in p]
        return "clear-rag ingest", [(float(p["chunks"]), float(p[field])) for p in points]

    def curves() -> list[Any]:
        engines: list[str] = doc["engines"]
        return [
            (
                "BM25 build; the whole ingest",
                "seconds",
                [*(keyword(e, "build_s") for e in engines), ingest("total_s")],
            ),
            (
                "BM25 queries",
                "queries/s, one thread",
                [keyword(e, "queries_per_s") for e in engines],
            ),
            (
                "exact dense queries",
                "queries/s, one thread",
                [
                    line("clear-rag", lambda p: one_query_rates(p["dense"])[0]),
                    line("faiss flat", lambda p: one_query_rates(p["dense"])[1]),
                ],
            ),
            (
                "memory",
                "MB: BM25 build peak, ingest peak growth",
                [*(keyword(e, "rss_peak_mb") for e in engines), ingest("rss_growth_mb")],
            ),
        ]

    title = "The cost of growth: ingest, BM25 and exact dense search from 10k chunks up"
    return title, _read(curves, name), "chunks"
