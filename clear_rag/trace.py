"""Traces as data: JSON in and out, and a plain-text rendering of how ranks moved between stages.

A trace is a returned value, not a log. It is stored as JSON in the store's ``traces`` table and can
be read back and printed (``clear-rag replay``) without any model.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from typing import Any

from clear_rag.types import (
    Candidate,
    Citation,
    ContextPassage,
    Contribution,
    Evidence,
    Message,
    SentenceSupport,
    StageResult,
    Support,
    Trace,
)


def to_dict(trace: Trace) -> dict[str, Any]:
    """The trace as plain data. Its stages are converted by hand (``stage_dict``): ``asdict`` deep-
    copies every candidate's nested contributions and took about 15 ms a question at SciFact size,
    paid once for the page's stage events and again when the trace is stored."""
    data = asdict(replace(trace, stages=()))
    data["stages"] = [stage_dict(stage) for stage in trace.stages]
    return data


def stage_dict(stage: StageResult) -> dict[str, Any]:
    """A stage as plain data: what ``asdict`` gives, built directly."""
    return {
        "name": stage.name,
        "candidates": [candidate_dict(c) for c in stage.candidates],
        "elapsed_ms": stage.elapsed_ms,
        "detail": copy.deepcopy(dict(stage.detail)),
    }


def candidate_dict(cand: Candidate) -> dict[str, Any]:
    return {
        "chunk_id": cand.chunk_id,
        "doc_id": cand.doc_id,
        "start": cand.start,
        "end": cand.end,
        "score": cand.score,
        "sources": {name: _contribution_dict(c) for name, c in cand.sources.items()},
    }


def _contribution_dict(c: Contribution) -> dict[str, Any]:
    parts = {name: _contribution_dict(part) for name, part in c.parts.items()}
    return {"rank": c.rank, "score": c.score, "contribution": c.contribution, "parts": parts}


def to_json(trace: Trace) -> str:
    return json.dumps(to_dict(trace), ensure_ascii=False)


def from_dict(data: Mapping[str, Any]) -> Trace:
    stages = tuple(stage_from_dict(stage) for stage in data["stages"])
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
        messages=tuple(Message(m["role"], m["content"]) for m in data.get("messages", ())),
        passages=tuple(
            ContextPassage(**{**p, "chunk_ids": tuple(p["chunk_ids"])}) for p in data.get("passages", ())
        ),
        support=support_from_dict(data["support"]) if data.get("support") else None,
    )


def support_from_dict(data: Mapping[str, Any]) -> Support:
    """A support record (``Trace.support``, the ``support`` event) from plain data."""

    def evidence(items: Sequence[Mapping[str, Any]]) -> tuple[Evidence, ...]:
        return tuple(Evidence(**{**e, "missing": tuple(e.get("missing", ()))}) for e in items)

    sentences = tuple(
        SentenceSupport(
            s["start"],
            s["end"],
            s["text"],
            tuple(s["cited"]),
            evidence(s["evidence"]),
            s["kind"],
            s["verdict"],
        )
        for s in data.get("sentences", ())
    )
    return Support(
        answers=evidence(data.get("answers", ())),
        outside=evidence(data.get("outside", ())),
        weak=bool(data.get("weak", False)),
        weak_reason=str(data.get("weak_reason", "")),
        sentences=sentences,
        line=str(data.get("line", "")),
        reason=str(data.get("reason", "")),
        model=str(data.get("model", "")),
        calibration=dict(data.get("calibration", {})),
    )


def from_json(text: str) -> Trace:
    return from_dict(json.loads(text))


def _contribution(data: Mapping[str, Any]) -> Contribution:
    parts = {name: _contribution(part) for name, part in data.get("parts", {}).items()}
    return Contribution(data["rank"], data["score"], data["contribution"], parts)


def _candidate(data: Mapping[str, Any]) -> Candidate:
    sources = {name: _contribution(c) for name, c in data.get("sources", {}).items()}
    return Candidate(data["chunk_id"], data["doc_id"], data["start"], data["end"], data["score"], sources)


def first_stages(trace: Trace) -> list[StageResult]:
    """The searches that started a ranking (each retriever under each phrasing): stages with no input."""
    return [s for s in trace.stages if "input" not in s.detail and "inputs" not in s.detail]


def found_by(trace: Trace, chunk_id: str) -> dict[str, int]:
    """Which searches returned ``chunk_id``, and at what rank: what the inspector shows for a candidate
    at any later stage, since fusion and rerank record only their own inputs."""
    found = {}
    for stage in first_stages(trace):
        for rank, cand in enumerate(stage.candidates, start=1):
            if cand.chunk_id == chunk_id:
                found[stage.name] = rank
                break
    return found


def without_timings(trace: Trace) -> dict[str, Any]:
    """The trace's content with its id, creation time and elapsed times blanked, for comparisons."""
    data = to_dict(trace)
    data["id"], data["created_at"] = "", ""
    for stage in data["stages"]:
        stage["elapsed_ms"] = 0.0
        stage["detail"] = {k: v for k, v in stage["detail"].items() if not k.endswith("_ms")}
    return data


class StageRenderer:
    """Renders stages one at a time, as they arrive: each stage's top candidates, where each came
    from, and how its rank moved since the stage's input (which always arrives before it).

    ``text`` gives a candidate's text for a short preview (a replay without the store has none).
    """

    def __init__(self, *, top: int = 5, text: Callable[[Candidate], str] | None = None) -> None:
        self.top = top
        self._text = text
        self._ranks: dict[str, dict[str, int]] = {}

    def __call__(self, stage: StageResult) -> str:
        before = self._ranks.get(str(stage.detail.get("input", "")))
        lines = [
            f"[{stage.name}] {len(stage.candidates)} candidates in {stage.elapsed_ms:.1f} ms"
            + _detail(stage.detail)
        ]
        for rank, cand in enumerate(stage.candidates[: self.top], start=1):
            moved = _move(rank, before.get(cand.chunk_id)) if before is not None else ""
            if stage.rescored(rank):
                lines.append(f"  {rank:>3}. {moved:<5} {cand.score:9.4f}  {cand.chunk_id}")
            else:  # the tail a reranker kept: under "replace" its score is a place, not a logit
                score = f"{cand.score:9.4f}" if "display" not in stage.detail else f"{'-':>9}"
                lines.append(f"  {rank:>3}. {moved:<5} {score}  {cand.chunk_id}  (not re-scored)")
            sources = _sources(cand, stage.name)
            preview = _preview(self._text(cand)) if self._text is not None else ""
            if sources:
                lines.append(f"{'':12}{sources}")
            if preview:
                lines.append(f"{'':12}{preview}")
        self._ranks[stage.name] = {c.chunk_id: rank for rank, c in enumerate(stage.candidates, start=1)}
        return "\n".join(lines)


def render(trace: Trace, *, top: int = 5, text: Callable[[Candidate], str] | None = None) -> str:
    """The whole trace: the question and what it became, every stage, the answer."""
    lines = [f"trace {trace.id}  {trace.created_at}", f"query: {trace.query}"]
    lines += render_query(trace.steps, trace.phrasings)
    stage = StageRenderer(top=top, text=text)
    lines += ["\n" + stage(s) for s in trace.stages]
    if trace.answer:
        lines += ["", "answer:", trace.answer]
        by = trace.steps.get("answered by")
        if isinstance(by, Mapping) and by.get("answerer"):
            lines.append(f"answered by: {by['answerer']} ({by.get('answerer_kind', 'generative')})")
    return "\n".join(lines)


def stage_from_dict(data: Mapping[str, Any]) -> StageResult:
    return StageResult(
        name=data["name"],
        candidates=tuple(_candidate(c) for c in data["candidates"]),
        elapsed_ms=data["elapsed_ms"],
        detail=data.get("detail", {}),
    )


def render_query(steps: Mapping[str, Any], phrasings: Sequence[str]) -> list[str]:
    """What the question became before retrieval: the standalone rewrite (or why it was refused), the
    other phrasings searched, a HyDE passage. Shared by ``ask --stages`` and ``replay``."""
    lines = []
    rewrite = steps.get("rewrite")
    if isinstance(rewrite, Mapping) and rewrite.get("proposed"):
        verdict = "searched as" if rewrite.get("accepted") else "rewrite refused"
        lines.append(f"  {verdict}: {rewrite['proposed']}  ({rewrite.get('reason', '')})")
    lines += [f"  also searched as: {p}" for p in phrasings[1:]]
    hypothetical = steps.get("hyde")
    if isinstance(hypothetical, str) and hypothetical:
        lines.append(f"  also searched with a hypothetical answer: {_preview(hypothetical, 120)}")
    return lines


def render_support(
    support: Support, document_text: Callable[[str], str] | None = None, *, width: int = 110
) -> str:
    """The support check as lines: the weak-retrieval warning, each answer sentence with its verdict
    and the words that support it (``document_text`` gives them; without it the spans are shown), and
    the answer's one line. Shared by ``ask`` and ``replay``."""
    lines = [f"support (checked by {support.model}):"]
    if support.weak:
        lines.append(f"  ! retrieval looks weak: {support.weak_reason}")
    for n, sentence in enumerate(support.sentences, start=1):
        lines.append(f"  {n}. {_preview(sentence.text, width)}  -> {sentence.verdict}")
        backing = sorted((e for e in sentence.evidence if e.supports), key=lambda e: -e.probability)[:1]
        for e in backing:
            words = f"{e.doc_id} [{e.start}, {e.end})"
            if document_text is not None:
                try:
                    words = _preview(document_text(e.doc_id)[e.start : e.end], width)
                except KeyError:
                    words += " (document no longer in the store)"
            lines.append(f"       [{e.number}] {words}  (p {e.probability:.2f})")
    if support.line:
        lines.append(f"answer: {support.line.upper()}: {support.reason}")
    return "\n".join(lines)


def render_citations(trace: Trace, document_text: Callable[[str], str], *, width: int = 160) -> str:
    """The spans the answer cites, in the order first cited, each under the number the answer cites it by
    (its passage's ``[n]``; as cited, in a trace stored before the number was kept), with the stored
    text it points at.

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
        # a trace stored before citations kept their number: numbered as cited
        lines.append(
            f"  [{citation.number or n}] {citation.doc_id} [{citation.start}, {citation.end}): {excerpt}"
        )
    return "\n".join(lines)


def _move(rank: int, before: int | None) -> str:
    """``=`` for no move, ``↑3`` for up three places since the input stage, ``new`` if not in it."""
    if before is None:
        return "new"
    if before == rank:
        return "="
    return f"{'↑' if before > rank else '↓'}{abs(before - rank)}"


_LONG = ("query", "hypothetical", "retriever")  # said elsewhere: under the query, or by the stage's name


def _detail(detail: Mapping[str, Any]) -> str:
    shown = {
        k: v
        for k, v in detail.items()
        if isinstance(v, (int, float, str)) and not k.endswith("_ms") and k not in _LONG
    }
    return ("  (" + ", ".join(f"{k}={v}" for k, v in shown.items()) + ")") if shown else ""


def _sources(cand: Candidate, stage: str) -> str:
    """Where a candidate came from, unless that is only the stage itself (a first-stage search);
    a fused source shows its own parts (the phrasings) in brackets."""
    parts = [_source(name, c) for name, c in sorted(cand.sources.items()) if name != stage]
    return "from " + ", ".join(parts) if parts else ""


def _source(name: str, c: Contribution) -> str:
    inner = ", ".join(f"{part} #{p.rank}" for part, p in sorted(c.parts.items()))
    return f"{name} #{c.rank} ({c.score:.3f})" + (f" [{inner}]" if inner else "")


def _preview(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    if not flat:
        return ""
    return f'"{flat[: width - 3]}..."' if len(flat) > width else f'"{flat}"'
