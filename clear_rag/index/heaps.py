"""The best few of a stream, for the compiled kernels: a sorted list for a few, a heap for more.

Shared by :mod:`clear_rag.index.batched` (each query's best rows), :mod:`clear_rag.index.prepass`
(the k-th largest lower bound) and :mod:`clear_rag.index.kernels` (the order of BM25's hits). Every
function here is inlined into its caller by numba, so none is called from Python, and a caller's
machine code holds a copy of these: numba's on-disk cache of a caller is keyed on the caller's own
source file, not on this one, so :mod:`clear_rag.index.warm` counts this file among the sources of
its stamp and, when any of them changed, empties the callers' cache before compiling them again.

Rows kept are ranked by score, then by rank (a row's place in id order): ``(score, rank)`` comes
after ``(other_score, other_rank)`` when its score is lower, or the same and its rank later. The kept
rows live in three parallel arrays (rows, scores, ranks) so that a comparison reads no other array.
A sorted list holds its worst at its end; a heap holds its worst at its root and is sorted, best
first, at the end (:func:`sort_heap`).
"""

from __future__ import annotations

from typing import Any

import numba


@numba.njit(inline="always", nogil=True, boundscheck=False)
def below(score: Any, rank: Any, other_score: Any, other_rank: Any) -> bool:  # pragma: no cover
    """Whether (score, rank) ranks after (other_score, other_rank): a lower score, or the same and a
    later rank."""
    return bool(score < other_score or (score == other_score and rank > other_rank))


@numba.njit(inline="always", nogil=True, boundscheck=False)
def push(
    heap: Any, values: Any, ranks: Any, size: int, row: int, score: Any, rank: int
) -> None:  # pragma: no cover - compiled
    """Add ``row`` to ``heap[:size]`` (its worst at the root), sifting it up."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not below(score, rank, values[parent], ranks[parent]):
            break
        heap[i], values[i], ranks[i] = heap[parent], values[parent], ranks[parent]
        i = parent
    heap[i], values[i], ranks[i] = row, score, rank


@numba.njit(inline="always", nogil=True, boundscheck=False)
def replace(
    heap: Any, values: Any, ranks: Any, size: int, row: int, score: Any, rank: int
) -> None:  # pragma: no cover - compiled
    """Put ``row`` in place of the root of ``heap[:size]`` and sift it down."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and below(values[child + 1], ranks[child + 1], values[child], ranks[child]):
            child += 1
        if not below(values[child], ranks[child], score, rank):
            break
        heap[i], values[i], ranks[i] = heap[child], values[child], ranks[child]
        i = child
    heap[i], values[i], ranks[i] = row, score, rank


@numba.njit(inline="always", nogil=True, boundscheck=False)
def insert(
    kept: Any, values: Any, ranks: Any, size: int, row: int, score: Any, rank: int
) -> None:  # pragma: no cover - compiled
    """Put ``row`` into the sorted list ``kept[:size + 1]`` (best first), moving the ones below it
    down one place; whatever was at ``size`` is overwritten (the worst, when the list is full)."""
    i = size
    while i > 0 and below(values[i - 1], ranks[i - 1], score, rank):
        kept[i], values[i], ranks[i] = kept[i - 1], values[i - 1], ranks[i - 1]
        i -= 1
    kept[i], values[i], ranks[i] = row, score, rank


@numba.njit(inline="always", nogil=True, boundscheck=False)
def offer(
    kept: Any, values: Any, ranks: Any, size: int, small: bool, row: int, score: Any, rank: int
) -> int:  # pragma: no cover - compiled
    """Offer ``row`` to best ``kept[:size]`` of at most ``kept.shape[0]``, a sorted list where
    ``small``, else a heap; returns the new size. A full one takes the row only if it ranks above
    the worst kept, which it replaces."""
    keep = kept.shape[0]
    if size < keep:
        if small:
            insert(kept, values, ranks, size, row, score, rank)
        else:
            push(kept, values, ranks, size, row, score, rank)
        return size + 1
    root = keep - 1 if small else 0
    if below(values[root], ranks[root], score, rank):
        if small:
            insert(kept, values, ranks, keep - 1, row, score, rank)
        else:
            replace(kept, values, ranks, keep, row, score, rank)
    return size


@numba.njit(inline="always", nogil=True, boundscheck=False)
def sort_heap(heap: Any, values: Any, ranks: Any) -> None:  # pragma: no cover - compiled
    """A full heap sorted in place, best first: the worst moved to the end, one place at a time."""
    for end in range(heap.shape[0] - 1, 0, -1):
        row, score, rank = heap[end], values[end], ranks[end]
        heap[end], values[end], ranks[end] = heap[0], values[0], ranks[0]
        replace(heap, values, ranks, end, row, score, rank)


@numba.njit(inline="always", nogil=True, boundscheck=False)
def kth_largest(values: Any, count: int, k: int, heap: Any) -> Any:  # pragma: no cover - compiled
    """The k-th largest of ``values[:count]`` (``k <= count``), keeping the k largest seen in a
    min-heap in ``heap[:k]``, whose root is replaced only by a larger value (rarely, after the first).
    ``heap`` may be ``values`` itself: value x is read before place x is written, and places from k
    on are never written (the order of ``values`` is then lost)."""
    for x in range(k):  # sift up
        v, i = values[x], x
        while i > 0 and heap[(i - 1) // 2] > v:
            heap[i] = heap[(i - 1) // 2]
            i = (i - 1) // 2
        heap[i] = v
    for x in range(k, count):
        v = values[x]
        if v <= heap[0]:
            continue
        i = 0  # replace the root and sift down
        while True:
            child = 2 * i + 1
            if child >= k:
                break
            if child + 1 < k and heap[child + 1] < heap[child]:
                child += 1
            if heap[child] >= v:
                break
            heap[i] = heap[child]
            i = child
        heap[i] = v
    return heap[0]
