"""The k best documents of BM25 queries over weighted postings, with or without numba.

:mod:`clear_rag.index.kernels` (numba) skips the documents that cannot reach the top k; where numba
is not installed, and while its compiled code is not ready (:mod:`clear_rag.index.compiled`: the
compile runs in the background, never in a question), numpy scores every matching document
(:func:`exhaustive`). Both add a document's weights in :func:`clear_rag.index.scoring.summation_order`
and break ties by id, so both give the same list, bit for bit (``tests/index/test_bm25_pruning.py``),
and a process switching from one to the other halfway through its questions answers them alike.

:func:`top_k` ranks a batch of queries in one kernel call; :func:`top_one` ranks one query, as
``ask`` and ``serve`` search, in working memory the index lends (:class:`Scratches`), and gives the
same list as :func:`top_k` does for that query (``tests/index/test_bm25_one.py``).
"""

from __future__ import annotations

import itertools
from types import ModuleType
from typing import TYPE_CHECKING, NamedTuple, cast

import numpy as np
import numpy.typing as npt

from clear_rag.index import compiled
from clear_rag.index.scoring import DocArray, FloatArray, IntArray, summation_order
from clear_rag.index.selection import top_rows

if TYPE_CHECKING:  # the kernels module imports numba, which a search loads only once it is ready
    from clear_rag.index.kernels import Scratch

ObjectArray = npt.NDArray[np.object_]

__all__ = ["Scratches", "Weighted", "exhaustive", "top_k", "top_one"]

# Results one kernel call may hold (queries x k): search_many(queries, k=len(index)) goes in slices.
RESULTS_PER_CALL = 1 << 20


class Weighted(NamedTuple):
    """What a query reads: postings by term with their BM25 weights, and what pruning and ties need.
    Built by :class:`clear_rag.index.weights.TermWeights`, which writes a term's weights, bound and
    dense row the first time it is asked for: every function here reads only the query's terms, and
    is given only terms already weighed."""

    ids: ObjectArray  # the ids as an array, to turn result rows into ids in one call
    indptr: IntArray
    docs: DocArray  # read-only int32, mapped from a loaded index's file
    weights: FloatArray  # BM25 weight of each posting
    bounds: FloatArray  # largest weight of each term
    dense_row: IntArray  # the row of dense holding a common term's weights, else -1
    dense: FloatArray
    id_rank: IntArray  # each row's place in id order, which breaks ties


def top_k(index: Weighted, term_ids: IntArray, query_ptr: IntArray, k: int) -> list[list[tuple[str, float]]]:
    """The ``k`` best ``(id, score)`` pairs of each query, query ``q`` being the term numbers
    ``term_ids[query_ptr[q]:query_ptr[q + 1]]``; ``k`` is a positive int."""
    kernels = _kernels()
    if kernels is None:
        return _every_exhaustive(index, term_ids, query_ptr, k)
    per_call = max(1, RESULTS_PER_CALL // max(1, min(k, len(index.ids))))
    found: list[list[tuple[str, float]]] = []
    for first in range(0, query_ptr.size - 1, per_call):
        ptr = query_ptr[first : first + per_call + 1]
        try:
            rows, scores, counts, _ = kernels.top_k(
                term_ids[ptr[0] : ptr[-1]],
                ptr - ptr[0],
                index.indptr,
                index.docs,
                index.weights,
                index.bounds,
                index.dense_row,
                index.dense,
                index.id_rank,
                k,
            )
        except TypeError as err:  # no compiled version for these argument types, and none may be made
            compiled.fall_back(err)
            return _every_exhaustive(index, term_ids, query_ptr, k)
        found += _pairs(index.ids, rows, scores, counts)
    return found


class Scratches:
    """Working memory for the one-query kernel over one version of an index: a set per search running
    at once, each lent to one search and given back after it. ``serve`` searches from several
    threads, and the kernel releases the GIL, so two searches must never share a set; a list's
    ``pop`` and ``append`` are atomic, so no lock is needed. There are as many sets as searches
    have ever run at once, each about 33 bytes per document."""

    def __init__(self) -> None:
        self._free: list[Scratch] = []

    def take(self, kernels: ModuleType, n_docs: int) -> Scratch:
        try:
            return self._free.pop()
        except IndexError:
            found: Scratch = kernels.scratch(n_docs)
            return found

    def give(self, scratch: Scratch) -> None:
        self._free.append(scratch)


def top_one(index: Weighted, scratches: Scratches, term_ids: IntArray, k: int) -> list[tuple[str, float]]:
    """``top_k`` of the one query ``term_ids``: what ``ask`` and ``serve`` call, once per question.

    The same list as ``top_k`` gives for it, bit for bit (the kernel runs the very loop of the
    batched one), without what the batched call costs around it: the query pointers, the arrays
    the size of the index allocated afresh (``scratches`` lends them), and the results of a batch
    unpacked query by query."""
    kernels = _kernels()
    if kernels is None:
        return exhaustive(index, term_ids, k)
    n_docs = index.id_rank.size
    if not n_docs:
        return []
    k = min(k, n_docs)
    out_rows, out_scores = np.empty(k, dtype=np.int64), np.empty(k)
    scratch = scratches.take(kernels, n_docs)
    try:
        found = kernels.top_one(term_ids, index[1:], k, scratch, out_rows, out_scores)
    except TypeError as err:  # refused at the call, before the kernel touched the scratch
        compiled.fall_back(err)
        return exhaustive(index, term_ids, k)
    finally:
        scratches.give(scratch)
    return list(zip(index.ids[out_rows[:found]].tolist(), out_scores[:found].tolist(), strict=True))


def _every_exhaustive(
    index: Weighted, term_ids: IntArray, query_ptr: IntArray, k: int
) -> list[list[tuple[str, float]]]:
    return [exhaustive(index, term_ids[lo:hi], k) for lo, hi in itertools.pairwise(query_ptr.tolist())]


def exhaustive(index: Weighted, term_ids: IntArray, k: int) -> list[tuple[str, float]]:
    """Every document matching the query ``term_ids`` scored, then the top ``k``: what the kernel
    returns, computed without numba."""
    if not term_ids.size:
        return []
    terms, counts = summation_order(term_ids, index.bounds)
    spans = [(index.indptr[t], index.indptr[t + 1]) for t in terms.tolist()]
    # bincount adds up each document's weights in array order, starting from 0.0: the kernel's sum.
    total = cast(
        FloatArray,  # with weights, bincount gives float64; its stub says integers
        np.bincount(
            np.concatenate([index.docs[lo:hi] for lo, hi in spans]),
            weights=np.concatenate(
                [n * index.weights[lo:hi] for n, (lo, hi) in zip(counts.tolist(), spans, strict=True)]
            ),
            minlength=len(index.ids),
        ),
    )
    rows = top_rows(total, k)
    # Every posting weight is positive (idf > 0 under both idf choices, tf >= 1), so a
    # document holds a query term exactly when its total is above zero.
    rows = rows[total[rows] > 0]
    pairs = list(zip(index.ids[rows].tolist(), total[rows].tolist(), strict=True))
    pairs.sort(key=lambda pair: (-pair[1], pair[0]))
    return pairs[:k]


def _kernels() -> ModuleType | None:
    """The compiled search once it is loaded, or None (numba not installed, or its compile still
    running in the background: :mod:`clear_rag.index.compiled`)."""
    ready = compiled.kernels()
    return ready.bm25 if ready is not None else None


def _pairs(
    ids: ObjectArray, rows: IntArray, scores: FloatArray, counts: IntArray
) -> list[list[tuple[str, float]]]:
    """The kernel's result arrays as ``(id, score)`` lists, one per query. One ``tolist`` of the ids
    themselves (not of row numbers, which would each become an int object) and one of the scores."""
    held = np.arange(rows.shape[1]) < counts[:, None]
    pairs = zip(ids[rows[held]].tolist(), scores[held].tolist(), strict=True)
    return [list(itertools.islice(pairs, count)) for count in counts.tolist()]
