"""The k best of an array of scores, by score and then by id, without sorting the rest: for the vector
index and for BM25's numpy path (``clear_rag.index.ranking``), kept apart as bm25s keeps its
``selection.py``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

# One score in SAMPLE_STRIDE sets the bar in top_rows; about k * SAMPLE_STRIDE rows then clear it.
SAMPLE_STRIDE = 32
# Up to FEW * k scores are sorted whole in top_k: for a few dozen, top_rows's partitions cost more
# than the sort they save.
FEW = 4


def top_rows(scores: npt.NDArray[np.floating[Any]], k: int) -> npt.NDArray[np.intp]:
    """The rows of the ``k`` best scores and of every score tied with the k-th best, in row order.

    ``argpartition`` alone would cut a tie at the k-th place arbitrarily, so every score at least
    as high as the k-th best is kept, and the caller's id order decides among the tied ones.
    Finding the k-th best of all n scores is a partition of n; the k-th best of an evenly strided
    sample is found in a partition of n / 32 and is never higher (the sample's k best are k of
    the scores), so only the few rows clearing that bar are partitioned exactly.
    """
    n = scores.shape[0]
    if k >= n:
        return np.arange(n)
    sample = scores[::SAMPLE_STRIDE]
    if sample.shape[0] > k:
        bar = np.partition(sample, sample.shape[0] - k)[sample.shape[0] - k]
        rows = np.flatnonzero(scores >= bar)
    else:
        rows = np.arange(n)
    if rows.shape[0] > k:
        kth_best = np.partition(scores[rows], rows.shape[0] - k)[rows.shape[0] - k]
        rows = rows[scores[rows] >= kth_best]
    return rows


def top_k(scores: npt.NDArray[np.float32], ids: Sequence[str], k: int) -> list[tuple[str, float]]:
    """The ``k`` best ``(id, score)`` pairs, by score descending and then id ascending."""
    if scores.shape[0] <= FEW * k:  # the pre-pass's few survivors: sorting them all is quickest
        pairs = list(zip(ids, scores.tolist(), strict=True))
    else:
        rows = top_rows(scores, k)
        pairs = [(ids[i], score) for i, score in zip(rows.tolist(), scores[rows].tolist(), strict=True)]
    pairs.sort(key=lambda pair: (-pair[1], pair[0]))
    return pairs[:k]
