"""Retrieval against the peers (bench/retrieval.py): BM25, and the ratios its table and its plot both
read (``retrieval_ratios``). Exact dense search has its own file (``clear_rag.report.bench.dense``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from clear_rag.report.bench.common import OURS, _plural, number, times
from clear_rag.report.tables import markdown_table


@dataclass(frozen=True, slots=True)
class Ratio:
    """clear-rag against one peer on one measure; ``value`` above 1 favours clear-rag."""

    section: str  # the corpus of a keyword suite ("scifact", "synthetic")
    peer: str  # the engine or method as the file names it, backend and settings included
    measure: str  # "queries/s" or "build"
    value: float

    @property
    def label(self) -> str:
        return f"{self.peer} ({self.section}, {self.measure})"


def retrieval_ratios(doc: dict[str, Any], name: str = "retrieval") -> list[Ratio]:
    """Every peer of the retrieval benchmark against clear-rag, from the file's figures:

    - keyword queries: clear-rag queries/s on the very queries the peer answered ÷ the peer's
      (``clear_rag_queries_per_s_same_queries / queries_per_s``);
    - keyword build: the peer's median build seconds ÷ clear-rag's (``build_s``), a speed-up.
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
    return found


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
