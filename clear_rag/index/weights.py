"""Each posting's BM25 weight, computed a term at a time, the first time a query names the term.

The predecessor weighed every posting of the index whenever it was loaded or updated, in one
vectorised pass, with each term's bound and the dense rows of common terms: most of a load's time at
a million passages, and 8 bytes of memory a posting, whether a question ever named the term or not.
A version of the index (:class:`TermWeights`) now starts with its arrays allocated and unwritten
(``np.empty``: for arrays this large the system maps pages only as they are written; numpy asks for
huge pages, so a term's first weights may bring up to 2 MB around them in). What it computes at once
touches no posting: each document's length norm (:func:`clear_rag.index.scoring.length_norm`), each
term's idf and which terms get a dense row. A term's weights (:func:`clear_rag.index.scoring.term_score`
of its postings), its bound (the largest of them, :func:`clear_rag.index.scoring.term_bounds`) and, for
a term in at least 1 / DENSE_SHARE of the documents, its dense row are written by :meth:`TermWeights.fill`,
which ``BM25Index`` calls before it passes the term to a search. The arithmetic is elementwise the
whole-index pass's, in the same order of operations, so every weight is the same double, bit for bit,
whichever terms are weighed first and in whichever groups (``tests/index/test_bm25_lazy.py``).

Threads. ``serve`` searches from several threads, and the compiled kernels run without the GIL, so
the order of writes matters: a search must never read a term's weights, bound or dense row before
they are written. So:

* a kernel is only ever given terms that Python has seen weighed: ``BM25Index`` looks each word up
  in ``words`` (``search``) or checks ``ready`` (``search_many``), holding the GIL, and calls
  :meth:`TermWeights.fill` for the others before it calls a kernel; the kernels never read a flag;
* ``fill`` writes a term's weights, bound and dense row first, and only then sets its ``ready`` flag
  and maps its word to it in ``words``, both statements run holding the GIL;
* the GIL is a lock: whatever a thread wrote before it released the GIL is seen by every thread that
  acquires it afterwards. A search that finds a term's flag set acquired the GIL after the filler
  set it, so after the filler's writes of that term's arrays: it sees them, on any processor (this
  does not lean on x86's ordering of stores), and so does the kernel it then calls;
* ``fill`` runs under a lock of its own version's and writes only terms it finds unset under that
  lock, so each term is written once, before its flag, and never while a search reads it (searches
  read only flagged terms). Two threads asking for the same term: one weighs it, the other waits on
  the lock and then finds it weighed.

An update (``add``, ``remove``) and ``with_params`` with other settings make a new version, every
term unweighed; a question after it weighs only what it names. (The argument is the GIL build's,
CPython's default; a free-threaded build would need ``ready`` and ``words`` read under the lock.)
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Sequence

import numpy as np

from clear_rag.index.postings import Postings
from clear_rag.index.ranking import Weighted
from clear_rag.index.scoring import IDF, DocArray, IdfName, IntArray, length_norm, term_bounds, term_score

__all__ = ["DENSE_SHARE", "UNKNOWN_WORDS", "UNWEIGHED", "WEIGH_PER_PASS", "TermWeights"]

DENSE_SHARE = 4  # a term in at least a quarter of the documents gets a dense row of weights
# Postings weighed per pass at most (twice that with the pass's last span): the temporaries of a fill
# take a few MB, however many postings a term has or a batch of queries names.
WEIGH_PER_PASS = 1 << 18
# What ``search`` reads for a word not in ``TermWeights.words`` (a term number is never negative).
UNWEIGHED = -1
# Words outside the vocabulary a version remembers (so that a query naming one again takes the quick
# path), at most: a server asked any words at all must not grow without end.
UNKNOWN_WORDS = 1 << 16


class TermWeights:
    """The BM25 weights of one version of an index, each term's written the first time it is asked for.

    ``arrays`` is what searches read (:class:`clear_rag.index.ranking.Weighted`); of its weights,
    bounds and dense rows, only those of the terms :meth:`fill` has weighed hold their values.
    ``ready`` flags those terms by number. ``words`` maps each word a search looked up to its term's
    number once the term is weighed, or to None outside the vocabulary (up to UNKNOWN_WORDS). Dense
    rows (:data:`DENSE_SHARE`): pruning looks a few documents up in the long lists of common terms,
    and a dense row answers in one read where a search of the list takes several; a row costs 8
    bytes a document, at most 4/3 of the 24 bytes a posting (row and weight) the term's own postings
    take, and nothing until the term is asked for (``np.zeros`` maps pages as they are written).
    """

    __slots__ = ("_idf", "_k1", "_lock", "_norm", "_tfs", "_unknown", "_vocab", "arrays", "ready", "words")

    def __init__(
        self, raw: Postings, *, k1: float, b: float, idf: IdfName, id_rank: IntArray | None = None
    ) -> None:
        n_docs, df = len(raw.ids), np.diff(raw.indptr)
        total = int(raw.doc_len.sum(dtype=np.int64))
        # Documents without terms have no postings to score; 1.0 only avoids 0 / 0 then.
        avgdl = total / n_docs if total > 0 else 1.0
        self._norm = length_norm(raw.doc_len, avgdl, k1, b)
        self._idf, self._k1, self._tfs, self._vocab = IDF[idf](n_docs, df), k1, raw.tfs, raw.vocab
        common = np.flatnonzero(df * DENSE_SHARE >= max(n_docs, 1))
        dense_row = np.full(df.size, -1, dtype=np.int64)
        dense_row[common] = np.arange(common.size)
        if id_rank is None:  # pass it when the ids are those of an earlier version: no sort again
            id_rank = np.empty(n_docs, dtype=np.int64)
            id_rank[sorted(range(n_docs), key=raw.ids.__getitem__)] = np.arange(n_docs)
        ids = np.empty(n_docs, dtype=object)
        ids[:] = raw.ids
        weights, bounds, dense = np.empty(raw.docs.size), np.zeros(df.size), np.zeros((common.size, n_docs))
        docs = _read_only(raw.docs)
        self.arrays = Weighted(ids, raw.indptr, docs, weights, bounds, dense_row, dense, id_rank)
        self.ready = np.zeros(df.size, dtype=np.bool_)
        self.words: dict[str, int | None] = {}
        self._unknown = 0  # words outside the vocabulary in ``words``
        self._lock = threading.Lock()

    def fill(self, terms: IntArray) -> None:
        """Weigh every term of ``terms`` (term numbers, repeats allowed) not weighed yet."""
        if not terms.size or self.ready[terms].all():
            return
        with self._lock:
            todo = _distinct(terms[~self.ready[terms]])
            if not todo.size:  # another thread weighed them while this one waited
                return
            term, first, last = _spans(self.arrays.indptr, todo)
            starts = np.cumsum(last - first) - (last - first)
            for lo, hi in _passes(starts):
                self._weigh(term[lo:hi], first[lo:hi], last[lo:hi])
            # Only now, every array of these terms written (see the module's docstring).
            self.ready[todo] = True
            self.words.update((self._vocab[t], t) for t in todo.tolist())

    def weigh_words(self, words: Sequence[str], term_of: dict[str, int]) -> list[int]:
        """The term numbers of those of ``words`` in the vocabulary, in order, each one weighed: what
        ``BM25Index.search`` asks when a word of its query is not in :attr:`words` with a number."""
        terms = list(map(term_of.get, words))
        known = [t for t in terms if t is not None]
        if any(t is not None and w not in self.words for w, t in zip(words, terms, strict=True)):
            self.fill(np.array(known, dtype=np.int64))
        for word, term in zip(words, terms, strict=True):
            # counted without the lock: threads racing here may remember a few more than the bound
            if term is None and self._unknown < UNKNOWN_WORDS and word not in self.words:
                self.words[word] = None
                self._unknown += 1
        return known

    def _weigh(self, term: IntArray, first: IntArray, last: IntArray) -> None:
        """Write the weights of the postings ``first[i]:last[i]`` of ``term[i]``, raise the terms'
        bounds to their largest, and copy the weights of common terms into their dense rows."""
        _, _, docs, weights, bounds, dense_row, dense, _ = self.arrays
        length = last - first
        ptr = np.zeros(term.size + 1, dtype=np.int64)
        np.cumsum(length, out=ptr[1:])
        if term.size == 1:  # one span (often a long one): slices, not an array of positions
            at: slice | IntArray = slice(int(first[0]), int(last[0]))
        else:
            at = np.repeat(first - ptr[:-1], length) + np.arange(ptr[-1])
        found = term_score(np.repeat(self._idf[term], length), self._tfs[at], self._norm, docs[at], self._k1)
        weights[at] = found
        # a long term comes in several spans: its bound is the largest of theirs
        np.maximum.at(bounds, term, term_bounds(found, ptr))
        for x in np.flatnonzero(dense_row[term] >= 0).tolist():
            lo, hi = int(first[x]), int(last[x])
            dense[dense_row[term[x]], docs[lo:hi]] = weights[lo:hi]


def _distinct(terms: IntArray) -> IntArray:
    """``terms`` sorted, each once: ``np.unique``, whose first call imports numpy.ma (11 ms, which
    the first question after a start would wait for)."""
    ordered = np.sort(terms)
    first = np.ones(ordered.size, dtype=np.bool_)
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    return ordered[first]


def _spans(indptr: IntArray, terms: IntArray) -> tuple[IntArray, IntArray, IntArray]:
    """The postings of ``terms`` as spans of at most WEIGH_PER_PASS: ``(term, first, last)`` of each,
    a term's whole list, or consecutive pieces of a longer one."""
    lo, hi = indptr[terms], indptr[terms + 1]
    pieces = (hi - lo + WEIGH_PER_PASS - 1) // WEIGH_PER_PASS  # every term has a posting: at least 1
    piece = np.arange(int(pieces.sum())) - np.repeat(np.cumsum(pieces) - pieces, pieces)  # of its term's
    first = np.repeat(lo, pieces) + piece * WEIGH_PER_PASS
    return np.repeat(terms, pieces), first, np.minimum(first + WEIGH_PER_PASS, np.repeat(hi, pieces))


def _passes(starts: IntArray) -> list[tuple[int, int]]:
    """The spans weighed together, as ``[lo, hi)`` ranges of span numbers: those starting within the
    same WEIGH_PER_PASS postings of the concatenation (``starts``, each span's offset in it)."""
    group = starts // WEIGH_PER_PASS
    cuts = [0, *(np.flatnonzero(np.diff(group)) + 1).tolist(), starts.size]
    return list(itertools.pairwise(cuts))


def _read_only(docs: DocArray) -> DocArray:
    """``docs`` as the kernels take it: int32 and read-only, whether mapped from a file or built
    (numba compiles one version per type and per read-only flag; the warm-up compiles this one). A
    view: the caller's array is left as it is."""
    if docs.dtype != np.int32:
        raise TypeError(f"postings' document rows are {docs.dtype}; the kernels read int32")
    view = docs.view()
    view.flags.writeable = False
    return view
