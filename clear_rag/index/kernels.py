"""BM25 top k with dynamic pruning, compiled by numba: the query loop of ``BM25Index``.

The index holds every posting's BM25 weight (:func:`clear_rag.index.scoring.term_score`; the
weights of the query's terms, which :mod:`clear_rag.index.weights` writes before a search), laid
out by term with documents ascending, and each term's largest weight, its *bound*. A query's score
for a document is the sum of the weights of its terms, each term counted as often as the query
names it, summed in one fixed order: terms by descending ``count * bound``, ties in the order the
query names them (:func:`clear_rag.index.scoring.summation_order`, which the numpy path calls and
:func:`_query_terms` follows).

Two phases, after Turtle and Flood's MaxScore (1995, "Query evaluation: strategies and
optimizations"), term at a time as in Fontoura et al. (2011, "Evaluation strategies for top-k
queries over memory-resident inverted indexes"):

1. The terms are added in that order, whole lists at a time, into an accumulator. After a term, the
   bounds of the terms still to come add up to ``rest``, the most they can add to any document;
   once ``rest`` is below ``theta``, the k-th best score so far, a document not seen yet cannot
   reach the top k, and only the documents seen so far (the candidates) are followed further.
2. Each remaining term adds its weights to the candidates alone: a term in a quarter of the
   documents or more from its dense row (:func:`clear_rag.index.postings.dense_rows`), another by
   reading its list when the list is short next to the candidates, else by looking each candidate
   up in it. After each term, ``theta`` is raised to the k-th best candidate and every candidate
   whose score plus the bounds still to come falls below it is dropped.

Why no document that could enter the top k is dropped. Scores are rounded sums of positive weights,
and adding a non-negative number never lowers a rounded sum, so a document's final score is at
least any partial sum of it: ``theta``, the k-th best of k distinct documents' partial sums, is at
most the k-th best final score. A document dropped with partial sum ``s`` had ``(s + rest) *
slack < theta``; its final score adds weights each at most its term's bound, so, allowing for the
rounding of two sums of at most ``n + 1`` terms (a relative ``(n + 1) * 2**-53`` each, Higham 2002,
"Accuracy and Stability of Numerical Algorithms", section 4.2), with ``slack = 1 + 4 * (n + 1) *
2**-52`` its final score is below ``theta``, so k documents score strictly more and no tie rule can
bring it back. A candidate that stays gets every weight of every term added in the fixed order: the
very sum an exhaustive pass computes, bit for bit, which ``tests/index/test_bm25_pruning.py`` checks.
The top k are then ranked by score and, among equal scores, by id (``id_rank``: each row's place in
id order).

numba compiles these functions on their first call and keeps the machine code on disk beside this
file (``cache=True``): the first call after an install or an edit compiles for 15 s or more, a later
process loads it in about 0.3 s, after importing numba (about 0.4 s). So no search calls them before
:mod:`clear_rag.index.compiled` has had them compiled in a subprocess (``python -m
clear_rag.index.warm``) and loaded from that cache; until then searches take the numpy path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

from clear_rag.index import heaps
from clear_rag.index.scoring import DocArray, FloatArray, IntArray

__all__ = ["Scratch", "scratch", "top_k", "top_one"]

BoolArray = npt.NDArray[np.bool_]
# What a query reads of an index, in the order the kernels take it: indptr, docs, weights, bounds,
# dense_row, dense, id_rank (see top_k).
Arrays = tuple[IntArray, DocArray, FloatArray, FloatArray, IntArray, FloatArray, IntArray]

F = TypeVar("F", bound=Callable[..., object])

# A remaining term's list is read in full when it is shorter than this many postings per candidate,
# else each candidate is looked up in it: a lookup costs a few cache misses, a posting read in order
# a fraction of one (16, 32 and 64 timed the same on bench/retrieval.py's two corpora).
READ_PER_CANDIDATE = 32
# A term with a dense row (postings.dense_rows) is looked up, one read per candidate, unless there are
# so many candidates that reading its list costs less.
DENSE_READ_PER_CANDIDATE = 4
EPSILON = 2.0**-52


def _inlined(function: F) -> F:
    """As :func:`_compiled`, and compiled into each caller (a call per element costs as much as the
    work in the small helpers)."""
    return cast(F, numba.njit(cache=True, nogil=True, inline="always")(function))


def _compiled(function: F) -> F:
    """numba's nopython compile, cached on disk beside this file, releasing the GIL while it runs."""
    return cast(F, numba.njit(cache=True, nogil=True)(function))


@_inlined
def _query_terms(query: IntArray, bounds: FloatArray, terms: IntArray, counts: FloatArray) -> int:
    """Writes the distinct terms of ``query`` to ``terms``, in the order of
    :func:`clear_rag.index.scoring.summation_order`, and how often the query names each to
    ``counts``; returns how many. Quadratic in the query's length, which is short: no sort to
    compile."""
    n = 0
    for x in range(query.size):  # the distinct terms in the order first named
        y = 0
        while y < n and terms[y] != query[x]:
            y += 1
        if y == n:
            terms[n], counts[n] = query[x], 0.0
            n += 1
        counts[y] += 1.0
    # Insertion sort by descending count * bound; it is stable, so tied terms keep that order.
    for x in range(1, n):
        term, count = terms[x], counts[x]
        bound = count * bounds[term]
        y = x
        while y > 0 and counts[y - 1] * bounds[terms[y - 1]] < bound:
            terms[y], counts[y] = terms[y - 1], counts[y - 1]
            y -= 1
        terms[y], counts[y] = term, count
    return n


@_inlined
def _raised(
    theta: float, scores: FloatArray, rows: IntArray, n: int, k: int, heap: FloatArray, above: IntArray
) -> float:
    """The k-th highest of ``scores[rows[:n]]`` if it is above ``theta``, else ``theta``.

    Only the rows scoring above ``theta`` can hold the k-th highest then, and they are usually few:
    one pass gathers them, and a min-heap of the best k goes over those alone.
    """
    m = 0
    for x in range(n):
        above[m] = rows[x]
        m += scores[rows[x]] > theta
    if m < k:
        return theta
    for x in range(k):  # the first k, each sifted up
        value, i = scores[above[x]], x
        while i > 0 and heap[(i - 1) // 2] > value:
            heap[i] = heap[(i - 1) // 2]
            i = (i - 1) // 2
        heap[i] = value
    for x in range(k, m):  # the others replace the root when higher, sifted down
        value = scores[above[x]]
        if value > heap[0]:
            i = 0
            while True:
                child = 2 * i + 1
                if child >= k:
                    break
                if child + 1 < k and heap[child + 1] < heap[child]:
                    child += 1
                if heap[child] >= value:
                    break
                heap[i] = heap[child]
                i = child
            heap[i] = value
    return float(heap[0])


@_inlined
def _locate(docs: DocArray, lo: int, hi: int, doc: int) -> int:
    """The position of ``doc`` in the ascending ``docs[lo:hi]``, or -1: a guess by interpolation,
    then a galloping search from the guess, which lands within a few places on evenly spread lists."""
    if lo >= hi or doc < docs[lo] or doc > docs[hi - 1]:
        return -1
    span = docs[hi - 1] - docs[lo]
    guess = lo + (doc - docs[lo]) * (hi - 1 - lo) // span if span > 0 else lo
    if docs[guess] == doc:
        return guess
    step = 1
    if docs[guess] < doc:  # the answer is in (a, b]
        a, b = guess, hi
        while a + step < hi and docs[a + step] < doc:
            a += step
            step *= 2
        b = min(a + step, hi)
        a += 1
    else:  # in [a, b)
        a, b = lo, guess
        while b - step > lo and docs[b - step] > doc:
            b -= step
            step *= 2
        a = max(b - step, lo)
    while a < b:
        mid = (a + b) // 2
        if docs[mid] < doc:
            a = mid + 1
        else:
            b = mid
    return a if a < hi and docs[a] == doc else -1


@_inlined
def _sift_down(scores: FloatArray, id_rank: IntArray, heap: IntArray, size: int, row: int) -> None:
    """Put ``row`` at the root of ``heap[:size]`` (the worst kept at the root) and sift it down."""
    score, rank = scores[row], id_rank[row]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= size:
            break
        if child + 1 < size and heaps.below(
            scores[heap[child + 1]], id_rank[heap[child + 1]], scores[heap[child]], id_rank[heap[child]]
        ):
            child += 1
        if not heaps.below(scores[heap[child]], id_rank[heap[child]], score, rank):
            break
        heap[i] = heap[child]
        i = child
    heap[i] = row


@_compiled
def _best_k(scores: FloatArray, rows: IntArray, n: int, k: int, id_rank: IntArray, out_rows: IntArray) -> int:
    """The best ``min(k, n)`` of ``rows[:n]`` by score, then id, written to ``out_rows`` best first."""
    size = 0
    for x in range(n):
        row = rows[x]
        score, rank = scores[row], id_rank[row]
        if size == k and not heaps.below(scores[out_rows[0]], id_rank[out_rows[0]], score, rank):
            continue
        if size < k:  # sift up from the end of a heap whose root is the worst kept
            i = size
            size += 1
            while i > 0:
                parent = (i - 1) // 2
                if not heaps.below(score, rank, scores[out_rows[parent]], id_rank[out_rows[parent]]):
                    break
                out_rows[i] = out_rows[parent]
                i = parent
            out_rows[i] = row
        else:  # replace the root and sift down
            _sift_down(scores, id_rank, out_rows, k, row)
    for x in range(size - 1, 0, -1):  # heap sort: move the worst to the end, x times
        last = out_rows[x]
        out_rows[x] = out_rows[0]
        _sift_down(scores, id_rank, out_rows, x, last)
    return size


@_compiled
def _one_query(
    query: IntArray,
    index: Arrays,
    k: int,
    work: tuple[
        FloatArray, IntArray, IntArray, BoolArray, FloatArray, IntArray, IntArray, FloatArray, FloatArray
    ],
    out_rows: IntArray,
    out_scores: FloatArray,
) -> tuple[int, int]:
    """One query's best ``k`` rows written to ``out_rows`` and their scores to ``out_scores``; returns
    how many, and the postings read. ``index`` is :func:`top_k`'s arrays from ``indptr`` to
    ``id_rank``; ``work`` is scratch: ``score`` all zeros and ``is_candidate`` all False on entry,
    and so again on return, ``seen`` of ``n_docs + 1``, ``candidates`` and ``above`` of ``n_docs``,
    ``heap`` of ``k``, ``terms`` and ``counts`` of the query's length, ``rest`` one more. The batched
    and the one-query entry points both run this, so both give the same list."""
    indptr, docs, weights, bounds, dense_row, dense, id_rank = index
    score, seen, candidates, is_candidate, heap, above, terms, counts, rest = work
    read = 0
    n_terms = _query_terms(query, bounds, terms, counts)
    rest[n_terms] = 0.0  # rest[i]: the most the terms from i on can add to a score
    for i in range(n_terms - 1, -1, -1):
        rest[i] = rest[i + 1] + counts[i] * bounds[terms[i]]
    slack = 1.0 + 4.0 * (n_terms + 1) * EPSILON
    n_seen, theta, best, i = 0, 0.0, 0.0, 0
    # Phase 1: whole lists, until the terms left cannot lift an unseen document into the top k.
    while i < n_terms:
        term, count = terms[i], counts[i]
        for p in range(indptr[term], indptr[term + 1]):
            row = docs[p]
            before = score[row]
            seen[n_seen] = row
            n_seen += before == 0.0  # weights are positive, so zero means not seen yet
            after = before + count * weights[p]
            score[row] = after
            best = max(best, after)
        read += indptr[term + 1] - indptr[term]
        i += 1
        # theta <= best, so the k-th best is worth finding only once rest is below best.
        if i < n_terms and n_seen >= k and rest[i] * slack < best:
            kth = _raised(rest[i] * slack, score, seen, n_seen, k, heap, above)
            if rest[i] * slack < kth:
                theta = kth
                break
    n = 0
    for x in range(n_seen):
        row = seen[x]
        candidates[n] = row
        n += (score[row] + rest[i]) * slack >= theta
    # Phase 2: the candidates alone. A term in many documents has its weights in a dense row too,
    # one read per candidate; another term's list is read in full or each candidate looked up.
    for x in range(n):
        is_candidate[candidates[x]] = True
    for j in range(i, n_terms):
        lo, hi, count, row_of_term = (
            indptr[terms[j]],
            indptr[terms[j] + 1],
            counts[j],
            dense_row[terms[j]],
        )
        if (row_of_term < 0 and hi - lo < READ_PER_CANDIDATE * n) or (
            row_of_term >= 0 and hi - lo <= DENSE_READ_PER_CANDIDATE * n
        ):
            read += hi - lo
            for p in range(lo, hi):
                if is_candidate[docs[p]]:
                    score[docs[p]] += count * weights[p]
        elif row_of_term >= 0:
            read += n
            for x in range(n):
                score[candidates[x]] += count * dense[row_of_term, candidates[x]]
        else:
            read += n
            for x in range(n):
                p = _locate(docs, lo, hi, candidates[x])
                if p >= 0:
                    score[candidates[x]] += count * weights[p]
        # theta rises to the k-th best candidate; those that can no longer reach it go.
        if n > k:
            theta = _raised(theta, score, candidates, n, k, heap, above)
            kept = 0
            for x in range(n):
                row = candidates[x]
                candidates[kept] = row
                stays = (score[row] + rest[j + 1]) * slack >= theta
                is_candidate[row] = stays
                kept += stays
            n = kept
    for x in range(n):
        is_candidate[candidates[x]] = False
    found = _best_k(score, candidates, n, k, id_rank, out_rows)
    for x in range(found):
        out_scores[x] = score[out_rows[x]]
    for x in range(n_seen):
        score[seen[x]] = 0.0
    return found, read


@_compiled
def _top_k(
    term_ids: IntArray,
    query_ptr: IntArray,
    indptr: IntArray,
    docs: DocArray,
    weights: FloatArray,
    bounds: FloatArray,
    dense_row: IntArray,
    dense: FloatArray,
    id_rank: IntArray,
    k: int,
) -> tuple[IntArray, FloatArray, IntArray, IntArray]:
    n_queries, n_docs = query_ptr.size - 1, id_rank.size
    out_rows = np.zeros((n_queries, k), dtype=np.int64)
    out_scores = np.zeros((n_queries, k))
    found = np.zeros(n_queries, dtype=np.int64)
    read = np.zeros(n_queries, dtype=np.int64)
    score = np.zeros(n_docs)  # the accumulator, back to zeros after each query
    seen = np.empty(n_docs + 1, dtype=np.int64)  # rows with a nonzero score, in the order first seen
    candidates = np.empty(n_docs, dtype=np.int64)
    is_candidate = np.zeros(n_docs, dtype=np.bool_)
    heap, above = np.empty(k), np.empty(n_docs, dtype=np.int64)
    longest = 0
    for q in range(n_queries):
        longest = max(longest, query_ptr[q + 1] - query_ptr[q])
    terms, counts, rest = np.empty(longest, dtype=np.int64), np.empty(longest), np.empty(longest + 1)
    index = (indptr, docs, weights, bounds, dense_row, dense, id_rank)
    work = (score, seen, candidates, is_candidate, heap, above, terms, counts, rest)
    for q in range(n_queries):
        query = term_ids[query_ptr[q] : query_ptr[q + 1]]
        found[q], read[q] = _one_query(query, index, k, work, out_rows[q], out_scores[q])
    return out_rows, out_scores, found, read


@_compiled
def _top_one(
    query: IntArray,
    indptr: IntArray,
    docs: DocArray,
    weights: FloatArray,
    bounds: FloatArray,
    dense_row: IntArray,
    dense: FloatArray,
    id_rank: IntArray,
    k: int,
    score: FloatArray,
    rows: IntArray,
    is_candidate: BoolArray,
    out_rows: IntArray,
    out_scores: FloatArray,
) -> int:
    n_docs = id_rank.size
    seen, candidates = rows[: n_docs + 1], rows[n_docs + 1 : 2 * n_docs + 1]
    above = rows[2 * n_docs + 1 : 3 * n_docs + 1]
    terms, counts, rest = np.empty(query.size, dtype=np.int64), np.empty(query.size), np.empty(query.size + 1)
    index = (indptr, docs, weights, bounds, dense_row, dense, id_rank)
    work = (score, seen, candidates, is_candidate, np.empty(k), above, terms, counts, rest)
    found, _ = _one_query(query, index, k, work, out_rows, out_scores)
    return found


def top_k(
    term_ids: IntArray,
    query_ptr: IntArray,
    indptr: IntArray,
    docs: DocArray,
    weights: FloatArray,
    bounds: FloatArray,
    dense_row: IntArray,
    dense: FloatArray,
    id_rank: IntArray,
    k: int,
) -> tuple[IntArray, FloatArray, IntArray, IntArray]:
    """The ``k`` best rows of each query, best first, and their scores.

    Query ``q`` is the term numbers ``term_ids[query_ptr[q]:query_ptr[q + 1]]`` (repeats count);
    ``indptr``, ``docs`` and ``weights`` are the postings by term, ``bounds`` each term's largest
    weight, ``dense[dense_row[t]]`` the weights of term ``t`` by row where ``dense_row[t] >= 0``,
    and ``id_rank`` each row's place in id order. Returns ``rows`` and ``scores``, both
    ``(queries, min(k, rows))``, of which the first ``found[q]`` of row ``q`` hold its results, and
    ``read[q]``, the postings that query read or looked up (its work; pruning keeps it below the
    total). Every weight must be positive, as BM25's are: the pruning argument rests on it. Only the
    queries' terms are read, so only theirs need be written. ``docs`` is int32 and read-only (as a
    loaded index maps it), the others writable: the versions the warm-up compiles.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"top_k k={k!r} is invalid; ask for a positive number of results")
    if id_rank.size == 0:
        empty = np.zeros((query_ptr.size - 1, 0), dtype=np.int64)
        nothing = np.zeros(query_ptr.size - 1, dtype=np.int64)
        return empty, empty.astype(np.float64), nothing, nothing
    return _top_k(
        term_ids,
        query_ptr,
        indptr,
        docs,
        weights,
        bounds,
        dense_row,
        dense,
        id_rank,
        min(k, id_rank.size),
    )


class Scratch(NamedTuple):
    """Working memory of one :func:`top_one` search over ``n`` documents (:func:`scratch`)."""

    score: FloatArray  # n zeros: the accumulator
    rows: IntArray  # 3n + 1: the rows seen, the candidates, and those above theta
    is_candidate: BoolArray  # n False


def scratch(n_docs: int) -> Scratch:
    """Working memory for one :func:`top_one` search at a time over ``n_docs`` documents."""
    return Scratch(
        np.zeros(n_docs), np.empty(3 * n_docs + 1, dtype=np.int64), np.zeros(n_docs, dtype=np.bool_)
    )


def top_one(
    query: IntArray,
    arrays: Arrays,
    k: int,
    scratch: Scratch,
    out_rows: IntArray,
    out_scores: FloatArray,
) -> int:
    """:func:`top_k` of the one query ``query``, into buffers the caller owns; returns how many of
    ``out_rows`` and ``out_scores`` hold its results, best first.

    ``arrays`` are :func:`top_k`'s, ``indptr`` to ``id_rank`` in its order. ``k`` is a positive int
    at most the number of rows, and ``out_rows`` and ``out_scores`` hold at least ``k``. ``scratch``
    is working memory for one search at a time, lent by the caller: it is left as it came (zero
    scores, no candidates), so the next search can take it as it is. The batched call allocates
    arrays the size of the index for each call (at 100,000 documents, with the page faults of
    touching them, they cost more than a query's scoring); this one reuses them.
    """
    return _top_one(query, *arrays, k, *scratch, out_rows, out_scores)
