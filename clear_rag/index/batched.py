"""Exact top k of many queries at once: BLAS scores a tile of vectors, a compiled scan keeps the best.

``VectorIndex.search_many`` answers a block of queries here once the compiled kernels are ready
(:mod:`clear_rag.index.compiled`). Batched, the time is the matrix product's: one sgemm scores every
query against every vector near the core's peak, and nothing here can skip a multiply-add of it.
(The int8 pre-pass that speeds one query up reads a quarter of the bytes, but a batch is bound by
arithmetic, not memory, and the pre-pass does as many multiply-adds as the product: compare the
one-query and batched rates in ``results/bench/dense.json``.) So this module spends as little as it
can around the product, which is what faiss's flat index does too:

- **Tiles of vectors.** The product is taken ``TILE`` vectors at a time into one reused buffer
  (queries x ``TILE`` float32, about a megabyte for 300 queries), so the scores are still in the
  core's cache when the scan reads them. The predecessor took the whole (queries x vectors) product
  at once, 120 MB for 300 queries over 100k vectors, written to memory and read back. Every tile has
  the same shape (the last one ends at the last vector and overlaps the one before, whose vectors it
  does not offer again): BLAS picks its kernel by shape, and the same kernel for every vector gives
  equal vectors the same score bit for bit, so their tie is cut by id as everywhere else.
- **A scan that rejects most scores in bulk.** Each query keeps its k best so far. A run of
  ``CHUNK`` scores (evenly spaced in the tile, so that the compiler vectorises the maxima of all
  runs at once) is looked at only when its maximum reaches the worst kept; a score then enters only
  if it ranks above that worst, by score and then by id, so ties are cut by id exactly as
  :func:`clear_rag.index.selection.top_k` cuts them. After the first tiles almost no run is looked
  at. In the first tile, where nothing is kept yet, the k-th largest of the runs' maxima is the
  floor instead (see :func:`_scan`).
- **The k kept**, up to ``SMALL_K`` as a sorted list, more in a heap sorted at the end: best first,
  the order ``selection.top_k`` gives.

Scores are the float32 product as BLAS sums it: the list is the exact top k of those scores, equal
to the one-query path's scores to float32 rounding (BLAS and the pre-pass's loop sum in different
orders). ``tests/index/test_batched.py`` checks the lists against a numpy brute force, ties by id
included. The kernels are compiled by :mod:`clear_rag.index.warm`, never in a search.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.intp]

# Vectors scored per product, at most (see top_k). Of 1,024, 2,048, 4,096 and 8,192, 2,048 was among
# the quickest products at 5,183, 10,000 and 100,000 vectors with 300 queries (2.4 MB of scores a tile),
# and scans fewer tiles than 1,024.
TILE = 2048
CHUNK = 16  # scores of a run, looked at only when its maximum reaches the worst kept
# Up to SMALL_K best are kept as a sorted list, a newcomer moved into place: for a few, that took a
# fraction of a heap's sift down (mispredicted branches at each level). More are kept in a heap.
SMALL_K = 32


def top_k(
    queries: FloatArray, matrix: FloatArray, k: int, id_rank: IntArray, tile: int | None = None
) -> tuple[IntArray, FloatArray]:
    """The rows (best first, ties by ``id_rank``: each row's place in id order) and scores of the
    ``min(k, n)`` best rows of ``matrix`` for each of ``queries`` (float32, normalised), scored
    ``tile`` vectors at a time (``TILE`` if None)."""
    tile = TILE if tile is None else tile
    if tile < 1:
        raise ValueError(f"tile={tile!r} is invalid; use a positive number of vectors")
    if queries.shape[0] == 1:
        # numpy takes BLAS's gemv for a product with one row, which gave two equal vectors different
        # scores by their places in the tile; with two rows it takes gemm, whose score of a vector does
        # not depend on its place. The second row is a copy, its list dropped.
        rows, scores = top_k(np.concatenate([queries, queries]), matrix, k, id_rank, tile)
        return rows[:1], scores[:1]
    count, n = queries.shape[0], matrix.shape[0]
    keep = min(k, n)
    rows = np.empty((count, keep), dtype=np.intp)
    scores = np.empty((count, keep), dtype=np.float32)
    if keep == 0 or count == 0:
        return rows, scores
    # As few tiles as ``tile`` allows, all as wide, so the last overlaps the one before by less than
    # one vector per tile: with 1,024 a tile, SciFact's 5,183 took five tiles and a sixth for the
    # last 63, a fifth more products than vectors.
    tiles = -(-n // tile)  # rounded up, as the width below
    width = -(-n // tiles)
    block = np.empty((count, width), dtype=np.float32)  # one tile's scores, reused
    ranks = np.empty((count, keep), dtype=np.intp)  # id_rank of each row kept, read without a lookup
    maxima = np.empty(width // CHUNK + 1, dtype=np.float32)  # scratch of _scan, one value a run
    spare, found = np.empty_like(maxima), np.empty(maxima.shape[0], dtype=np.intp)
    picked = np.empty(CHUNK, dtype=np.intp)
    starts = list(range(0, n - width + 1, width))
    if starts[-1] + width < n:
        starts.append(n - width)  # the last tile ends at the last vector, the same shape as the rest
    kept, done = 0, 0  # how full every query's best are (all see the same vectors); vectors offered
    for start in starts:
        np.matmul(queries, matrix[start : start + width].T, out=block)
        skip = done - start  # vectors of this tile an earlier one offered
        _scan(block, start, skip, kept, id_rank, rows, scores, ranks, maxima, spare, found, picked)
        kept, done = min(keep, kept + width - skip), start + width
    if keep > SMALL_K:  # a list of up to SMALL_K is kept sorted all along
        _sort(rows, scores, ranks)
    return rows, scores


@numba.njit(inline="always", nogil=True, boundscheck=False)
def _below(score: Any, rank: Any, other_score: Any, other_rank: Any) -> bool:  # pragma: no cover
    """Whether (score, rank) ranks after (other_score, other_rank): a lower score, or the same and a
    later id."""
    return bool(score < other_score or (score == other_score and rank > other_rank))


@numba.njit(inline="always", nogil=True, boundscheck=False)
def _push(
    heap: Any, values: Any, ranks: Any, size: int, row: int, score: Any, rank: int
) -> None:  # pragma: no cover
    """Add ``row`` to ``heap[:size]`` (its worst at the root), sifting it up."""
    i = size
    while i > 0:
        parent = (i - 1) // 2
        if not _below(score, rank, values[parent], ranks[parent]):
            break
        heap[i], values[i], ranks[i] = heap[parent], values[parent], ranks[parent]
        i = parent
    heap[i], values[i], ranks[i] = row, score, rank


@numba.njit(inline="always", nogil=True, boundscheck=False)
def _replace(
    heap: Any, values: Any, ranks: Any, size: int, row: int, score: Any, rank: int
) -> None:  # pragma: no cover
    """Put ``row`` in place of the root of ``heap[:size]`` and sift it down."""
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and _below(values[child + 1], ranks[child + 1], values[child], ranks[child]):
            child += 1
        if not _below(values[child], ranks[child], score, rank):
            break
        heap[i], values[i], ranks[i] = heap[child], values[child], ranks[child]
        i = child
    heap[i], values[i], ranks[i] = row, score, rank


@numba.njit(inline="always", nogil=True, boundscheck=False)
def _insert(
    kept: Any, values: Any, ranks: Any, size: int, row: int, score: Any, rank: int
) -> None:  # pragma: no cover
    """Put ``row`` into the sorted list ``kept[:size + 1]`` (best first), moving the ones below it
    down one place; whatever was at ``size`` is overwritten (the worst, when the list is full)."""
    i = size
    while i > 0 and _below(values[i - 1], ranks[i - 1], score, rank):
        kept[i], values[i], ranks[i] = kept[i - 1], values[i - 1], ranks[i - 1]
        i -= 1
    kept[i], values[i], ranks[i] = row, score, rank


@numba.njit(inline="always", nogil=True, boundscheck=False)
def _kth_largest(values: Any, count: int, k: int) -> Any:  # pragma: no cover - compiled
    """The k-th largest of ``values[:count]`` (``k <= count``), keeping the k largest in a min-heap
    at the front of ``values`` itself (its order is not needed afterwards)."""
    for x in range(k):  # sift up
        v, i = values[x], x
        while i > 0 and values[(i - 1) // 2] > v:
            values[i] = values[(i - 1) // 2]
            i = (i - 1) // 2
        values[i] = v
    for x in range(k, count):
        v = values[x]
        if v <= values[0]:
            continue
        i = 0
        while True:
            child = 2 * i + 1
            if child >= k:
                break
            if child + 1 < k and values[child + 1] < values[child]:
                child += 1
            if values[child] >= v:
                break
            values[i] = values[child]
            i = child
        values[i] = v
    return values[0]


@numba.njit(cache=True, nogil=True, boundscheck=False, fastmath=True)
def _scan(
    block: Any,
    start: int,
    skip: int,
    kept: int,
    id_rank: Any,
    rows: Any,
    scores: Any,
    ranks: Any,
    maxima: Any,
    spare: Any,
    found: Any,
    picked: Any,
) -> None:  # pragma: no cover - compiled
    """Offer each query's line of ``block`` (the scores of vectors ``start`` on), but for its first
    ``skip``, to that query's best (``kept`` of ``rows.shape[1]`` held so far); ``maxima``,
    ``spare``, ``found`` and ``picked`` are scratch. fastmath lets the compiler vectorise the runs'
    maxima; scores are finite (queries and vectors are checked on the way in), which is all it
    assumes.

    Offered every score in order, the best take in some k ln(n/k) of them, most in the first tile,
    each a mispredicted branch or two. Rather, where k runs of the tile have their maximum at or
    above the worst kept (in the first tile, all), the k-th largest of those maxima is a floor: k
    scores of this tile reach it, so a score below it is never among the k best and is not offered."""
    lines, width = block.shape
    keep = rows.shape[1]
    small = keep <= SMALL_K
    root = keep - 1 if small else 0  # where the worst kept is: a sorted list's end, a heap's root
    runs = (width - skip) // CHUNK
    top = maxima[:runs]
    first = start + skip  # the vector of the first score offered
    for q in range(lines):
        line, best, values, held = block[q, skip:], rows[q], scores[q], ranks[q]
        size = kept
        worst = values[root] if size == keep else -np.inf
        # Run c is the scores c + r * runs, r from 0 to CHUNK - 1: the maxima of all runs are then
        # CHUNK elementwise maxima of contiguous slices, which the compiler vectorises (the maximum
        # of CHUNK neighbours it did not, nor this loop written with indices into the whole line:
        # twice the time). The order scores are offered in changes no list.
        for c in range(runs):
            top[c] = line[c]
        for r in range(1, CHUNK):
            row = line[r * runs : (r + 1) * runs]
            for c in range(runs):
                v, m = row[c], top[c]
                top[c] = v if v > m else m
        hit = 0  # the runs whose maximum reaches the worst, listed without a branch
        for c in range(runs):
            found[hit] = c
            hit += top[c] >= worst
        floor = worst
        if hit >= keep:
            for h in range(hit):
                spare[h] = top[found[h]]
            floor = max(floor, _kth_largest(spare, hit, keep))
            ahead = 0
            for h in range(hit):
                found[ahead] = found[h]
                ahead += top[found[h]] >= floor
            hit = ahead
        found[hit] = runs  # the tail, shorter than a run, is always looked at
        for h in range(hit + 1):
            c = found[h]
            offered = 0  # the run's scores that reach the floor, listed without a branch
            if c == runs:
                for i in range(runs * CHUNK, width - skip):
                    picked[offered] = i
                    offered += line[i] >= floor
            else:
                for r in range(CHUNK):
                    i = c + r * runs
                    picked[offered] = i
                    offered += line[i] >= floor
            for t in range(offered):
                i = picked[t]
                score = line[i]
                if score < floor:  # the floor rose since the run was listed
                    continue
                rank = id_rank[first + i]
                if size < keep:
                    if small:
                        _insert(best, values, held, size, first + i, score, rank)
                    else:
                        _push(best, values, held, size, first + i, score, rank)
                    size += 1
                    if size == keep:
                        worst = values[root]
                        floor = max(floor, worst)
                elif score > worst or (score == worst and rank < held[root]):
                    if small:
                        _insert(best, values, held, keep - 1, first + i, score, rank)
                    else:
                        _replace(best, values, held, keep, first + i, score, rank)
                    worst = values[root]
                    floor = max(floor, worst)


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _sort(rows: Any, scores: Any, ranks: Any) -> None:  # pragma: no cover - compiled
    """Each heap sorted in place, best first: the worst moved to the end, one place at a time."""
    for q in range(rows.shape[0]):
        heap, values, held = rows[q], scores[q], ranks[q]
        for end in range(rows.shape[1] - 1, 0, -1):
            row, score, rank = heap[end], values[end], held[end]
            heap[end], values[end], held[end] = heap[0], values[0], held[0]
            _replace(heap, values, held, end, row, score, rank)
