"""The cost of growth by chunk count (bench/growth.py's chunks series) against the peers."""

from __future__ import annotations

from typing import Any

from clear_rag.report.bench.common import (
    OURS,
    number,
    times,
)
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
    """bench/index_size.py: a keyword index's bytes per passage on disk and seconds to open it, per
    engine and corpus size, with clear-rag's size against each other engine's (above 1: clear-rag's
    files are smaller)."""
    engines: list[str] = list(doc["points"][0]["engines"]) if doc["points"] else []
    head = ["passages", "engine", "bytes per passage", "MB", "load s", "its bytes ÷ clear-rag's"]
    rows = []
    for point in doc["points"]:
        ours = point["engines"][OURS]["bytes"]
        for engine in engines:
            figures = point["engines"][engine]
            rows.append(
                [
                    number(point["passages"]),
                    engine,
                    number(figures["bytes_per_passage"]),
                    number(figures["bytes"] / 1e6),
                    number(figures["load_s"]),
                    times(figures["bytes"] / ours) if engine != OURS else "",
                ]
            )
    return f"{markdown_table(head, rows).rstrip()}\n\nData: {doc['data']}; the same for every engine."
