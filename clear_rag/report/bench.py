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

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from clear_rag.errors import InputError
from clear_rag.report.tables import markdown_table

# Fields every benchmark records beside its numbers (bench/common.py), said once in the footer.
ENVIRONMENT = ("date", "commit", "python", "machine", "cpus")
DENSE = "dense"
OURS = "clear-rag"  # the engine and method names of clear-rag's own rows start with this
T = TypeVar("T")


def number(value: float) -> str:
    """A figure as every bench table prints it: a count as it is (5,183), a measure in whole units
    with thousands separators from 100 up (6,938), else to three significant figures (98.1, 0.760,
    0.0465)."""
    if isinstance(value, int):
        return f"{value:,}"
    if not math.isfinite(value):  # json.loads reads NaN and Infinity
        return str(value)
    rounded = float(f"{value:.3g}")
    if rounded == 0:
        return "0"
    if abs(rounded) >= 100:
        return f"{value:,.0f}"
    return f"{rounded:.{2 - math.floor(math.log10(abs(rounded)))}f}"


def times(value: float) -> str:
    """A ratio: ``2.96×``."""
    return f"{number(value)}×"


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _spread(summary: dict[str, float]) -> str:
    return f"{number(summary['median'])} / {number(summary['p90'])}"


def source(name: str) -> str:
    return f"results/bench/{name}.json"


def footer(doc: dict[str, Any], name: str) -> str:
    """Where and when the benchmark ran, the versions and load it records, and the file it came from."""
    where = [
        str(doc["machine"]) if "machine" in doc else "",
        f"{doc['cpus']} CPUs" if "cpus" in doc else "",
        f"Python {doc['python']}" if "python" in doc else "",
        f"commit `{doc['commit']}`" if doc.get("commit") else "",
        str(doc["date"])[:10] if "date" in doc else "",
    ]
    parts = [f"Run on {', '.join(w for w in where if w)}"] if any(where) else []
    versions = doc.get("versions")
    if isinstance(versions, dict) and versions:
        parts.append("versions: " + ", ".join(f"{k} {v}" for k, v in versions.items()))
    loads = [
        f"{', '.join(number(x) for x in doc[key])} {when}"
        for key, when in (("load_average_at_start", "at the start"), ("load_average_at_end", "at the end"))
        if doc.get(key)
    ]
    if loads:
        parts.append(f"load average (1, 5 and 15 minutes) {' and '.join(loads)}")
    parts.append(f"from `{source(name)}`")
    return "; ".join(parts) + "."


# -- ratios -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ratio:
    """clear-rag against one peer on one measure; ``value`` above 1 favours clear-rag."""

    section: str  # the corpus of a keyword suite ("scifact", "synthetic") or "dense"
    peer: str  # the engine or method as the file names it, backend and settings included
    measure: str  # "queries/s" or "build"
    value: float

    @property
    def label(self) -> str:
        return f"{self.peer} ({self.section}, {self.measure})"


def dense_partner(method: str, cores: int) -> str:
    """The clear-rag row a dense method is compared with, as bench/retrieval.py pairs them: a batched
    peer with ``search_many``, a peer given every core with clear-rag given as many, else one query
    at a time on one thread."""
    if "batched" in method or "many" in method:
        return f"{OURS} search_many"
    if "threads" in method:
        return f"{OURS} search, {cores} threads"
    return f"{OURS} search"


def retrieval_ratios(doc: dict[str, Any], name: str = "retrieval") -> list[Ratio]:
    """Every peer of the retrieval benchmark against clear-rag, from the file's figures:

    - keyword queries: clear-rag queries/s on the very queries the peer answered ÷ the peer's
      (``clear_rag_queries_per_s_same_queries / queries_per_s``);
    - keyword build: the peer's median build seconds ÷ clear-rag's (``build_s``), a speed-up;
    - dense: clear-rag's queries/s in the same mode (``dense_partner``) ÷ the peer's.
    """
    found = []
    for section, suite in doc.get("keyword", {}).items():
        engines = suite["engines"]
        ours = engines[OURS]
        for peer, row in engines.items():
            if peer.startswith(OURS):
                continue
            qps = row["clear_rag_queries_per_s_same_queries"] / row["queries_per_s"]
            found.append(Ratio(section, peer, "queries/s", qps))
            found.append(Ratio(section, peer, "build", row["build_s"] / ours["build_s"]))
    dense = doc.get(DENSE)
    if dense:
        methods = dense["engines"]
        for peer, row in methods.items():
            if peer.startswith(OURS):
                continue
            partner = dense_partner(peer, dense["cores"])
            if partner not in methods:
                raise InputError(
                    f"has the dense method {peer!r} but not {partner!r}, the clear-rag row it is "
                    "compared with",
                    path=source(name),
                    fix="Regenerate it with python -m bench.retrieval",
                )
            found.append(
                Ratio(DENSE, peer, "queries/s", methods[partner]["queries_per_s"] / row["queries_per_s"])
            )
    return found


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


def _retrieval(doc: dict[str, Any], name: str) -> str:
    ratios = {(r.section, r.peer, r.measure): r.value for r in retrieval_ratios(doc, name)}

    def ratio(section: str, peer: str, measure: str) -> str:
        return times(ratios[section, peer, measure]) if (section, peer, measure) in ratios else "—"

    parts = []
    settings = f"k1 {doc['k1']}, b {doc['b']}, top {doc['k']}" if {"k1", "b", "k"} <= doc.keys() else ""
    for section, suite in doc.get("keyword", {}).items():
        head = [
            "engine",
            "build s",
            "RSS MB",
            "queries/s",
            "queries timed",
            "clear-rag ÷ peer, queries/s",
            "peer ÷ clear-rag, build s",
            "overlap@10 with clear-rag",
        ]
        rows = [
            [
                engine,
                number(row["build_s"]),
                number(row["rss_peak_mb"]),
                number(row["queries_per_s"]),
                number(row["queries_timed"]),
                ratio(section, engine, "queries/s"),
                ratio(section, engine, "build"),
                number(row["agreement"]["overlap_at_10"]),
            ]
            for engine, row in suite["engines"].items()
        ]
        caption = f"**BM25 on {suite['corpus']}**" + (f" ({settings})" if settings else "")
        parts += [caption, markdown_table(head, rows)]
    dense = doc.get(DENSE)
    if dense:
        rows = [
            [
                method,
                number(row["queries_per_s"]),
                "—" if method.startswith(OURS) else dense_partner(method, dense["cores"]),
                ratio(DENSE, method, "queries/s"),
            ]
            for method, row in dense["engines"].items()
        ]
        identical = "; every method returned the same top-10 ids" if dense.get("identical_top10") else ""
        parts += [
            f"**Exact dense top-{doc.get('k', 10)}: {number(dense['vectors'])} vectors of "
            f"{number(dense['dim'])} dimensions, {number(dense['queries'])} queries**",
            markdown_table(["method", "queries/s", "compared with", "clear-rag ÷ peer, queries/s"], rows),
            f"Vectors: {dense['data']}{identical}.",
        ]
    fewer = [
        f"{engine} on {section}: {_plural(len(row['build_runs_s']), 'build')}"
        for section, suite in doc.get("keyword", {}).items()
        for engine, row in suite["engines"].items()
        if "repeat" in doc and len(row.get("build_runs_s", [])) not in (0, doc["repeat"])
    ]
    notes = [
        (f"Medians of {doc['repeat']} runs" if "repeat" in doc else "Medians of the recorded runs")
        + (f" ({', '.join(fewer)})" if fewer else ""),
        "build s: a fresh process per build; RSS MB: growth of the resident high-water mark during a build",
        "queries/s: one query at a time, query tokenising included; a peer timed on fewer queries is "
        "compared with clear-rag on the same queries",
        "both ratios above 1 favour clear-rag",
    ]
    parts.append("; ".join(notes) + ".")
    if doc.get("threads"):
        parts.append(f"Threads: {doc['threads']}.")
    if doc.get("targets"):
        parts.append("Targets, as the run judged them:\n\n" + "\n".join(f"- {t}" for t in doc["targets"]))
    return "\n\n".join(parts)


SERIES_TITLES = {
    "document_size": "One document of N MB on a single line",
    "corpus_size": "A corpus of N files of about 2 KB",
}


def _growth(doc: dict[str, Any], name: str) -> str:
    parts = []
    for key in ("document_size", "corpus_size"):
        series = doc.get(key)
        if not series:
            continue
        points = series["points"]
        unit = "document MB" if points and points[0]["kind"] == "document" else "files"
        head = [
            unit,
            "input MB",
            "chunks",
            "ingest s",
            "index s",
            "total s",
            "s per input MB",
            "RSS growth MB",
            "RSS growth ÷ input",
        ]
        rows = [
            [
                number(p["amount"]),
                number(p["bytes"] / 1e6),
                number(p["runs"][0]["chunks"]),
                number(p["ingest_s"]),
                number(p["index_s"]),
                number(p["total_s"]),
                number(p["s_per_mb"]),
                number(p["rss_growth_mb"]),
                times(p["rss_growth_per_input_byte"]),
            ]
            for p in points
        ]
        parts += [
            f"**{SERIES_TITLES.get(key, key)}**",
            markdown_table(head, rows),
            f"Slope of time against size on log-log axes: {number(series['slope'])} (1.0 is linear).",
        ]
    settings = [
        f"embedder: {doc['embedder']}" if "embedder" in doc else "",
        f"chunking: {doc['chunking']}" if "chunking" in doc else "",
        f"median of {doc['repeat']} run{'s' if doc['repeat'] != 1 else ''} per point, each in a fresh process"
        if "repeat" in doc
        else "",
    ]
    parts.append("; ".join(s for s in settings if s).capitalize() + ".")
    return "\n\n".join(parts)


def _ingest(doc: dict[str, Any], name: str) -> str:
    chunker = ", ".join(f"{k} {v}" for k, v in doc.get("chunker", {}).items())
    caption = f"**{doc['corpus']}**: {number(doc['files'])} files, {number(doc['chunks'])} chunks" + (
        f"; {chunker}" if chunker else ""
    )
    rows = [
        [what, number(doc[key]["median"]), ", ".join(number(t) for t in doc[key]["runs"])]
        for what, key in (
            ("first, into a fresh store", "first_ingest_s"),
            ("again, nothing changed", "re_ingest_s"),
        )
    ]
    table = markdown_table(["ingest", "median s", "runs s"], rows)
    fraction = f"Re-ingest ÷ first ingest: {number(doc['re_ingest_fraction'])}."
    return "\n\n".join([caption, table, fraction])


def _serve(doc: dict[str, Any], name: str) -> str:
    head = [
        "store",
        "config",
        "chunks",
        "questions",
        "cold first stage ms",
        "first stage ms",
        "first token ms",
        "done ms",
        "server first stage ms",
        "server total ms",
    ]
    rows, stages, builds = [], [], []
    for store, point in doc["stores"].items():
        build = point.get("build", {})
        builds.append(
            point["corpus"]
            + (
                f" (ingest {number(build['ingest_s'])} s, index {number(build['index_s'])} s)"
                if build
                else ""
            )
        )
        for config, row in point["configs"].items():
            client, server = row["client_ms"], row["server_ms"]
            rows.append(
                [
                    store,
                    config,
                    number(point["chunks"]),
                    number(row["questions"]),
                    number(row["cold_first_stage_ms"]),
                    _spread(client["first_stage_ms"]),
                    _spread(client["first_token_ms"]),
                    _spread(client["done_ms"]),
                    _spread(server["first_stage_ms"]),
                    _spread(server["total_ms"]),
                ]
            )
            stages += [
                [store, config, stage, number(s["median"]), number(s["p90"])]
                for stage, s in row["stage_elapsed_ms"].items()
            ]
    notes = [
        "ms: median / p90 of the timed questions, client side unless marked server (the done event's "
        "timings); the cold question, which loads the indexes, is timed apart",
        f"providers: {doc['providers']}" if "providers" in doc else "",
        f"server: {doc['server']}" if "server" in doc else "",
    ]
    parts = [
        markdown_table(head, rows),
        "; ".join(n for n in notes if n) + ".",
        "Stores: " + "; ".join(builds) + ".",
        "**Each stage's own time** (its `elapsed_ms`)",
        markdown_table(["store", "config", "stage", "median ms", "p90 ms"], stages),
    ]
    if doc.get("target"):
        parts.append(f"Target: {doc['target']}")
    return "\n\n".join(parts)


def _make_run(doc: dict[str, Any], name: str) -> str:
    runs = [(key, value) for key, value in doc.items() if isinstance(value, dict) and "wall_s" in value]
    head = ["run", "wall s", "graph s", "sources observed", "partitions materialized", "rows reproduced"]
    sampled = any("sample" in run for _, run in runs)
    head += ["sample answer"] * sampled

    def optional(value: float | None) -> str:
        return "—" if value is None else number(value)

    rows = [
        [
            key,
            number(run["wall_s"]),
            optional(run.get("graph_s")),
            optional(run.get("sources_observed")),
            optional(run.get("partitions_materialized")),
            ", ".join(f"{r['suite']} {r['reproduced']} of {r['rows']}" for r in run.get("reproduced", []))
            or "—",
            *([_sample(run.get("sample"))] if sampled else []),
        ]
        for key, run in runs
    ]
    if "llama_cpp_installed" in (runs[0][1] if runs else {}):
        installed = "installed" if runs[0][1]["llama_cpp_installed"] else "not installed: nothing compiled"
        return "\n\n".join(
            [
                f"**{doc.get('benchmark', name)}**",
                markdown_table(head, rows),
                f"llama-cpp-python: {installed}.",
            ]
        )
    return "\n\n".join([f"**{doc.get('benchmark', name)}**", markdown_table(head, rows)])


def _sample(sample: dict[str, Any] | None) -> str:
    """The sample question's answer as make run printed it: who answered, spans cited, the check's line."""
    if not sample:
        return "—"
    by = sample.get("answerer") or "?"
    return f"{by}; {sample.get('spans_cited', 0)} span(s) cited; {sample.get('support') or 'not checked'}"


def _first_question(doc: dict[str, Any], name: str) -> str:
    """Each contender's whole wait and its parts (a CLI row's from ``ask --stages``, an API row's timed
    around the calls), the keyword and vector stages' own times, the kernels' state when asked, and
    when the compiled kernels became ready."""
    head = ["contender", "waited ms", "loading clear-rag ms", "opening ms", "retrieval ms"]
    head += ["keyword ms", "vector ms", "kernels when asked"]

    def cell(value: Any) -> str:
        return number(value) if isinstance(value, int | float) else "—"

    rows = []
    for c in doc["contenders"]:
        parts = c.get("parts_ms", {})
        stages = c.get("stages_ms", {})
        rows.append(
            [
                c["name"],
                cell(c.get("waited_ms")),
                cell(parts.get("loading clear-rag")),
                cell(parts.get("opening the store, indexes and models", c.get("open_ms"))),
                cell(parts.get("retrieval", c.get("retrieval_ms"))),
                cell(stages.get("keyword")),
                cell(stages.get("vector")),
                ", ".join(c.get("kernels_when_asked", [])) or "—",
            ]
        )
    data, ready = doc["data"], doc["readiness"]
    said = (
        f"{data['corpus']} ({data['chunks']} chunks), embedder {doc['embedder']}, {data['chat']}; median of "
        f"the rounds; {doc['fresh_install']}. The compiled kernels were ready "
        f"{number(ready['fresh_install']['ready_s'])} s after the first search on a fresh install and "
        f"{number(ready['warm_cache']['ready_s'])} s after it on a warm cache; until then searches take "
        "the numpy path."
    )
    return "\n\n".join([markdown_table(head, rows), said])


def _pdf(doc: dict[str, Any], name: str) -> str:
    """The PDF parsers on the same pages: seconds per file for each backend, and pages per second."""
    backends = list(doc["pages_per_s"])
    head = ["file", "pages", *(f"{b} s (median)" for b in backends)]
    rows = [[f["file"], str(f["pages"]), *(number(f[b]["median_s"]) for b in backends)] for f in doc["files"]]
    speeds = ", ".join(f"{b} {number(v)} pages/s" for b, v in doc["pages_per_s"].items())
    ratio = doc["layout_to_flat_speed"]
    summary = (
        f"Over {doc['total_pages']} pages, median of {doc['repeat']} parses each: {speeds}; layout ÷ flat "
        f"(pdfplumber's own extract_text) {times(ratio)} the pages per second. {doc.get('note', '')}"
    )
    return "\n\n".join([markdown_table(head, rows), summary])


def _scale(doc: dict[str, Any], name: str) -> str:
    """The chunks series of bench/growth.py: BM25 build and queries per engine, exact dense search
    against faiss, and the real ingest path, per corpus size."""
    engines: list[str] = doc["engines"]
    peers = [e for e in engines if e != OURS]
    head = ["chunks", *(f"{e} build s" for e in engines), *(f"{e} queries/s" for e in engines)]
    head += [f"clear-rag ÷ {p}, queries/s" for p in peers]
    keyword_rows = []
    for point in doc["points"]:
        rows = point["keyword"]["engines"]
        keyword_rows.append(
            [
                number(point["chunks"]),
                *(number(rows[e]["build_s"]) for e in engines),
                *(number(rows[e]["queries_per_s"]) for e in engines),
                *(times(rows[p]["clear_rag_over_peer_qps"]) for p in peers),
            ]
        )
    dense_rows = []
    for point in doc["points"]:
        methods = point["dense"]["engines"]
        dense_rows.append(
            [
                number(point["chunks"]),
                number(point["dense"]["vectors"] * point["dense"]["dim"] * 4 / 1e6),
                number(methods["clear-rag search"]["queries_per_s"]),
                number(methods["faiss IndexFlatIP"]["queries_per_s"]),
                times(methods["faiss IndexFlatIP"]["clear_rag_over_peer_qps"]),
            ]
        )
    memory_rows = [
        [number(point["chunks"]), *(number(point["keyword"]["engines"][e]["rss_peak_mb"]) for e in engines)]
        for point in doc["points"]
    ]
    ingest_rows = [
        [
            number(p["ingest"]["chunks"]),
            number(p["ingest"]["ingest_s"]),
            number(p["ingest"]["index_s"]),
            number(p["ingest"]["total_s"]),
            number(p["ingest"]["rss_growth_mb"]),
        ]
        for p in doc["points"]
        if "ingest" in p
    ]
    parts = [
        "**BM25: build (a fresh process each) and queries (one thread each)**",
        markdown_table(head, keyword_rows),
        "**Exact dense top 10, one query at a time, one thread each**",
        markdown_table(
            [
                "vectors",
                "matrix MB",
                "clear-rag queries/s",
                "faiss IndexFlatIP queries/s",
                "clear-rag ÷ faiss",
            ],
            dense_rows,
        ),
        "**BM25 build memory: the building process's resident peak over its start, MB**",
        markdown_table(["chunks", *(f"{e} MB" for e in engines)], memory_rows),
    ]
    if ingest_rows:
        parts += [
            f"**Ingest**: {doc['ingest']}; memory is the resident peak's growth over the process's start, MB",
            markdown_table(["chunks", "ingest s", "index s", "total s", "memory MB"], ingest_rows),
        ]
    return "\n\n".join(parts)


def scale_curves(doc: dict[str, Any], name: str) -> tuple[str, list[Any], str] | None:
    """(title, panels, x label) of the chunks series for ``plots.curves_svg``; None for another kind."""
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
                    line("clear-rag", lambda p: p["dense"]["engines"]["clear-rag search"]["queries_per_s"]),
                    line("faiss flat", lambda p: p["dense"]["engines"]["faiss IndexFlatIP"]["queries_per_s"]),
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


# -- the approximate-index experiment (bench/ann.py) ---------------------------------------------

EXACT = "clear-rag exact"
EXACT_SEARCH = "clear-rag search (int8 pre-pass + float32 rescoring)"
RECALL_FLOOR = 0.99  # the recall@10 an approximate index must reach to stand in for the exact one
# Exact search stays the default while one exact search costs at most this share of the rest of a
# hybrid question's retrieval (query embedding, BM25, fusion): past it, an approximate index saves
# more than a tenth of the retrieval time.
EXACT_SHARE = 0.1


def _ann_sections(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    found = [("SciFact", doc["scifact"])] if doc.get("scifact") else []
    return found + [(f"synthetic {number(s['vectors'])}", s) for s in doc.get("synthetic", [])]


def _setting(row: dict[str, Any]) -> str:
    return " ".join(f"{k} {v}" for k, v in row["settings"].items())


def _short(row: dict[str, Any]) -> str:
    """A bar's setting in few characters: ``M32 ef64`` for HNSW, ``72/64 lists`` for IVF."""
    shape = row["settings"]
    if "M" in shape:
        return f"M{shape['M']} ef{shape['efSearch']}"
    return f"{shape['nprobe']}/{shape['nlist']} lists"


def ann_best(rows: list[dict[str, Any]], index: str, floor: float = RECALL_FLOOR) -> dict[str, Any] | None:
    """The fastest row of ``index`` ("hnsw" or "ivf") whose recall@10 reaches ``floor``, or None."""
    fit = [r for r in rows if r["index"] == index and r["recall_at_10"] >= floor]
    return min(fit, key=lambda r: r["latency_ms"]) if fit else None


def ann_ratios(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """Bars of the ann plot: per corpus, the fastest HNSW and IVF settings at recall@10 of at least
    ``RECALL_FLOOR`` (their latency ÷ clear-rag exact's), then faiss IndexFlatIP against clear-rag's
    exact search at each dense size (faiss ÷ clear-rag)."""
    bars = []
    for label, section in _ann_sections(doc):
        exact = next(r for r in section["rows"] if r["index"] == EXACT)
        for index in ("hnsw", "ivf"):
            best = ann_best(section["rows"], index)
            if best is not None:
                bars.append(
                    (
                        f"{label}: {index} {_short(best)} (recall {number(best['recall_at_10'])})",
                        best["latency_ms"] / exact["latency_ms"],
                    )
                )
    for dense in doc.get("dense", []):
        engines = dense["engines"]
        bars.append(
            (
                f"dense {number(dense['vectors'])}: faiss IndexFlatIP (exact)",
                engines["faiss IndexFlatIP"]["latency_ms"] / engines[EXACT_SEARCH]["latency_ms"],
            )
        )
    return bars


def exact_crossover(doc: dict[str, Any]) -> dict[str, float] | None:
    """Where exact search stops being the right default: the vector count at which one exact search
    (one thread) costs ``EXACT_SHARE`` of the rest of a hybrid question's retrieval.

    The rest is SciFact's hybrid median retrieve time with the exact index, less its exact vector
    search; the exact latency at n vectors is interpolated linearly between the dense sizes measured
    (and beyond the largest, extrapolated in proportion to n, as a full scan grows)."""
    hybrid = {h["vector_index"]: h for h in doc.get("scifact", {}).get("hybrid", [])}
    points = sorted((d["vectors"], d["engines"][EXACT_SEARCH]["latency_ms"]) for d in doc.get("dense", []))
    if "exact" not in hybrid or not points:
        return None
    exact_at_scifact = next(r for r in doc["scifact"]["rows"] if r["index"] == EXACT)["latency_ms"]
    budget = EXACT_SHARE * (hybrid["exact"]["retrieve_ms_median"] - exact_at_scifact)
    chunks = points[-1][0] * budget / points[-1][1]
    for (n0, t0), (n1, t1) in itertools.pairwise([(0, 0.0), *points]):
        if t1 >= budget:
            chunks = n0 + (n1 - n0) * (budget - t0) / (t1 - t0) if t1 > t0 else n1
            break
    return {"budget_ms": budget, "chunks": float(f"{chunks:.2g}")}


def _ann_table(label: str, section: dict[str, Any]) -> list[str]:
    exact = next(r for r in section["rows"] if r["index"] == EXACT)
    scored = "doc_ndcg_at_10" in exact
    head = [
        "index",
        "backend and settings",
        "build s",
        "index MB",
        "recall@10",
        "latency ms",
        "latency ÷ exact",
    ]
    rows = [
        [
            r["index"],
            r["backend"],
            "—" if r["build_s"] is None else number(r["build_s"]),
            number(r["index_bytes"] / 1e6),
            number(r["recall_at_10"]),
            number(r["latency_ms"]),
            times(r["latency_ms"] / exact["latency_ms"]),
            *([number(r["doc_ndcg_at_10"])] if scored else []),
        ]
        for r in section["rows"]
    ]
    parts = [
        f"**{label}: {number(section['vectors'])} vectors of {section['dim']} dimensions, "
        f"{number(section['queries'])} queries**",
        markdown_table(head + (["doc nDCG@10"] if scored else []), rows),
        f"Data: {section['data']}.",
    ]
    if section.get("hybrid"):
        hybrid = [
            [h["vector_index"], number(h["doc_ndcg_at_10"]), number(h["retrieve_ms_median"])]
            for h in section["hybrid"]
        ]
        parts += [
            f"**{label}, hybrid end to end** ({section['hybrid'][0]['config']}; `vector_index` at its "
            "defaults: hnsw M 32, efConstruction 100, efSearch 128; ivf nlist sqrt(n), nprobe 32)",
            markdown_table(
                ["vector_index", "doc nDCG@10", "retrieve ms, median (query embedding included)"], hybrid
            ),
        ]
    return parts


def _ann_reach(doc: dict[str, Any]) -> str:
    """Per corpus, the fastest setting at recall@10 of at least ``RECALL_FLOOR`` and its build time,
    or that none of the settings built reached it."""
    said = []
    for label, section in _ann_sections(doc):
        fit = [b for b in (ann_best(section["rows"], i) for i in ("hnsw", "ivf")) if b is not None]
        if not fit:
            said.append(f"on {label} none of the settings built did")
            continue
        best = min(fit, key=lambda r: r["latency_ms"])
        said.append(
            f"on {label}, {best['index']} {_setting(best)} ({number(best['recall_at_10'])} at "
            f"{number(best['latency_ms'])} ms, built in {number(best['build_s'])} s)"
        )
    return "; ".join(said)


def _ann(doc: dict[str, Any], name: str) -> str:
    parts = [p for label, section in _ann_sections(doc) for p in _ann_table(label, section)]
    if doc.get("dense"):
        rows = [
            [
                number(d["vectors"]),
                method,
                number(e["latency_ms"]),
                times(e["clear_rag_over_peer_speed"]),
                f"{e['same_top10_as_clear_rag']} of {d['queries']}",
            ]
            for d in doc["dense"]
            for method, e in d["engines"].items()
        ]
        head = ["vectors", "method", "latency ms", "peer ÷ clear-rag latency", "same top 10 as clear-rag"]
        sizes = ", ".join(
            f"{number(d['int8_copy_bytes'] / 1e6)} MB to {number(d['matrix_bytes'] / 1e6)} MB"
            for d in doc["dense"]
        )
        parts += [
            "**Exact dense top 10, one query at a time, one thread each**",
            markdown_table(head, rows),
            "Synthetic clustered vectors (`bench.ann.synthetic_vectors`); the methods take turns query by "
            f"query. The int8 copy clear-rag searches first adds, by size: {sizes} of float32 matrix.",
        ]
    crossover = exact_crossover(doc)
    if crossover is not None:
        parts.append(
            f"Exact search stays the default up to about **{number(crossover['chunks'])} chunks**: there "
            f"one exact search (one thread) costs {number(crossover['budget_ms'])} ms, a tenth of the rest "
            "of a hybrid SciFact question's retrieval in the same run (query embedding, BM25, fusion). "
            f"Past it an approximate index saves more than that where it reaches recall@10 of at least "
            f"{RECALL_FLOOR}: {_ann_reach(doc)}."
        )
    notes = [f"{key.capitalize()}: {doc[key]}" for key in ("latency", "threads", "memory") if doc.get(key)]
    parts.append(". ".join(notes) + ".")
    return "\n\n".join(parts)


def _embed(doc: dict[str, Any], name: str) -> str:
    """Embedding throughput (bench/embed.py): texts/s of each embedder or step, its ratio to the base
    the file names, and the min and median cosine of its vectors to sentence-transformers' fp32 ones."""
    section = doc.get("main") or doc
    table = section.get("contenders") or section["steps"]
    base = next(k for k in next(iter(table.values())) if k.startswith("ratio_to_"))
    head = ["embedder", "texts/s", f"÷ {base.removeprefix('ratio_to_')}", "cosine min", "cosine median"]
    rows = [
        [
            label,
            number(row["texts_per_s"]),
            times(row[base]),
            *(f"{c:.4f}" for c in row["cosine_to_torch_fp32"].values()),
        ]
        for label, row in table.items()
    ]
    how = (
        f"{section['slices']} slices interleaved, median"
        if "slices" in section
        else f"{section['rounds']} rounds interleaved, median"
    )
    st = section.get("settings", {}).get("sentence-transformers", {})
    peer = f"; sentence-transformers batch {st['batch_size']}, its own length sorting" if st else ""
    summary = (
        f"{doc['data']}: {_plural(section['texts'], 'text')} timed, {doc['max_tokens']} tokens, "
        f"{doc['threads']} threads each; {how}{peer}; cosine to sentence-transformers on the fp32 weights."
    )
    return "\n\n".join([markdown_table(head, rows), summary])


def _batch(doc: dict[str, Any], name: str) -> str:
    """Batch size of the shipped models (bench/batch.py): per workload and size, ms per text or pair,
    the ratio to the fastest size, and the largest change of a row's output against the row alone."""
    head = ["model and workload", "batch", "ms each", "÷ fastest", "largest change against alone"]
    rows = []
    for label, part in doc["parts"].items():
        for size, row in part["by_batch"].items():
            moved = row["max_abs_diff_to_alone"]
            rows.append(
                [
                    f"{label}: {part['data']}" if size == next(iter(part["by_batch"])) else "",
                    size + (" (fastest)" if int(size) == part["fastest"] else ""),
                    number(row["ms_per_unit"]),
                    times(row["ratio_to_fastest"]),
                    "0 (exactly)" if moved == 0 else f"{moved:.4g}",
                ]
            )
    said = (
        f"{doc['rounds']} rounds, the sizes' order reversing each round, median; 2 threads. The last "
        "column is the largest absolute difference, over every row, between a row's output (a vector "
        "component, or a logit) in the batched call and the same row computed alone."
    )
    return "\n\n".join([markdown_table(head, rows), said])


def _rankflow(doc: dict[str, Any], name: str) -> str:
    """The page's rank flow (bench/rankflow.py): per stored question and build of the page, the wait
    from a click in the history to the painted replay, the longest main-thread task in it, and the
    synchronous redraws, medians over the rounds, with this tree's per-round ratio to the peer."""
    head = ["question", "page", "boxes", "replay painted ms", "longest task ms"]
    head += ["rows: all ms", "rows: back ms", "unfold phrasings ms"]

    def shown(value: float | None) -> str:
        return "—" if value is None else number(value)

    rows, ratios = [], []
    for question, point in doc["traces"].items():
        for i, (page, row) in enumerate(point["contenders"].items()):
            rows.append(
                [
                    f"{question} ({point['stages']} stages)" if i == 0 else "",
                    page,
                    number(row["boxes"]),
                    *[shown(row[key]) for key in ("painted_ms", "longest_task_ms", "rows_all_ms")],
                    *[shown(row[key]) for key in ("rows_back_ms", "unfold_ms")],
                ]
            )
            if "ratio_to_peer" in row:
                r = row["ratio_to_peer"]
                ratios.append(
                    f"{question}: painted {shown(r['painted_ms'])}×, longest task "
                    f"{shown(r['longest_task_ms'])}×, rows all {shown(r['rows_all_ms'])}×"
                )
    said = (
        f"{doc['rounds']} rounds, the pages' order alternating, median; a long task is one over 50 ms "
        f"(0: none was). {doc['corpus']}; {doc['providers']}; {doc['browser']}; peer: {doc['peer']}."
    )
    parts = [markdown_table(head, rows), said]
    if ratios:
        parts.append("This tree ÷ the peer, median of the per-round ratios: " + "; ".join(ratios) + ".")
    return "\n\n".join(parts)


def _package_size(doc: dict[str, Any], name: str) -> str:
    """What pip builds of the code and of the weights (``bench/package_size.py``), and a checkout's
    files, beside the code package of an earlier commit where one was measured."""
    rows = [
        ["code", f"`{doc['code_wheel']}`", number(doc["code_wheel_mb"])],
        ["weights", f"`{doc['weights_wheel']}`", number(doc["weights_wheel_mb"])],
    ]
    said = f"A checkout's files: {number(doc['checkout_mb'])} MB"
    if doc.get("before"):
        rows.append(
            [
                f"code at {doc['before']}, weights inside",
                f"`{doc['code_wheel_before']}`",
                number(doc["code_wheel_mb_before"]),
            ]
        )
        said += f" ({number(doc['checkout_mb_before'])} MB at {doc['before']})"
    table = markdown_table(["package", "wheel", "MB"], rows)
    return f"{table.rstrip()}\n\n{said}; wheels built with `pip wheel --no-deps`."


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
    "growth": _growth,
    "ingest": _ingest,
    "serve": _serve,
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
}


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


def bench_table(doc: dict[str, Any], name: str) -> str:
    """``results/bench/<name>.json`` as Markdown: its figures, its ratios against peers where it has
    any, and the line saying where, when and from which file."""
    kind = kind_of(doc, name)
    render = KINDS[kind] if kind is not None else _generic
    body = _read(lambda: render(doc, name), name)
    return f"{body}\n\n{footer(doc, name)}\n"
