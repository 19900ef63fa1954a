"""Exact dense search against numpy and faiss flat (bench/dense.py): one query at a time and batched,
one thread and every core, per set of vectors named as what it is (real or random, and its size).

The ratio of each row is the one the benchmark recorded: the median over rounds of the peer's seconds
÷ clear-rag's in the same round, mode and threads (``clear_rag_over_peer``), above 1 favouring
clear-rag. It is not recomputed from the two medians of queries/s, which may differ from it a little.
"""

from __future__ import annotations

from typing import Any

from clear_rag.report.bench.common import OURS, number, times
from clear_rag.report.tables import markdown_table


def _threads(count: int) -> str:
    return "one" if count == 1 else f"{count} (every core)"


def dense_ratios(doc: dict[str, Any]) -> list[tuple[str, float]]:
    """Bars of the plot: each peer against clear-rag in its set, mode and threads, as recorded."""
    return [
        (
            f"{row['engine']} ({s['kind']} {number(s['vectors'])}, {row['mode']}, "
            f"{_threads(row['threads'])} thread{'' if row['threads'] == 1 else 's'})",
            float(row["clear_rag_over_peer"]),
        )
        for s in doc["sets"]
        for row in s["rows"]
        if not row["engine"].startswith(OURS)
    ]


def _load(load: list[float] | None) -> str:
    """The load average (1, 5, 15 minutes) when a set's measuring began and ended, where recorded."""
    if not load:
        return ""
    start, end = (", ".join(number(x) for x in part) for part in (load[:3], load[3:]))
    return f" Load average while it was measured: {start} at the start, {end} at the end."


def _dense(doc: dict[str, Any], name: str) -> str:
    parts = []
    for s in doc["sets"]:
        rows = [
            [
                row["mode"],
                _threads(row["threads"]),
                row["engine"],
                number(row["queries_per_s"]),
                "—" if row["engine"].startswith(OURS) else times(row["clear_rag_over_peer"]),
                f"{row['same_top10_as_reference']:,} of {s['queries']:,}",
            ]
            for row in s["rows"]
        ]
        head = [
            "mode",
            "threads",
            "engine",
            "queries/s",
            "clear-rag ÷ engine",
            "top 10 as numpy's",
        ]
        parts += [
            f"**Exact dense top {doc['k']}, {s['kind']} vectors: {number(s['vectors'])} of "
            f"{number(s['dim'])} dimensions, {number(s['queries'])} queries**",
            markdown_table(head, rows),
            f"Vectors: {s['data']}." + _load(s.get("load_average")),
        ]
    parts.append(
        f"Medians of {doc['rounds']} interleaved rounds; clear-rag ÷ engine is the median of the "
        "per-round ratios of seconds (above 1: clear-rag faster); top 10 as numpy's: queries whose ids "
        "and order equal the numpy brute-force reference's."
    )
    parts.append(f"Threads: {doc['threads']}.")
    if doc.get("targets"):
        parts.append("Targets, as the run judged them:\n\n" + "\n".join(f"- {t}" for t in doc["targets"]))
    return "\n\n".join(parts)
