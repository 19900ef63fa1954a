"""Retrieval against the peers (bench/retrieval.py): BM25, and the ratios its table and its plot both
read (``retrieval_ratios``). Exact dense search has its own file (``clear_rag.report.bench.dense``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from clear_rag.report.bench.common import OURS, _plural, number, times
from clear_rag.report.tables import markdown_table


@dataclass(frozen=True, slots=True)
class Ratio:
    """clear-rag against one peer on one measure; ``value`` above 1 favours clear-rag."""

    section: str  # the corpus of a keyword suite ("scifact", "synthetic-10k")
    peer: str  # the engine or method as the file names it, backend and settings included
    measure: str  # "build", or a keyword measure of queries/s (``keyword_measure``, ``ONE_AT_A_TIME``)
    value: float

    @property
    def label(self) -> str:
        return f"{self.peer} ({self.section}, {self.measure})"


ONE_AT_A_TIME = "queries/s, one at a time"


def keyword_measure(row: dict[str, Any]) -> str:
    """What a keyword row's queries/s ratio compares: batched calls of both engines, or (a peer
    without a batched API) clear-rag's batched call against the peer's loop of one-query calls.
    Files written before the one-at-a-time rows say neither: their rows are "queries/s"."""
    if "batched_api" not in row:
        return "queries/s"
    return "queries/s, batched" if row["batched_api"] else "queries/s, clear-rag batched, peer looped"


def retrieval_ratios(doc: dict[str, Any], name: str = "retrieval") -> list[Ratio]:
    """Every peer of the retrieval benchmark against clear-rag, from the file's figures:

    - keyword queries, batched and one query at a time: clear-rag queries/s on the very queries the
      peer answered, timed in turn with it, ÷ the peer's (``clear_rag_queries_per_s_same_queries /
      queries_per_s``);
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
            found.append(Ratio(section, peer, keyword_measure(row), qps))
            found.append(Ratio(section, peer, "build", row["build_s"] / ours["build_s"]))
        for peer, row in suite.get("one_at_a_time", {}).items():
            if not peer.startswith(OURS):
                qps = row["clear_rag_queries_per_s_same_queries"] / row["queries_per_s"]
                found.append(Ratio(section, peer, ONE_AT_A_TIME, qps))
    return found


def _retrieval(doc: dict[str, Any], name: str) -> str:
    ratios = {(r.section, r.peer, r.measure): r.value for r in retrieval_ratios(doc, name)}

    def ratio(section: str, peer: str, measure: str) -> str:
        return times(ratios[section, peer, measure]) if (section, peer, measure) in ratios else "—"

    parts = []
    settings = f"k1 {doc['k1']}, b {doc['b']}, top {doc['k']}" if {"k1", "b", "k"} <= doc.keys() else ""
    for section, suite in doc.get("keyword", {}).items():
        one = suite.get("one_at_a_time", {})
        data = _data(section, suite)
        head = [
            "engine",
            *(["data", "called"] if one else []),
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
                *([data, "batched" if row["batched_api"] else "a loop: no batched API"] if one else []),
                number(row["build_s"]),
                number(row["rss_peak_mb"]),
                number(row["queries_per_s"]),
                number(row["queries_timed"]),
                ratio(section, engine, keyword_measure(row)),
                ratio(section, engine, "build"),
                number(row["agreement"]["overlap_at_10"]),
            ]
            for engine, row in suite["engines"].items()
        ]
        caption = f"**BM25 on {suite['corpus']}**" + (f" ({settings})" if settings else "")
        parts += [caption, markdown_table(head, rows)]
        if one:
            parts += _one_at_a_time(section, suite, data, ratio)
    fewer = [
        f"{engine} on {section}: {_plural(len(row['build_runs_s']), 'build')}"
        for section, suite in doc.get("keyword", {}).items()
        for engine, row in suite["engines"].items()
        if "repeat" in doc and len(row.get("build_runs_s", [])) not in (0, doc["repeat"])
    ]
    notes = [
        (f"Medians of {doc['repeat']} runs" if "repeat" in doc else "Medians of the recorded runs")
        + (f" ({', '.join(fewer)})" if fewer else ""),
        "build s: a fresh process per build, clear-rag's weighing every posting as the peers' do (its "
        "searches otherwise weigh a term at its first query); RSS MB: growth of the resident high-water "
        "mark during a build",
        "queries/s: one thread, query tokenising included, batched (one call for all the queries) "
        "unless the table says one query at a time; a peer timed on fewer queries is compared with "
        "clear-rag on the same queries, each peer's loops taking turns with clear-rag's",
        "both ratios above 1 favour clear-rag",
    ]
    parts.append("; ".join(notes) + ".")
    if doc.get("threads"):
        parts.append(f"Threads: {doc['threads']}.")
    if doc.get("targets"):
        parts.append("Targets, as the run judged them:\n\n" + "\n".join(f"- {t}" for t in doc["targets"]))
    return "\n\n".join(parts)


def _data(section: str, suite: dict[str, Any]) -> str:
    """What a keyword suite searched, as each of its rows says it: "scifact: 5,183 real documents"."""
    return f"{section}: {number(suite['documents'])} {suite.get('data', '')} documents".replace("  ", " ")


def _one_at_a_time(
    section: str, suite: dict[str, Any], data: str, ratio: Callable[[str, str, str], str]
) -> list[str]:
    """The suite's one-query-at-a-time table (one engine call per query, as ask and serve search),
    its ratios with the CPU-time ratio beside them, and the load the suite ran under."""

    def against(engine: str, row: dict[str, Any]) -> str:
        if engine.startswith(OURS):
            return "—"
        cpu = times(row["cpu_clear_rag_over_peer_qps"])
        return f"{ratio(section, engine, ONE_AT_A_TIME)} (CPU time {cpu})"

    rows = [
        [
            engine,
            data,
            f"`{row['call']}`",
            number(row["queries_per_s"]),
            number(row["queries_timed"]),
            against(engine, row),
            number(row["agreement"]["overlap_at_10"]),
        ]
        for engine, row in suite["one_at_a_time"].items()
    ]
    head = [
        "engine",
        "data",
        "one call per query",
        "queries/s",
        "queries timed",
        "clear-rag ÷ peer, queries/s",
        "overlap@10 with clear-rag",
    ]
    load = suite.get("load_average")
    during = (
        f" Load average (1, 5 and 15 minutes) {', '.join(number(x) for x in load['start'])} at the suite's "
        f"start and {', '.join(number(x) for x in load['end'])} at its end, on this machine's cores."
        if load
        else ""
    )
    return [
        f"**One query at a time, {data}**: one engine call per query, as `ask` and `serve` search.",
        markdown_table(head, rows),
        "Each peer's one-at-a-time loops took turns with clear-rag's over the same queries, round by "
        f"round; the CPU-time ratio is beside the wall-time one.{during}",
    ]
