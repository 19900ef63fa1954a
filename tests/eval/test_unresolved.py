"""A golden set written against ground truth and resolved against each parser's output: under
``unresolved: miss`` a quote the parsed text does not hold once is that parser's miss, not an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.errors import ConfigError
from clear_rag.eval.golden import LabelError, load_golden
from clear_rag.eval.loss import PARSING, where_lost
from clear_rag.eval.metrics import span_ndcg_at_k, span_recall_at_k
from clear_rag.types import Candidate, StageResult, Trace

TEXTS = {
    "a.pdf": "Net sales were $391,035 million in 2024. Risk factors follow.",
    "b.pdf": "Other text, more text.",
}
GOLDEN = """name: g
{mode}questions:
  - id: sales
    question: What were net sales?
    category: table
    answers: [{{quote: "Net sales were $391,035 million"}}]
  - id: mangled
    question: What follows?
    category: factual
    answers: [{{quote: "Risk fac- tors follow"}}]
  - id: twice
    question: Which text?
    category: factual
    answers: [{{quote: "text"}}]
"""


def golden(tmp_path: Path, mode: str) -> Path:
    path = tmp_path / "g.yaml"
    path.write_text(GOLDEN.format(mode=f"unresolved: {mode}\n" if mode else ""), encoding="utf-8")
    return path


def test_by_default_a_quote_that_matches_nothing_stops_the_suite(tmp_path: Path) -> None:
    with pytest.raises(LabelError, match="matches nothing"):
        load_golden(golden(tmp_path, ""), TEXTS)


def test_under_miss_the_mangled_and_the_ambiguous_quote_are_misses(tmp_path: Path) -> None:
    questions = {q.id: q for q in load_golden(golden(tmp_path, "miss"), TEXTS).questions}
    assert questions["sales"].labels[0].resolved
    for qid, why in (("mangled", "matches nothing"), ("twice", "matches 2 times")):
        (label,) = questions[qid].labels
        assert not label.resolved and why in label.problem
        # nothing covers an unresolved label, whatever is ranked: every metric counts it as a miss
        everything = [Candidate(f"{doc}#0", doc, 0, len(text), 1.0) for doc, text in TEXTS.items()]
        assert span_recall_at_k(everything, [label], 10) == 0.0
        assert span_ndcg_at_k(everything, [label], 10, chunks=everything) == 0.0
        trace = Trace("t", "q", ("q",), (StageResult("keyword", tuple(everything), 1.0, {}),), config={})
        assert where_lost(trace, [label]).verdict == PARSING


def test_an_unknown_mode_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unresolved='skip': has an unknown unresolved: mode"):
        load_golden(golden(tmp_path, "skip"), TEXTS)
