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
