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
    chunks = [*ranking, _c("d1", 30, 60)]  # the chunking: every chunk, retrieved or not
    assert first_covering_rank(ranking, LABELS) == 2
    assert span_recall_at_k(ranking, LABELS, 3) == pytest.approx(1 / 2)
    assert span_recall_at_k(ranking, LABELS, 4) == pytest.approx(2 / 2)
    assert span_mrr_at_k(ranking, LABELS, 10) == pytest.approx(1 / 2)
    # relevant chunks (covering a label): d1 12-30 (8 of 10), d1 10-20, d2 0-8 (8 of 10): R = 3;
    # binary gains per chunk 0, 1, 1, 1
    dcg = 1 / math.log2(3) + 1 / math.log2(4) + 1 / math.log2(5)
    ideal = 1 / math.log2(2) + 1 / math.log2(3) + 1 / math.log2(4)
    assert span_ndcg_at_k(ranking, LABELS, 10, chunks=chunks) == pytest.approx(dcg / ideal)
    # at k = 1 the ideal holds min(k, R) = 1 chunk
    assert span_ndcg_at_k(ranking[1:], LABELS, 1, chunks=chunks) == pytest.approx(1.0)
    assert span_ndcg_at_k(ranking, LABELS, 2, chunks=chunks) == pytest.approx(
        (1 / math.log2(3)) / (1 / math.log2(2) + 1 / math.log2(3))
    )


def test_span_metrics_edge_cases() -> None:
    def ndcg(ranking: list[Candidate], labels: list[Label], k: int) -> float:
        return span_ndcg_at_k(ranking, labels, k, chunks=ranking)

    for metric in (span_recall_at_k, span_mrr_at_k, ndcg):
        assert metric([], LABELS, 10) == 0.0
        assert metric([_c("d1", 0, 100)], [], 10) == 0.0
        with pytest.raises(ValueError, match="k=0"):
            metric([], LABELS, 0)
    assert first_covering_rank([], LABELS) is None
    # no chunk of the chunking holds half of the label: nothing can be relevant
    assert (
        span_ndcg_at_k([_c("d1", 0, 12)], LABELS[:1], 10, chunks=[_c("d1", 0, 12), _c("d1", 12, 14)]) == 0.0
    )


# -- span nDCG: a ranking as good as the chunking allows scores 1.0 at every chunk size -------------


def _perfect(chunks: list[Candidate], labels: list[Label]) -> list[Candidate]:
    """Every chunk that covers a label first (in document order), then the rest."""
    relevant = [c for c in chunks if any(covers(c, label) for label in labels)]
    return relevant + [c for c in chunks if c not in relevant]


def test_a_perfect_ranking_scores_one_when_one_chunk_covers_two_labels() -> None:
    labels = [Label("d1", 10, 20, "a"), Label("d1", 30, 40, "b")]
    chunks = [_c("d1", 0, 50), _c("d1", 50, 100), _c("d2", 0, 50)]
    assert span_ndcg_at_k(_perfect(chunks, labels), labels, 10, chunks=chunks) == pytest.approx(1.0)
    # the predecessor's version scored this ranking 1 / (1 + 1 / log2(3)) = 0.613
    assert 1 / (1 + 1 / math.log2(3)) == pytest.approx(0.613, abs=1e-3)


def test_a_perfect_ranking_scores_one_when_a_label_is_split_across_two_chunks() -> None:
    labels = [Label("d1", 40, 60, "split")]
    chunks = [_c("d1", 0, 50), _c("d1", 50, 100)]  # each holds exactly half of the label
    assert all(covers(c, labels[0]) for c in chunks)
    assert span_ndcg_at_k(_perfect(chunks, labels), labels, 10, chunks=chunks) == pytest.approx(1.0)
    assert span_ndcg_at_k(chunks[::-1], labels, 10, chunks=chunks) == pytest.approx(1.0)
    assert span_ndcg_at_k([_c("d2", 0, 5), *chunks], labels, 10, chunks=chunks) < 1.0


@pytest.mark.parametrize("size", [96, 1024])
def test_a_perfect_ranking_scores_one_at_chunk_sizes_96_and_1024(size: int) -> None:
    from clear_rag.chunk.factory import make_chunker
    from clear_rag.eval.golden import NormalisedText, resolve
    from clear_rag.tokens import RegexTokenizer
    from clear_rag.types import Document

    sentences = [
        f"Sentence {n} says that part {n} of the manual has {n * 7} pages of notes." for n in range(400)
    ]
    text = " ".join(sentences)
    doc = Document("manual.txt", "manual.txt", "h", text, ())
    chunks = [
        Candidate(c.id, c.doc_id, c.start, c.end, 0.0)
        for c in make_chunker("fixed", size=size, overlap=size // 8, tokenizer=RegexTokenizer()).chunk(doc)
    ]
    texts = {"manual.txt": NormalisedText(text)}
    labels = [resolve("q", sentences[n], None, texts, "golden") for n in (3, 4, 150, 399)]
    scores = {k: span_ndcg_at_k(_perfect(chunks, labels), labels, k, chunks=chunks) for k in (1, 5, 10)}
    assert scores == {1: pytest.approx(1.0), 5: pytest.approx(1.0), 10: pytest.approx(1.0)}
    # and the worst ranking that still holds every covering chunk somewhere scores less
    worst = [c for c in chunks if c not in _perfect(chunks, labels)[:1]] + _perfect(chunks, labels)[:1]
    assert span_ndcg_at_k(worst, labels, 10, chunks=chunks) < 1.0
