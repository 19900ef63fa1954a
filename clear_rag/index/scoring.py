"""The BM25 formulas, each a small pure function over numpy arrays (as bm25s keeps them apart).

Robertson & Zaragoza (2009), "The Probabilistic Relevance Framework: BM25 and Beyond"; the idf is a
named variant, so that the seed's formula and SQLite FTS5's can both be scored and compared.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

IdfName = Literal["lucene", "fts5"]
IntArray = npt.NDArray[np.int64]
DocArray = npt.NDArray[np.int32]  # postings' document rows: 4 bytes, as the files store them from 65,536 rows
FloatArray = npt.NDArray[np.float64]
Counts = npt.NDArray[np.integer[Any]]  # counts as stored: any integer type (a loaded index's are narrow)

FTS5_IDF_FLOOR = 1e-6


def idf_lucene(n_docs: int, df: IntArray) -> FloatArray:
    """``ln(1 + (N - df + 0.5) / (df + 0.5))``: always positive, even for a term in every document.

    The Robertson/Spärck Jones weight without relevance information (Robertson & Zaragoza 2009,
    "The Probabilistic Relevance Framework: BM25 and Beyond"), plus the one inside the log that
    Lucene's BM25Similarity and bm25s add.
    """
    return np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def idf_fts5(n_docs: int, df: IntArray) -> FloatArray:
    """``ln((N - df + 0.5) / (df + 0.5))``, replaced by ``1e-6`` where it is not positive.

    The Robertson/Spärck Jones weight without relevance information (Robertson & Zaragoza 2009),
    with the floor SQLite FTS5's ``bm25()`` applies (fts5_aux.c): a term in half the documents
    or more would weigh zero or less, so it counts only just.
    """
    idf = np.log((n_docs - df + 0.5) / (df + 0.5))
    return np.where(idf <= 0.0, FTS5_IDF_FLOOR, idf)


IDF: dict[str, Callable[[int, IntArray], FloatArray]] = {"lucene": idf_lucene, "fts5": idf_fts5}


def length_norm(doc_len: Counts, avgdl: float, k1: float, b: float) -> FloatArray:
    """``k1 * (1 - b + b * dl / avgdl)`` for each document: the part of :func:`term_score`'s
    denominator that depends on the document alone, computed once per document, not per posting.

    ``b`` sets how much a document longer than average (``dl / avgdl``) is discounted.
    """
    # In FTS5's order of operations (adding and multiplying commute bit for bit), in place.
    norm = np.multiply(b, doc_len, dtype=np.float64)
    norm /= avgdl
    norm += 1.0 - b
    norm *= k1
    return norm


def term_score(idf: FloatArray, tf: Counts, norm: FloatArray, doc: Counts, k1: float) -> FloatArray:
    """``idf * (tf * (k1 + 1)) / (tf + norm[doc])``, ``norm`` being :func:`length_norm` by document.

    The BM25 term weight of Robertson & Zaragoza (2009): tf saturates through ``k1``, and the
    norm grows with the length of the posting's document ``doc``. The operations run in the order
    FTS5's ``bm25()`` runs them, so equal inputs give bit-equal doubles.
    """
    # In place, still in that order: over millions of postings the temporaries of the one-line
    # expression cost as much as the arithmetic.
    denominator = norm[doc]
    denominator += tf
    score = np.multiply(tf, k1 + 1.0, dtype=np.float64)
    score /= denominator
    score *= idf
    return score


def term_bounds(weights: FloatArray, indptr: IntArray) -> FloatArray:
    """Each term's largest posting weight: the most that term can add to one document's score.

    MaxScore's bound (Turtle & Flood 1995, "Query evaluation: strategies and optimizations"). Every
    term of an index has at least one posting.
    """
    if indptr.size == 1:
        return np.zeros(0)
    return np.maximum.reduceat(weights, indptr[:-1])


def summation_order(term_ids: IntArray, bounds: FloatArray) -> tuple[IntArray, IntArray]:
    """A query's distinct terms and how often it names each, in the order its score adds them up.

    By descending ``count * bound`` (the most the term can add), ties in the order the query first
    names them. It is the order in which pruning visits the terms (:mod:`clear_rag.index.kernels`),
    and it is fixed so that every path sums a document's weights, each ``count * weight``, the same
    way and gets the same double, whatever numbers the index gave its terms.
    """
    terms, first, counts = np.unique(term_ids, return_index=True, return_counts=True)
    order = np.lexsort((first, -(counts * bounds[terms])))
    return terms[order], counts[order]
