"""Ranking metrics over graded relevance judgements (qrels), each a small pure function.

``ranking`` is a list of item ids, best first, without repeats; ``qrels`` maps relevant item ids to
their grade (> 0; grades of 0 or less count as not relevant). Conventions follow trec_eval, which
BEIR's published numbers come from: linear gains, cut-offs at ``k``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol


def _check(k: int) -> None:
    if k < 1:
        raise ValueError(f"k={k} is invalid; a cut-off is at least 1")


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain: ``sum_i gain_i / log2(i + 1)`` over ranks i = 1, 2, ...

    Järvelin and Kekäläinen (2002), with the log2(i + 1) discount of trec_eval's ndcg_cut.
    """
    return sum(g / math.log2(i + 1) for i, g in enumerate(gains, start=1))


def ndcg_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """``DCG@k / IDCG@k`` with the grade as gain; IDCG ranks the judged items by grade.

    No relevant items: 0.0 (the query cannot be satisfied, and trec_eval scores it 0).
    """
    _check(k)
    relevant = sorted((g for g in qrels.values() if g > 0), reverse=True)
    ideal = dcg(relevant[:k])
    if ideal == 0:
        return 0.0
    return dcg([max(qrels.get(item, 0), 0) for item in ranking[:k]]) / ideal


def recall_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """Relevant items in the top ``k`` over all relevant items. No relevant items: 0.0."""
    _check(k)
    relevant = {item for item, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def mrr_at_k(ranking: Sequence[str], qrels: Mapping[str, float], k: int) -> float:
    """``1 / rank`` of the first relevant item within the top ``k``; 0.0 if there is none."""
    _check(k)
    for rank, item in enumerate(ranking[:k], start=1):
        if qrels.get(item, 0) > 0:
            return 1.0 / rank
    return 0.0


def first_occurrences(ids: Sequence[str]) -> list[str]:
    """``ids`` without repeats, keeping each one's best (first) position: chunk hits to documents."""
    return list(dict.fromkeys(ids))


# -- span-anchored metrics: labels are character spans, so any chunking can be judged ----------------


class Span(Protocol):
    """Anything that occupies ``[start, end)`` of one document: a candidate, a chunk, a label."""

    @property
    def doc_id(self) -> str: ...

    @property
    def start(self) -> int: ...

    @property
    def end(self) -> int: ...


COVERAGE = 0.5
# The metrics a suite can report (``metrics:`` in its file): span metrics over questions with span
# labels, document metrics over questions judged by qrels.
SPAN_METRICS = ("recall@5", "recall@10", "mrr@10", "ndcg@10")
DOC_METRICS = ("doc ndcg@10", "doc recall@100", "doc mrr@10", "doc recall@10")


def covers(chunk: Span, label: Span, threshold: float = COVERAGE) -> bool:
    """A chunk covers a labelled span when it holds at least ``threshold`` of it: ``|c ∩ l| / |l|``.

    Measured against the label's length, not the chunk's, so a big chunk is not punished for
    holding more than the answer, and a label cut by a chunk boundary still counts as covered by
    the chunk holding at least half of it.
    """
    if chunk.doc_id != label.doc_id or label.end <= label.start:
        return False
    inside = min(chunk.end, label.end) - max(chunk.start, label.start)
    return inside / (label.end - label.start) >= threshold


def covered_at(ranking: Sequence[Span], labels: Sequence[Span]) -> list[set[int]]:
    """For each rank, the indices of the labels that ranked item covers."""
    return [{i for i, label in enumerate(labels) if covers(item, label)} for item in ranking]


def span_recall_at_k(ranking: Sequence[Span], labels: Sequence[Span], k: int) -> float:
    """Labelled spans covered by the top ``k`` over all labelled spans (fixed whatever the chunking).

    No labels: 0.0.
    """
    _check(k)
    if not labels:
        return 0.0
    return len(set().union(*covered_at(ranking[:k], labels))) / len(labels)


def first_covering_rank(ranking: Sequence[Span], labels: Sequence[Span]) -> int | None:
    """The 1-based rank of the first item covering any label, or ``None``."""
    for rank, hit in enumerate(covered_at(ranking, labels), start=1):
        if hit:
            return rank
    return None


def span_mrr_at_k(ranking: Sequence[Span], labels: Sequence[Span], k: int) -> float:
    """``1 / rank`` of the first item within the top ``k`` covering any label; 0.0 if none does."""
    _check(k)
    rank = first_covering_rank(ranking[:k], labels)
    return 0.0 if rank is None else 1.0 / rank


def relevant_chunks(chunks: Sequence[Span], labels: Sequence[Span]) -> list[Span]:
    """The chunks of a chunking that cover at least one label: the relevant items of span nDCG."""
    return [chunk for chunk in chunks if any(covers(chunk, label) for label in labels)]


def span_ndcg_at_k(
    ranking: Sequence[Span], labels: Sequence[Span], k: int, *, chunks: Sequence[Span]
) -> float:
    """nDCG@k with binary relevance per chunk: a chunk is relevant when it covers a label.

    DCG sums ``1 / log2(i + 1)`` over the relevant chunks at ranks i <= k; the ideal ranking puts
    ``min(k, R)`` relevant chunks first, where R is the number of chunks *of this chunking*
    (``chunks``: every chunk of the labelled documents, or more) that cover a label. A ranking as
    good as the chunking allows therefore scores 1.0 at every chunk size: when one big chunk covers
    two labels, R counts it once; when a label is split across two chunks that both hold half of
    it, both are relevant. Binary per-chunk relevance is the seed's definition (Järvelin and
    Kekäläinen's nDCG with gains of 1). The predecessor's version gained 1 per newly covered label
    but assumed one label per rank in its ideal, so a perfect ranking whose chunk covered two labels
    scored 0.613, and larger chunks were marked down. No relevant chunk (no labels, or no chunk
    holding half of any label): 0.0.
    """
    _check(k)
    relevant = relevant_chunks(chunks, labels)
    if not relevant:
        return 0.0
    gains = [1.0 if any(covers(item, label) for label in labels) else 0.0 for item in ranking[:k]]
    return dcg(gains) / dcg([1.0] * min(k, len(relevant)))


def kendall_tau(a: Sequence[float], b: Sequence[float], *, variant: Literal["a", "b"] = "b") -> float:
    """Kendall's rank correlation between two scorings of the same items (Kendall 1938, 1945).

    Over every pair of items, C concordant, D discordant, T_a tied in ``a`` alone, T_b in ``b`` alone:

        tau_b = (C - D) / sqrt((C + D + T_a) (C + D + T_b))      0.0 when either ties every pair
        tau_a = (C - D) / (n choose 2)                           1.0 for fewer than two items

    tau_b (the default) is what the technique check compares row orders with, where ties happen;
    tau_a is what the int8 check of a trained model has always recorded (``train.export.agreement``).
    """
    if len(a) != len(b):
        raise ValueError(f"cannot compare {len(a)} scores with {len(b)}; give both for the same items")
    concordant = discordant = ties_a = ties_b = 0
    for i in range(len(a)):
        for j in range(i + 1, len(a)):
            x, y = a[i] - a[j], b[i] - b[j]
            if x == 0 and y == 0:
                continue
            if x == 0:
                ties_a += 1
            elif y == 0:
                ties_b += 1
            elif (x > 0) == (y > 0):
                concordant += 1
            else:
                discordant += 1
    if variant == "a":
        pairs = len(a) * (len(a) - 1) // 2
        return (concordant - discordant) / pairs if pairs else 1.0
    denominator = math.sqrt((concordant + discordant + ties_a) * (concordant + discordant + ties_b))
    return (concordant - discordant) / denominator if denominator else 0.0
