"""Exact top k of many queries at once: BLAS scores a tile of vectors, a compiled scan keeps the best.

``VectorIndex.search_many`` answers a block of queries here once the compiled kernels are ready
(:mod:`clear_rag.index.compiled`). Batched, the time is the matrix product's: one sgemm scores every
query against every vector near the core's peak, and nothing here can skip a multiply-add of it.
(The int8 pre-pass that speeds one query up reads a quarter of the bytes, but a batch is bound by
arithmetic, not memory, and the pre-pass does as many multiply-adds as the product: compare the
one-query and batched rates in ``results/bench/dense.json``.) So this module spends as little as it
can around the product, which is what faiss's flat index does too:

- **Tiles of vectors.** The product is taken at most ``TILE`` vectors at a time into one reused
  buffer (queries x ``TILE`` float32, about two megabytes for 300 queries), so the scores are still
  in the core's cache when the scan reads them. The predecessor took the whole (queries x vectors)
  product at once, 120 MB for 300 queries over 100k vectors, written to memory and read back. The
  first tile is narrow (``FIRST_TILE``): until a query holds k rows each score costs more to look
  at, so the fewer scores before that the better.
- **A scan that rejects most scores in bulk.** Each query keeps its best so far. Once its list is
  full, the scores of a tile are counted ``GROUP`` at a time against the worst kept (a compare and
  an add the compiler vectorises) and looked at one by one only in a group that has one; a score
  then enters only if it ranks above that worst, by score and then by id. In the first tile, where
  nothing is kept yet, the k-th largest of the maxima of runs of ``CHUNK`` scores is a floor
  instead (see :func:`_scan`).
- **Ties settled by one loop.** BLAS's score of a row can depend on the row's place in the product:
  two equal vectors scored one unit of float32 apart when one fell in the edge of BLAS's inner
  kernel (found by the property test, 37 vectors a tile of 10), so BLAS's order cannot cut a tie by
  id. The scan keeps ``SPARE`` rows past k; where two of a query's rows, or its k-th and the next,
  are closer than BLAS's and the loop's scores can differ (:func:`margin`), :func:`_settle` scores
  them again by one compiled loop that treats every row alike, the one-query path's loop
  (:func:`clear_rag.index.prepass.exact_scores`), and ranks them by those scores and then by id.
  Elsewhere BLAS's order is the loop's, and its scores are kept.
- **The k kept**, up to ``SMALL_K`` as a sorted list, more in a heap sorted at the end: best first,
  the order ``selection.top_k`` gives.

The lists are the ones ranking every row by the one-query path's loop gives, ties by id; a score is
that loop's or BLAS's, within :func:`margin` of each other. ``tests/index/test_batched.py`` checks
the lists against a numpy brute force and ``tests/index/test_vectors.py`` against the loop, equal
vectors included. The kernels are compiled by :mod:`clear_rag.index.warm`, never in a search.
"""

from __future__ import annotations

import itertools
from typing import Any

import numba
import numpy as np
import numpy.typing as npt

from clear_rag.index import heaps, prepass

FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.intp]

# Vectors scored per product, at most (see top_k). Of 1,024, 2,048, 4,096 and 8,192, 2,048 was among
# the quickest products at 5,183, 10,000 and 100,000 vectors with 300 queries (2.4 MB of scores a tile),
# and scans fewer tiles than 1,024; products of 256 to 4,096 vectors timed within a few hundredths
# of each other (a scratch script, 2026-12-03, under load).
TILE = 2048
# Vectors in the first product: until every query's list is full a score costs more to look at. Of
# 256, 512 and 1,024 (with SPARE 2 and 3), 1,024 and 2 were quickest at 5,183 vectors and 300 queries
# against faiss in turn (a scratch script, 2026-12-03, load about 2; with SPARE 1 it ran at two thirds,
# scoring every row for each query whose next score is within reach of its k-th).
FIRST_TILE = 1024
CHUNK = 16  # scores of a run, looked at only when its maximum reaches the worst kept
# Up to SMALL_K best are kept as a sorted list, a newcomer moved into place: for a few, that took a
# fraction of a heap's sift down (mispredicted branches at each level). More are kept in a heap.
SMALL_K = 32
# Rows kept past the k asked for, by BLAS's scores, so that _settle can rank the near ties by the loop's
# (and scores every row of a query only where these too are within reach of its k-th).
SPARE = 2
# Scores counted at a time against the worst kept, once every query's list is full (_offer_reaching).
GROUP = 64


def top_k(
    queries: FloatArray, matrix: FloatArray, k: int, id_rank: IntArray, tile: int | None = None
) -> tuple[IntArray, FloatArray]:
    """The rows (best first, ties by ``id_rank``: each row's place in id order) and scores of the
    ``min(k, n)`` best rows of ``matrix`` for each of ``queries`` (float32, normalised), scored
    ``tile`` vectors at a time (``TILE`` if None)."""
    tile = TILE if tile is None else tile
    if tile < 1:
        raise ValueError(f"tile={tile!r} is invalid; use a positive number of vectors")
    count, n = queries.shape[0], matrix.shape[0]
    keep = min(k, n)
    rows = np.empty((count, keep), dtype=np.intp)
    scores = np.empty((count, keep), dtype=np.float32)
    if keep == 0 or count == 0:
        return rows, scores
    # The scan keeps SPARE more than asked, by BLAS's scores; _settle then ranks them by the loop's.
    wide = min(keep + SPARE, n)
    found_rows = np.empty((count, wide), dtype=np.intp)
    found_scores = np.empty((count, wide), dtype=np.float32)
    found_ranks = np.empty((count, wide), dtype=np.intp)
    _scan_tiles(queries, matrix, id_rank, tile, found_rows, found_scores, found_ranks)
    if wide > SMALL_K:  # a list of up to SMALL_K is kept sorted all along
        _sort(found_rows, found_scores, found_ranks)
    ranks = np.empty((count, keep), dtype=np.intp)
    _settle(queries, matrix, id_rank, found_rows, found_scores, margin(queries.shape[1]), rows, scores, ranks)
    return rows, scores


def margin(dim: int) -> float:
    """How far apart BLAS's score of a unit vector and the loop's (:func:`_dot`) can be: each is within
    ``gamma_(dim+2)`` of the real product (see :mod:`clear_rag.index.prepass`), norms at most 1 and a
    thousandth, plus ``prepass.SLACK`` for the roundings at the scores' size."""
    return 2 * prepass.gamma(dim + 2) * 1.001 + prepass.SLACK


def _scan_tiles(
    queries: FloatArray,
    matrix: FloatArray,
    id_rank: IntArray,
    tile: int,
    rows: IntArray,
    scores: FloatArray,
    ranks: IntArray,
) -> None:
    """Fill ``rows``, ``scores`` and ``ranks`` with each query's best by BLAS's scores, ``tile``
    vectors a product."""
    count, n = queries.shape[0], matrix.shape[0]
    keep = rows.shape[1]
    # The first tile is narrow: until every list is full, each score costs more (_scan), so the fewer
    # scores before that the better. The rest are split evenly, none wider than ``tile``.
    head = min(n, FIRST_TILE)
    tiles = -(-(n - head) // tile)  # rounded up
    bounds = [0] + [head + (n - head) * t // tiles for t in range(tiles + 1)] if tiles else [0, n]
    widest = max(hi - lo for lo, hi in itertools.pairwise(bounds))
    scratch = np.empty(count * widest, dtype=np.float32)  # one tile's scores, reused
    maxima = np.empty(head // CHUNK + 1, dtype=np.float32)  # scratch of _scan, one value a run
    spare, found = np.empty_like(maxima), np.empty(maxima.shape[0], dtype=np.intp)
    picked = np.empty(CHUNK, dtype=np.intp)
    kept = 0  # how full every query's best are (all see the same vectors)
    for start, end in itertools.pairwise(bounds):
        block = scratch[: count * (end - start)].reshape(count, end - start)
        np.matmul(queries, matrix[start:end].T, out=block)
        _scan(block, start, kept, id_rank, rows, scores, ranks, maxima, spare, found, picked)
        kept = min(keep, kept + end - start)


@numba.njit(cache=True, nogil=True, boundscheck=False, fastmath=True)
def _scan(
    block: Any,
    start: int,
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
    """Offer each query's line of ``block`` (the scores of vectors ``start`` on) to that query's
    best (``kept`` of ``rows.shape[1]`` held so far); ``maxima``, ``spare``, ``found`` and
    ``picked`` are scratch. fastmath lets the compiler vectorise the counts and the runs' maxima;
    scores are finite (queries and vectors are checked on the way in), which is all it assumes.

    A full list is offered only the scores reaching its worst (:func:`_offer_reaching`). Before,
    offered every score in order, the best would take in some k ln(n/k) of them, each a mispredicted
    branch or two. Rather, where k runs of the tile have their maximum at or above the worst kept
    (with nothing kept, all), the k-th largest of those maxima is a floor: k scores of this tile
    reach it, so a score below it is never among the k best and is not offered."""
    lines, width = block.shape
    keep = rows.shape[1]
    small = keep <= SMALL_K
    root = keep - 1 if small else 0  # where the worst kept is: a sorted list's end, a heap's root
    runs = width // CHUNK
    top = maxima[:runs]
    first = start  # the vector of the first score offered
    for q in range(lines):
        line, best, values, held = block[q], rows[q], scores[q], ranks[q]
        size = kept
        if size == keep:  # after the first tiles: most scores are below the worst kept
            _offer_reaching(line, first, id_rank, best, values, held, small, root)
            continue
        worst = -np.inf  # nothing kept yet, as every list is empty before the first tile
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
            floor = max(floor, heaps.kth_largest(spare, hit, keep, spare))
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
                for i in range(runs * CHUNK, width):
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
                size = heaps.offer(best, values, held, size, small, first + i, score, id_rank[first + i])
                if size == keep:
                    floor = max(floor, values[root])


@numba.njit(inline="always", nogil=True, boundscheck=False)
def _offer_reaching(
    line: Any, first: int, id_rank: Any, best: Any, values: Any, held: Any, small: bool, root: int
) -> None:  # pragma: no cover - compiled
    """Offer the scores of ``line`` (of vectors ``first`` on) that reach the worst of a full list of
    best. They are counted ``GROUP`` at a time, a compare and an add over contiguous scores that the
    compiler vectorises, and looked at one by one only in a group that has one: in a tile after the
    first, few groups do. The worst only rises as scores enter, so a count made against an earlier
    worst misses none."""
    keep = best.shape[0]
    worst = values[root]
    length = line.shape[0]
    for g in range(0, length, GROUP):
        end = min(g + GROUP, length)
        reach = np.int32(0)
        for i in range(g, end):
            reach += np.int32(line[i] >= worst)
        if reach == 0:
            continue
        for i in range(g, end):
            score = line[i]
            if score < worst:
                continue
            heaps.offer(best, values, held, keep, small, first + i, score, id_rank[first + i])
            worst = values[root]


@numba.njit(inline="always", nogil=True, fastmath=True, boundscheck=False)
def _dot(matrix: Any, i: int, query: Any) -> Any:  # pragma: no cover - compiled
    """Row ``i`` of ``matrix`` times ``query`` in float32, by one fixed loop whatever the row."""
    acc = np.float32(0.0)
    for j in range(matrix.shape[1]):
        acc += matrix[i, j] * query[j]
    return acc


@numba.njit(cache=True, nogil=True, boundscheck=False, fastmath=True)
def _settle(
    queries: Any,
    matrix: Any,
    id_rank: Any,
    found_rows: Any,
    found_scores: Any,
    margin: float,
    rows: Any,
    scores: Any,
    ranks: Any,
) -> None:  # pragma: no cover - compiled
    """Each query's ``rows.shape[1]`` best by the loop's scores (:func:`_dot`), ties by ``id_rank``,
    from its ``found_rows`` (best first by BLAS's ``found_scores``).

    BLAS's score of a row can depend on the row's place in the product (two equal vectors scored 1
    unit apart when one fell in the edge of a micro-kernel), so its order cannot settle a tie. The
    loop scores every row alike. Let ``T`` be the k-th best BLAS score and ``margin`` bound the gap
    between the two scores of a row. A row of the loop's top k has a BLAS score of at least
    ``T - 2 margin``: otherwise the k rows scoring ``T`` or more by BLAS all score more than it by
    the loop. So those rows are scored again by the loop and ranked: all of them when the spare rows
    kept do not reach below ``T - 2 margin`` (then more may be tied), by scoring every row."""
    keep, wide, n = rows.shape[1], found_rows.shape[1], matrix.shape[0]
    small = keep <= SMALL_K
    for q in range(queries.shape[0]):
        query, best, values, held = queries[q], rows[q], scores[q], ranks[q]
        cut = found_scores[q, keep - 1] - 2 * margin
        near = wide > keep and found_scores[q, keep] >= cut
        for t in range(keep - 1):
            near |= found_scores[q, t] - found_scores[q, t + 1] <= 2 * margin
        if not near:  # no two of the list within 2 margin, nor the next: BLAS's order is the loop's
            best[:] = found_rows[q, :keep]
            values[:] = found_scores[q, :keep]
            continue
        every = wide < n and found_scores[q, wide - 1] >= cut
        size = 0
        for t in range(n if every else wide):
            if not every and found_scores[q, t] < cut:
                break  # best first: the rest are lower
            i = t if every else found_rows[q, t]
            size = heaps.offer(best, values, held, size, small, i, _dot(matrix, i, query), id_rank[i])
        if not small:
            heaps.sort_heap(best, values, held)


@numba.njit(cache=True, nogil=True, boundscheck=False)
def _sort(rows: Any, scores: Any, ranks: Any) -> None:  # pragma: no cover - compiled
    """Each line's heap sorted in place, best first."""
    for q in range(rows.shape[0]):
        heaps.sort_heap(rows[q], scores[q], ranks[q])
