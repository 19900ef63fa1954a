"""Traces as data: JSON in and out, and a plain-text rendering of how ranks moved between stages.

A trace is a returned value, not a log. It is stored as JSON in the store's ``traces`` table and can
be read back and printed (``clear-rag replay``) without any model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict
from typing import Any

from clear_rag.types import Candidate, Citation, Contribution, StageResult, Trace


def to_dict(trace: Trace) -> dict[str, Any]:
    return asdict(trace)


def to_json(trace: Trace) -> str:
    return json.dumps(to_dict(trace), ensure_ascii=False)


def from_dict(data: Mapping[str, Any]) -> Trace:
    stages = tuple(
        StageResult(
            name=stage["name"],
            candidates=tuple(_candidate(c) for c in stage["candidates"]),
            elapsed_ms=stage["elapsed_ms"],
            detail=stage.get("detail", {}),
        )
        for stage in data["stages"]
    )
    return Trace(
        id=data["id"],
        query=data["query"],
        phrasings=tuple(data.get("phrasings", ())),
        stages=stages,
        context=data.get("context", ""),
        answer=data.get("answer", ""),
        citations=tuple(Citation(**c) for c in data.get("citations", ())),
        config=data.get("config", {}),
        models=data.get("models", {}),
        created_at=data.get("created_at", ""),
        steps=data.get("steps", {}),
    )


def from_json(text: str) -> Trace:
    return from_dict(json.loads(text))


def _candidate(data: Mapping[str, Any]) -> Candidate:
    sources = {name: Contribution(**c) for name, c in data.get("sources", {}).items()}
    return Candidate(data["chunk_id"], data["doc_id"], data["start"], data["end"], data["score"], sources)


def without_timings(trace: Trace) -> dict[str, Any]:
    """The trace's content with its id, creation time and elapsed times blanked, for comparisons."""
    data = to_dict(trace)
    data["id"], data["created_at"] = "", ""
    for stage in data["stages"]:
        stage["elapsed_ms"] = 0.0
        stage["detail"] = {k: v for k, v in stage["detail"].items() if not k.endswith("_ms")}
    return data


def render(trace: Trace, *, top: int = 5, texts: Mapping[str, str] | None = None) -> str:
    """Each stage's top candidates and how their ranks moved from the stage before.

    ``texts`` maps chunk ids to their text for a short preview (a replay without the store has none).
    """
    lines = [f"trace {trace.id}  {trace.created_at}", f"query: {trace.query}"]
    rewrite = trace.steps.get("rewrite")
    if isinstance(rewrite, dict) and rewrite.get("proposed"):
        verdict = "searched as" if rewrite.get("accepted") else "rewrite refused"
        lines.append(f"  {verdict}: {rewrite['proposed']}  ({rewrite.get('reason', '')})")
    if len(trace.phrasings) > 1:
        lines += [f"  also searched as: {p}" for p in trace.phrasings[1:]]
    ranks: dict[str, dict[str, int]] = {}
    for stage in trace.stages:
        before = ranks.get(str(stage.detail.get("input", "")))
        lines.append(
            f"\n[{stage.name}] {len(stage.candidates)} candidates in {stage.elapsed_ms:.1f} ms"
            + _detail(stage.detail)
        )
        for rank, cand in enumerate(stage.candidates[:top], start=1):
            moved = _move(rank, before.get(cand.chunk_id)) if before is not None else ""
            lines.append(f"  {rank:>3}. {moved:<5} {cand.score:9.4f}  {cand.chunk_id}")
            sources = _sources(cand, stage.name)
            preview = _preview(texts.get(cand.chunk_id, "")) if texts else ""
            if sources:
                lines.append(f"{'':12}{sources}")
            if preview:
                lines.append(f"{'':12}{preview}")
        ranks[stage.name] = {c.chunk_id: rank for rank, c in enumerate(stage.candidates, start=1)}
    if trace.answer:
        lines += ["", "answer:", trace.answer]
    return "\n".join(lines)


def render_citations(trace: Trace, document_text: Callable[[str], str], *, width: int = 160) -> str:
    """The spans the answer cites, numbered as cited, each with the stored text it points at.

    ``document_text`` gives a document's canonical text by id (``Store.document_text``); a document
    since removed from the store raises ``KeyError`` there and is shown as gone.
    """
    if not trace.citations:
        return "cited: nothing"
    lines = ["cited:"]
    for n, citation in enumerate(trace.citations, start=1):
        try:
            excerpt = " ".join(document_text(citation.doc_id)[citation.start : citation.end].split())
        except KeyError:
            excerpt = "(document no longer in the store)"
        excerpt = excerpt if len(excerpt) <= width else excerpt[: width - 3] + "..."
        lines.append(f"  [{n}] {citation.doc_id} [{citation.start}, {citation.end}): {excerpt}")
    return "\n".join(lines)


def _move(rank: int, before: int | None) -> str:
    """``=`` for no move, ``↑3`` for up three places since the input stage, ``new`` if not in it."""
    if before is None:
        return "new"
    if before == rank:
        return "="
    return f"{'↑' if before > rank else '↓'}{abs(before - rank)}"


def _detail(detail: Mapping[str, Any]) -> str:
    shown = {k: v for k, v in detail.items() if isinstance(v, (int, float, str)) and not k.endswith("_ms")}
    return ("  (" + ", ".join(f"{k}={v}" for k, v in shown.items()) + ")") if shown else ""


def _sources(cand: Candidate, stage: str) -> str:
    """Where a candidate came from, unless that is only the stage itself (a first-stage retriever)."""
    parts = [f"{name} #{c.rank} ({c.score:.3f})" for name, c in sorted(cand.sources.items()) if name != stage]
    return "from " + ", ".join(parts) if parts else ""


def _preview(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    if not flat:
        return ""
    return f'"{flat[: width - 3]}..."' if len(flat) > width else f'"{flat}"'
