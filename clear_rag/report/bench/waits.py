"""What a person waits for: the live page (bench/serve.py), `make run` (bench/make_run.py), the first
question after an install (bench/first_question.py) and PDF parsing (bench/pdf.py)."""

from __future__ import annotations

from typing import Any

from clear_rag.report.bench.common import (
    _spread,
    number,
    times,
)
from clear_rag.report.tables import markdown_table


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
    rows, stages, builds, against = [], [], [], []
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
            if "context_vs_retrieval" in row:
                share = row["context_vs_retrieval"]
                against.append(
                    [
                        store,
                        config,
                        _spread(share["retrieval_ms"]),
                        _spread(share["context_ms"]),
                        _spread(share["ratio"]),
                    ]
                )
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
    if against:
        parts += [
            "**The context stage against retrieval**, per question: the retrieval stages' own times "
            "summed (keyword, vector, fusion), the context stage's, and the one over the other "
            "(median / p90)",
            markdown_table(
                ["store", "config", "retrieval stages ms", "context ms", "context ÷ retrieval"], against
            ),
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


def _serve_memory(doc: dict[str, Any], name: str) -> str:
    """bench/serve_memory.py: at each size (a point), a fresh ``clear-rag serve`` per round opening a
    store and answering one question, per side (the current code and an earlier commit's): resident
    MB once it listens, at its peak and after the answer, and the seconds to open the store's indexes
    on their own, medians; each side's peak against the current code's at the same size (above 1:
    the side peaks higher). A point where the earlier commit was not measured says so under the table."""
    points: list[dict[str, Any]] = doc["points"]
    head = ["code", "chunks", "listening MB", "peak MB", "after answer MB", "first answer s"]
    head += ["open indexes s", "its peak ÷ clear-rag's"]
    rows, unmeasured = [], []
    for point in points:
        ours = point["sides"]["clear-rag"]
        for side, figures in point["sides"].items():
            ratio = figures["peak_rss_mb"] / ours["peak_rss_mb"]
            rows.append(
                [
                    f"{side} ({doc['before']})" if side != "clear-rag" and "before" in doc else side,
                    number(figures["build"]["chunks"]),
                    number(figures["rss_listening_mb"]),
                    number(figures["peak_rss_mb"]),
                    number(figures["rss_after_answer_mb"]),
                    number(figures["first_answer_s"]),
                    number(figures["open_indexes_s"]),
                    times(ratio) if side != "clear-rag" else "",
                ]
            )
        if "before_not_measured" in point:
            unmeasured.append(f"At {number(point['docs'])} passages: {point['before_not_measured']}.")
    stores = "; ".join(dict.fromkeys(p["sides"]["clear-rag"]["build"]["corpus"] for p in points))
    note = (
        f"Median of {doc['rounds']} rounds, each a fresh server after one untimed round; "
        f"{doc['server']}. Stores: {stores}. Open indexes: a fresh process beside each server opening "
        "the BM25 and vector indexes as a first question does (manifest read, files checked against "
        "it, index loaded, ids checked)."
    )
    return "\n\n".join([markdown_table(head, rows).rstrip(), " ".join([note, *unmeasured])])
