"""Where each answer was lost: every verdict on a hand-built trace, the reason written beside it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from clear_rag.eval.golden import Label
from clear_rag.eval.loss import BUDGET, FOUND, NEVER, TOO_LOW, where_lost
from clear_rag.types import Candidate, StageResult, Trace

# The labelled span: characters 10-20 of doc "d". Chunk "hit" covers it; "m1".."m9" and "x" do not.
LABEL = Label("d", 10, 20, "the answer")


def chunk(name: str) -> Candidate:
    return (
        Candidate(f"d#{name}", "d", 10, 20, 1.0)
        if name == "hit"
        else Candidate(f"d#{name}", "d", 100, 110, 1.0)
    )


def ranked(*names: str) -> tuple[Candidate, ...]:
    return tuple(chunk(name) for name in names)


def stage(name: str, names: tuple[str, ...], **detail: Any) -> StageResult:
    return StageResult(name, ranked(*names), 1.0, detail)


def trace(*stages: StageResult, config: Mapping[str, Any] | None = None) -> Trace:
    return Trace("t", "q", ("q",), tuple(stages), config=dict(config or {"top_k": 3}))


MISSES = ("m1", "m2", "m3")  # three chunks that fill a top 3 without covering the label


def hybrid(
    keyword: tuple[str, ...], vector: tuple[str, ...], fusion: tuple[str, ...], context: tuple[str, ...]
) -> Trace:
    return trace(
        stage("keyword", keyword, retriever="keyword"),
        stage("vector", vector, retriever="vector"),
        stage("fusion", fusion, method="rrf", inputs="keyword,vector"),
        stage("context", context, input="fusion", top_k=3),
    )


CASES = [
    # (verdict, stage named, trace, why)
    (FOUND, None, hybrid(("hit", "m1"), ("m2",), ("m2", "hit"), ("m2", "hit")),
     "the covering chunk is in the context the model reads"),
    (BUDGET, "context", hybrid(("hit",), ("m1",), ("m1", "m2", "hit"), ("m1", "m2")),
     "fusion had it at rank 3 (within top 3), assembly's token budget left it out"),
    ("lost in fusion", "fusion", hybrid(("m1", "hit"), ("m2", "m3", "m4"), (*MISSES, "hit"), MISSES),
     "keyword had it at rank 2, fusion pushed it to rank 4, past the top 3"),
    (TOO_LOW, None, hybrid(("m1", "m2", "m3", "m4", "hit"), ("m6",), (*MISSES, "m4", "hit"), MISSES),
     "keyword returned it at rank 5 and no later stage lifted it into the top 3"),
    (NEVER, None, hybrid(("m1",), ("m2",), ("m1", "m2"), ("m1", "m2")),
     "no search returned a covering chunk at all"),
    ("lost in rerank", "rerank",
     trace(
         stage("keyword", ("hit", "m1", "m2", "m3")),
         stage("rerank", ("m1", "m2", "m3", "hit"), input="keyword", shortlist=4),
         stage("context", MISSES, input="rerank"),
     ),
     "keyword had it first, the reranker moved it to rank 4, past the top 3"),
    ("lost in fusion", "keyword",
     trace(
         stage("keyword·q0", ("hit", "m1"), retriever="keyword"),
         stage("keyword·q1", ("m1", "m2", "m3"), retriever="keyword"),
         stage("keyword", (*MISSES, "hit"), method="rrf", inputs="keyword·q0,keyword·q1"),
         stage("context", MISSES, input="keyword"),
     ),
     "one phrasing had it first; fusing the phrasings pushed it past the top 3"),
    (FOUND, None, trace(stage("keyword", ("m1", "hit"))),
     "a trace without a context stage: found within the top 3 of its final ranking"),
    (TOO_LOW, None, trace(stage("keyword", (*MISSES, "hit"))),
     "a trace without a context stage, the one search had it at rank 4"),
]  # fmt: skip


@pytest.mark.parametrize(("verdict", "named", "judged", "why"), CASES, ids=[c[3][:40] for c in CASES])
def test_every_verdict(verdict: str, named: str | None, judged: Trace, why: str) -> None:
    loss = where_lost(judged, [LABEL])
    assert (loss.verdict, loss.stage) == (verdict, named), why


def test_the_ranks_record_the_fate_at_every_stage() -> None:
    loss = where_lost(CASES[2][2], [LABEL])
    assert dict(loss.ranks) == {"keyword": 2, "vector": None, "fusion": 4, "context": None}
    assert loss.to_dict() == {"verdict": "lost in fusion", "stage": "fusion", "ranks": dict(loss.ranks)}


def test_k_comes_from_the_trace_config_unless_given() -> None:
    judged = hybrid(("m1", "hit"), ("m2", "m3", "m4"), (*MISSES, "hit"), MISSES)
    assert where_lost(judged, [LABEL]).verdict == "lost in fusion"  # top_k 3 from the config
    assert where_lost(judged, [LABEL], top_k=1).verdict == TOO_LOW  # keyword's rank 2 is past a top 1


def test_a_chunk_holding_less_than_half_of_the_label_does_not_count() -> None:
    half_miss = Candidate("d#edge", "d", 16, 40, 1.0)  # holds 4 of the label's 10 characters
    judged = trace(StageResult("keyword", (half_miss,), 1.0, {}))
    assert where_lost(judged, [LABEL]).verdict == NEVER
