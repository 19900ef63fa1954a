"""Metrics on hand-built rankings, expected values written as the formulas."""

from __future__ import annotations

import math

import pytest

from clear_rag.eval.metrics import first_occurrences, mrr_at_k, ndcg_at_k, recall_at_k

QRELS = {"a": 1, "c": 2}


def test_ndcg_with_graded_gains() -> None:
    got = ndcg_at_k(["a", "b", "c"], QRELS, 10)
    dcg = 1 / math.log2(2) + 2 / math.log2(4)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert got == pytest.approx(dcg / ideal)


def test_ndcg_cut_off_and_ideal_over_min_k_r() -> None:
    assert ndcg_at_k(["b", "a"], QRELS, 1) == 0.0
    assert ndcg_at_k(["c", "a"], QRELS, 1) == pytest.approx(1.0)  # ideal holds min(k, R) = 1 item


def test_recall_and_mrr() -> None:
    assert recall_at_k(["b", "c", "d"], QRELS, 2) == pytest.approx(1 / 2)
    assert recall_at_k(["a", "c"], QRELS, 100) == 1.0
    assert mrr_at_k(["b", "d", "c"], QRELS, 10) == pytest.approx(1 / 3)
    assert mrr_at_k(["b", "d", "c"], QRELS, 2) == 0.0


@pytest.mark.parametrize("metric", [ndcg_at_k, recall_at_k, mrr_at_k])
def test_edge_cases(metric: object) -> None:
    assert metric([], QRELS, 10) == 0.0  # type: ignore[operator]
    assert metric(["a"], {}, 10) == 0.0  # type: ignore[operator]
    assert metric(["a"], {"a": 0}, 10) == 0.0  # type: ignore[operator]
    with pytest.raises(ValueError, match="k=0"):
        metric(["a"], QRELS, 0)  # type: ignore[operator]


def test_first_occurrences_keeps_the_best_position() -> None:
    assert first_occurrences(["d1", "d2", "d1", "d3", "d2"]) == ["d1", "d2", "d3"]


# -- span-anchored metrics ------------------------------------------------------------------------

from clear_rag.eval.golden import Label  # noqa: E402
from clear_rag.eval.metrics import (  # noqa: E402
    covers,
    first_covering_rank,
    span_mrr_at_k,
    span_ndcg_at_k,
    span_recall_at_k,
)
from clear_rag.types import Candidate  # noqa: E402


def _c(doc: str, start: int, end: int) -> Candidate:
    return Candidate(f"{doc}#{start}", doc, start, end, 0.0)


LABELS = [Label("d1", 10, 20, "x"), Label("d2", 0, 10, "y")]


def test_coverage_is_measured_against_the_label() -> None:
    label = LABELS[0]
    assert covers(_c("d1", 0, 15), label)  # 5 of 10 characters: exactly half
    assert not covers(_c("d1", 0, 14), label)  # 4 of 10
    assert covers(_c("d1", 0, 100), label)  # a big chunk is not punished
    assert not covers(_c("d2", 10, 20), label)  # same offsets, other document


def test_span_recall_mrr_ndcg_as_formulas() -> None:
    ranking = [_c("d3", 0, 50), _c("d1", 12, 30), _c("d1", 10, 20), _c("d2", 0, 8)]
    assert first_covering_rank(ranking, LABELS) == 2
    assert span_recall_at_k(ranking, LABELS, 3) == pytest.approx(1 / 2)
    assert span_recall_at_k(ranking, LABELS, 4) == pytest.approx(2 / 2)
    assert span_mrr_at_k(ranking, LABELS, 10) == pytest.approx(1 / 2)
    # gains 0, 1, 0 (d1 label already covered), 1 (d2's label, 8 of 10 characters)
    dcg = 1 / math.log2(3) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3)
    assert span_ndcg_at_k(ranking, LABELS, 10) == pytest.approx(dcg / ideal)
    # at k = 1 the ideal holds min(k, R) = 1 label
    assert span_ndcg_at_k(ranking[1:], LABELS, 1) == pytest.approx(1.0)


def test_span_metrics_edge_cases() -> None:
    for metric in (span_recall_at_k, span_mrr_at_k, span_ndcg_at_k):
        assert metric([], LABELS, 10) == 0.0
        assert metric([_c("d1", 0, 100)], [], 10) == 0.0
        with pytest.raises(ValueError, match="k=0"):
            metric([], LABELS, 0)
    assert first_covering_rank([], LABELS) is None
