"""The raw inverted index of ``BM25Index`` and the vectorised arithmetic that builds and edits it.

Postings are laid out by term: ``indptr[t]:indptr[t + 1]`` is term ``t``'s slice of ``docs`` (rows,
ascending) and ``tfs`` (term frequencies). Every update builds new arrays; nothing is edited in place.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from clear_rag.index.scoring import Counts, FloatArray, IntArray, term_score

DENSE_SHARE = 4  # a term in at least a quarter of the documents gets a dense row of weights
# Postings weighed per pass of posting_weights: its temporaries take a few MB, not the whole index's size.
WEIGH_PER_PASS = 1 << 18


class Postings(NamedTuple):
    """The raw inverted index: what is saved, and what updates replace (never edit in place)."""

    ids: tuple[str, ...]
    vocab: tuple[str, ...]
    indptr: IntArray  # len(vocab) + 1 offsets into docs and tfs
    docs: IntArray  # document row of each posting, ascending within a term
    tfs: Counts  # term frequency of each posting (a loaded index maps its narrow file, read-only)
    doc_len: Counts  # terms per document (mapped, as tfs)


EMPTY = Postings((), (), np.zeros(1, dtype=np.int64), *(np.zeros(0, dtype=np.int64),) * 3)


class Numbering(dict[str, int]):
    """A vocabulary that numbers a term the first time it is looked up: 0, 1, 2, ... in order seen."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number


def merge(
    raw: Postings, indptr: IntArray, docs: IntArray, tfs: IntArray
) -> tuple[IntArray, IntArray, Counts]:
    """indptr, docs and tfs of ``raw``'s postings and new ones (laid out by term as ``raw``, over
    ``raw``'s vocabulary or one that extends it), sorted by (term, document)."""
    if not raw.docs.size:
        return indptr, docs, tfs
    # Both sets are sorted by (term, document) and every new document comes after every old one,
    # so a stable sort by term merges them; timsort merges the two runs.
    new_df = np.diff(indptr)
    terms = np.concatenate([_term_of_postings(raw), np.repeat(np.arange(new_df.size), new_df)])
    order = np.argsort(terms, kind="stable")
    docs, tfs = np.concatenate([raw.docs, docs])[order], np.concatenate([raw.tfs, tfs])[order]
    return _indptr(np.bincount(terms, minlength=new_df.size)), docs, tfs


def group_postings(
    term_ids: IntArray, lengths: IntArray, n_terms: int, first_row: int
) -> tuple[IntArray, IntArray, IntArray]:
    """indptr, docs and tfs of the distinct terms of each text, sorted by term and then document.

    Each token becomes one integer key ``term * n_texts + text``, written over ``term_ids``;
    sorting the keys groups equal (term, text) pairs into runs, whose lengths are the term
    frequencies, and term ``t``'s runs start at the first key from ``t * n_texts`` on.
    """
    # In place and with outs: at 100k passages the keys take 60 MB, and each fresh array that
    # large costs its page faults as well as its pass.
    n_texts = lengths.size
    keys = term_ids
    keys *= n_texts
    keys += np.repeat(np.arange(n_texts, dtype=np.int64), lengths)
    keys.sort()
    first = np.empty(keys.size, dtype=bool)
    first[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    tfs = np.empty_like(starts)
    np.subtract(starts[1:], starts[:-1], out=tfs[:-1])
    tfs[-1:] = keys.size - starts[-1:]
    distinct = keys[starts]
    indptr = np.searchsorted(distinct, np.arange(n_terms + 1, dtype=np.int64) * n_texts)
    docs = np.remainder(distinct, n_texts, out=distinct)
    docs += first_row
    return indptr, docs, tfs


def posting_weights(raw: Postings, idf: FloatArray, norm: FloatArray, k1: float) -> FloatArray:
    """Every posting's BM25 weight, :func:`clear_rag.index.scoring.term_score` of its term's ``idf``, its
    tf and its document's ``norm``, computed a slice of postings at a time into one array.

    Elementwise the same operations as one call over all postings, so the same doubles, bit for bit;
    but the temporaries (the idf and norm of each posting, the numerator) are a slice's, not 48 MB
    each at 100k passages, which set the peak memory of a load.
    """
    weights = np.empty(raw.docs.size)
    for lo in range(0, raw.docs.size, WEIGH_PER_PASS):
        hi = min(lo + WEIGH_PER_PASS, raw.docs.size)
        # the terms whose postings meet [lo, hi), and how many of each fall inside it
        first = int(np.searchsorted(raw.indptr, lo, side="right")) - 1
        last = int(np.searchsorted(raw.indptr, hi, side="left"))
        starts, ends = raw.indptr[first:last], raw.indptr[first + 1 : last + 1]
        inside = np.minimum(ends, hi) - np.maximum(starts, lo)
        slice_idf = np.repeat(idf[first:last], inside)
        weights[lo:hi] = term_score(slice_idf, raw.tfs[lo:hi], norm, raw.docs[lo:hi], k1)
    return weights


def _indptr(df: IntArray) -> IntArray:
    return np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(df, dtype=np.int64)])


def _term_of_postings(raw: Postings) -> IntArray:
    return np.repeat(np.arange(len(raw.vocab), dtype=np.int64), np.diff(raw.indptr))


def without(raw: Postings, rows: list[int]) -> Postings:
    """``raw`` minus the documents at ``rows``, and minus the terms only they contained."""
    keep_doc = np.ones(len(raw.ids), dtype=bool)
    keep_doc[rows] = False
    kept = keep_doc[raw.docs]
    df = np.bincount(_term_of_postings(raw)[kept], minlength=len(raw.vocab))
    keep_term = df > 0
    # Postings stay sorted by term and then document: both renumberings keep the order.
    return Postings(
        tuple(i for i, keep in zip(raw.ids, keep_doc.tolist(), strict=True) if keep),
        tuple(t for t, keep in zip(raw.vocab, keep_term.tolist(), strict=True) if keep),
        _indptr(df[keep_term]),
        (np.cumsum(keep_doc) - 1)[raw.docs[kept]],
        raw.tfs[kept],
        raw.doc_len[keep_doc],
    )


def dense_rows(raw: Postings, weights: FloatArray) -> tuple[IntArray, FloatArray]:
    """The weights of every term in at least 1 / DENSE_SHARE of the documents, by row (0.0 where the
    term is absent), and each term's row among them (-1 for the others).

    Pruning looks a few documents up in the long lists of common terms; a dense row answers in one
    read where a search of the list takes several. A row costs 8 bytes a document, at most 4/3 of
    the 24 bytes a posting the term's own postings take.
    """
    n_docs, df = len(raw.ids), np.diff(raw.indptr)
    common = np.flatnonzero(df * DENSE_SHARE >= max(n_docs, 1))
    row_of_term = np.full(df.size, -1, dtype=np.int64)
    row_of_term[common] = np.arange(common.size)
    rows = np.zeros((common.size, n_docs))
    for row, term in enumerate(common.tolist()):
        span = slice(raw.indptr[term], raw.indptr[term + 1])
        rows[row, raw.docs[span]] = weights[span]
    return row_of_term, rows
