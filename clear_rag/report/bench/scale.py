"""Past one machine's size: the cost of growth by chunk count (bench/growth.py's chunks series) against
the peers, the growth series read against a machine's memory, and the executors (bench/executor.py)."""

from __future__ import annotations

import statistics
from typing import Any

from clear_rag.report.bench.common import (
    OURS,
    number,
    times,
)
from clear_rag.report.bench.growth import SERIES_TITLES
from clear_rag.report.tables import markdown_table


def one_query_rates(dense: dict[str, Any]) -> tuple[float, float, float]:
    """clear-rag's and faiss flat's queries/s one query at a time on one thread, and clear-rag ÷ faiss,
    from a point's dense figures: the rows of ``bench.dense.measure`` (``rows``), or the ``engines``
    of the suite bench/retrieval.py had before it (files written until issue 32)."""
    if "rows" in dense:
        one = {
            r["engine"]: r for r in dense["rows"] if r["mode"] == "one query at a time" and r["threads"] == 1
        }
        ours, faiss = one[OURS], one["faiss IndexFlatIP"]
        return ours["queries_per_s"], faiss["queries_per_s"], faiss["clear_rag_over_peer"]
    methods = dense["engines"]
    ours, faiss = methods["clear-rag search"], methods["faiss IndexFlatIP"]
    return ours["queries_per_s"], faiss["queries_per_s"], faiss["clear_rag_over_peer_qps"]


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
        ours, faiss, ratio = one_query_rates(point["dense"])
        dense_rows.append(
            [
                number(point["chunks"]),
                number(point["dense"]["vectors"] * point["dense"]["dim"] * 4 / 1e6),
                number(ours),
                number(faiss),
                times(ratio),
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


def _index_size(doc: dict[str, Any], name: str) -> str:
    """bench/index_size.py: a keyword index's bytes per passage on disk and seconds to open it (and,
    where the file has it, to answer the first query after opening), per engine and corpus size, with
    clear-rag's size against each other engine's (above 1: clear-rag's files are smaller); then, where
    the file has them, the cold figures of a fresh process opening the index and answering one query,
    with each engine's time to the answer against clear-rag's."""
    engines: list[str] = list(doc["points"][0]["engines"]) if doc["points"] else []
    asked = any("query_after_load_s" in f for p in doc["points"] for f in p["engines"].values())
    head = ["passages", "engine", "bytes per passage", "MB", "load s"]
    head += ["first query after load s"] if asked else []
    head.append("its bytes ÷ clear-rag's")
    rows, cold_rows = [], []
    for point in doc["points"]:
        ours = point["engines"][OURS]
        for engine in engines:
            figures = point["engines"][engine]
            theirs = engine != OURS
            row = [
                number(point["passages"]),
                engine,
                number(figures["bytes_per_passage"]),
                number(figures["bytes"] / 1e6),
                number(figures["load_s"]),
            ]
            if asked:  # a file written before the first query was timed has no such column
                row.append(number(figures["query_after_load_s"]) if "query_after_load_s" in figures else "")
            rows.append([*row, times(figures["bytes"] / ours["bytes"]) if theirs else ""])
            if "cold_s" in figures:
                cold_rows.append(
                    [
                        number(point["passages"]),
                        engine,
                        number(figures["cold_s"]),
                        number(figures["cold_load_s"]),
                        number(figures["first_query_s"]),
                        number(figures["rss_before_load_mb"]),
                        number(figures["peak_rss_mb"]),
                        number(figures["peak_rss_mb"] - figures["rss_before_load_mb"]),
                        times(figures["cold_s"] / ours["cold_s"]) if theirs else "",
                    ]
                )
    parts = [markdown_table(head, rows).rstrip()]
    if cold_rows:
        cold_head = [
            "passages",
            "engine",
            "spawn to answer s",
            "open s",
            "first query s",
            "MB before open",
            "peak MB",
            "peak - before MB",
            "its spawn to answer ÷ clear-rag's",
        ]
        parts += [
            "**Cold: a fresh process imports the engine, opens the index and answers one query** "
            f"(median of {doc.get('repeat', 5)} rounds; memory is the process's resident size, MB)",
            markdown_table(cold_head, cold_rows).rstrip(),
        ]
    parts.append(f"Data: {doc['data']}; the same for every engine.")
    return "\n\n".join(parts)


def _executor(doc: dict[str, Any], name: str) -> str:
    """bench/executor.py: each contender's median wall time over a suite's evaluation partitions, the
    in-process time over it (above 1: the contender is faster than in process), its rounds, and for a
    Dask cluster the seconds its start took (included in the wall time)."""
    wall: dict[str, list[float]] = doc["wall_s"]
    steps: dict[str, list[float]] = doc.get("step_seconds_sum", {})
    starts: dict[str, list[float]] = doc.get("cluster_start_s", {})
    head = ["contender", "median s", "rounds s", "in process ÷ it", "cluster start s", "inside the steps s"]
    rows = [
        [
            f"`{contender}`",
            number(doc[f"{contender}_median_s"]),
            ", ".join(number(t) for t in runs),
            times(doc[f"speedup_{contender}"]) if f"speedup_{contender}" in doc else "",
            number(statistics.median(starts[contender])) if starts.get(contender) else "",
            number(statistics.median(steps[contender])) if steps.get(contender) else "",
        ]
        for contender, runs in wall.items()
    ]
    described = [f"- `{c}`: {doc['contenders'][c]}" for c in wall if c in doc.get("contenders", {})]
    caption = (
        f"**{doc['what']}**: {number(doc['partitions'])} partitions, {number(doc['max_concurrent'])} runs "
        f"at once out of process, {number(doc['repeat'])} rounds"
    )
    note = str(doc["note"])
    return "\n\n".join(
        [caption, markdown_table(head, rows), "\n".join(described), f"{note[:1].upper()}{note[1:]}."]
    )


MACHINES_GB = (16, 64, 256)  # the memories of the machines the projection is given for


def _memory(doc: dict[str, Any], name: str) -> str:
    """bench/growth.py's series read against one machine's memory: the ingest's resident growth per
    chunk at each size, and the marginal rate between the two largest sizes (the fixed cost of the
    process left out) projected linearly to the chunks whose ingest one machine of 16, 64 or 256 GB
    holds: ``GB × 10⁹ ÷ (ΔRSS ÷ Δchunks)``, to three significant figures."""
    parts = []
    for key in ("document_size", "corpus_size"):
        points = doc.get(key, {}).get("points", [])
        if len(points) < 2:
            continue
        chunks = [p["runs"][0]["chunks"] for p in points]
        rows = [
            [number(n), number(p["rss_growth_mb"]), number(p["rss_growth_mb"] * 1e3 / n)]
            for n, p in zip(chunks, points, strict=True)
        ]
        marginal = (
            (points[-1]["rss_growth_mb"] - points[-2]["rss_growth_mb"]) * 1e6 / (chunks[-1] - chunks[-2])
        )
        # to three significant figures: a linear projection is no more exact than that
        fits = ", ".join(f"{gb} GB: {number(float(f'{gb * 1e9 / marginal:.3g}'))}" for gb in MACHINES_GB)
        parts += [
            f"**{SERIES_TITLES.get(key, key)}**",
            markdown_table(["chunks", "RSS growth MB", "KB per chunk"], rows),
            f"Marginal rate from {number(chunks[-2])} to {number(chunks[-1])} chunks: "
            f"{number(marginal / 1e3)} KB per chunk; at that rate one machine's ingest holds, in chunks: "
            f"{fits}.",
        ]
    return "\n\n".join(parts)
