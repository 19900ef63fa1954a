"""The raw inverted index of ``BM25Index`` and the vectorised arithmetic that builds and edits it.

Postings are laid out by term: ``indptr[t]:indptr[t + 1]`` is term ``t``'s slice of ``docs`` (rows,
ascending) and ``tfs`` (term frequencies). Every update builds new arrays; nothing is edited in place.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from clear_rag.index.scoring import Counts, DocArray, IntArray

# Document rows are int32 (DocArray), as the compiled search reads them from a loaded index's file.
MAX_DOCS = 2**31


class Postings(NamedTuple):
    """The raw inverted index: what is saved, and what updates replace (never edit in place)."""

    ids: tuple[str, ...]
    vocab: tuple[str, ...]
    indptr: IntArray  # len(vocab) + 1 offsets into docs and tfs
    docs: DocArray  # document row of each posting, ascending within a term
    tfs: Counts  # term frequency of each posting (a loaded index maps its narrow file, read-only)
    doc_len: Counts  # terms per document (mapped, as tfs)


EMPTY = Postings(
    (), (), np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int32), *(np.zeros(0, dtype=np.int64),) * 2
)


class Numbering(dict[str, int]):
    """A vocabulary that numbers a term the first time it is looked up: 0, 1, 2, ... in order seen."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number


def merge(
    raw: Postings, indptr: IntArray, docs: DocArray, tfs: IntArray
) -> tuple[IntArray, DocArray, Counts]:
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
) -> tuple[IntArray, DocArray, IntArray]:
    """indptr, docs and tfs of the distinct terms of each text, sorted by term and then document.

    Each token becomes one integer key ``term * n_texts + text``, written over ``term_ids``;
    sorting the keys groups equal (term, text) pairs into runs, whose lengths are the term
    frequencies, and term ``t``'s runs start at the first key from ``t * n_texts`` on.
    """
    n_texts = lengths.size
    if first_row + n_texts > MAX_DOCS:
        raise ValueError(f"an index holds at most {MAX_DOCS:,} documents; split the corpus into several")
    # In place and with outs: at 100k passages the keys take 60 MB, and each fresh array that
    # large costs its page faults as well as its pass.
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
    rows = np.remainder(distinct, n_texts, out=distinct)
    rows += first_row
    return indptr, rows.astype(np.int32), tfs


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
        (np.cumsum(keep_doc, dtype=np.int32) - 1)[raw.docs[kept]],
        raw.tfs[kept],
        raw.doc_len[keep_doc],
    )
