"""Ranking metrics over graded relevance judgements (qrels), each a small pure function.

``ranking`` is a list of item ids, best first, without repeats; ``qrels`` maps relevant item ids to
their grade (> 0; grades of 0 or less count as not relevant). Conventions follow trec_eval, which
BEIR's published numbers come from: linear gains, cut-offs at ``k``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


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
