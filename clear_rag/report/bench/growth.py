"""How ingest and indexing grow (bench/growth.py, bench/ingest.py)."""

from __future__ import annotations

from typing import Any

from clear_rag.report.bench.common import (
    number,
    times,
)
from clear_rag.report.tables import markdown_table

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
