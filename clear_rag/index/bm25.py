"""BM25 keyword search over a hand-built inverted index, its weights computed ahead of the scoring.

Every (term, document) posting has its BM25 weight in flat numpy arrays laid out by term (the bm25s
approach): ``indptr[t]:indptr[t + 1]`` is term ``t``'s slice of ``docs`` and ``weights``; each term's
largest weight is its bound. A term's weights are computed the first time a query names it, not
when the index is loaded or updated (:mod:`clear_rag.index.weights`, which says how threads stay
safe), and kept for every later query. A query runs in :mod:`clear_rag.index.kernels`
(compiled by numba, which skips the documents that cannot reach the top k: MaxScore, see there), or,
where numba is not installed, adds up its terms' slices with one ``np.bincount`` and partitions out
the top k (:mod:`clear_rag.index.ranking`). Both give the same list, bit for bit.

What is persisted is the raw inverted index (postings with term frequencies, document lengths, the
id order, ids, vocabulary), each array in the narrowest unsigned integer type that holds it, and
opened by memory map (:mod:`clear_rag.index.stored`, which says why the weights are not stored). The
weights derive from it, and since every update moves N, avgdl and df, an ``add`` or ``remove`` makes
a version whose terms are all unweighed again; only new texts are ever tokenised, and ``load``
tokenises nothing and weighs nothing.

Matching SQLite FTS5's ``bm25()`` (``tests/index/test_bm25_fts5.py`` checks it):

* a document matches when it contains at least one query term; unknown query terms are ignored;
* a term repeated in the query counts once per occurrence, as FTS5 scores each phrase of
  ``"a" OR "a"`` (and of ``a a``) separately and adds them;
* dl counts every token of the document after analysis, N counts every document (also those
  with no tokens), avgdl is total tokens over N, and with ``idf="fts5"`` the idf is FTS5's.

FTS5 adds the phrases up in query order; here a document's weights are added in the order of
:func:`clear_rag.index.scoring.summation_order`, the one pruning needs, so a score may differ from
FTS5's in its last bits (a relative 1e-15), never in a ranking that FTS5's own rounding decides.

Results are sorted by score descending, ties broken by id ascending (code point order, the same
as SQLite's BINARY collation on UTF-8 text), so two runs over the same index give the same list.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

import numpy as np

from clear_rag.errors import StoreError
from clear_rag.index import stored
from clear_rag.index.analyze import Analyzer
from clear_rag.index.files import REBUILD
from clear_rag.index.postings import (
    EMPTY,
    Numbering,
    Postings,
    group_postings,
    merge,
    without,
)
from clear_rag.index.ranking import Scratches, Weighted, top_k, top_one
from clear_rag.index.scoring import IdfName, IntArray
from clear_rag.index.stored import FILES, META_FILE
from clear_rag.index.weights import UNWEIGHED, TermWeights

__all__ = ["FILES", "META_FILE", "BM25Index", "IdfName"]


@dataclass(frozen=True, slots=True)
class _State:
    """One version of the index; an update builds a new one and swaps it in."""

    raw: Postings
    weights: TermWeights  # raw's BM25 weights, each term's written at its first query
    weighted: Weighted  # weights.arrays: what queries read
    rows: _Rows  # each id's row, for updates
    term_of: dict[str, int]
    scratches: Scratches  # working memory lent to one-query searches of this version

    @property
    def row_of(self) -> dict[str, int]:
        return self.rows.of


class _Rows:
    """Each id's row, as a dict built the first time an update or ``in`` asks: a load followed by
    questions never builds it (at 100k ids it took a tenth of the load). Built twice at worst, by two
    threads at once, to the same dict."""

    __slots__ = ("_ids", "_of")

    def __init__(self, ids: tuple[str, ...], of: dict[str, int] | None = None) -> None:
        self._ids, self._of = ids, of

    @property
    def of(self) -> dict[str, int]:
        if self._of is None:
            self._of = dict(zip(self._ids, range(len(self._ids)), strict=True))
        return self._of


class BM25Index:
    """Texts keyed by string ids, ranked by Okapi BM25.

    ``k1`` and ``b`` default to FTS5's 1.2 and 0.75; ``idf`` is ``"lucene"`` (the default, as
    Lucene and bm25s) or ``"fts5"`` (as SQLite FTS5's ``bm25()``); see :func:`idf_lucene` and
    :func:`idf_fts5`. ``stem`` applies the Porter stemmer, as FTS5's ``porter`` tokenizer.
    ``add`` of an id already present replaces its text. Searches see the index either before
    or after an update, never halfway; updates themselves must not run concurrently.
    """

    def __init__(
        self, *, k1: float = 1.2, b: float = 0.75, idf: IdfName = "lucene", stem: bool = False
    ) -> None:
        if isinstance(k1, bool) or not isinstance(k1, int | float) or not math.isfinite(k1) or k1 < 0:
            raise ValueError(f"BM25Index k1={k1!r} is invalid; use a finite number >= 0 (FTS5 uses 1.2)")
        if isinstance(b, bool) or not isinstance(b, int | float) or not 0 <= b <= 1:
            raise ValueError(f"BM25Index b={b!r} is invalid; use a number from 0 to 1 (FTS5 uses 0.75)")
        if idf not in get_args(IdfName):
            raise ValueError(f"BM25Index idf={idf!r} is unknown; use one of {get_args(IdfName)}")
        if not isinstance(stem, bool):
            raise ValueError(f"BM25Index stem={stem!r} is invalid; pass True or False")
        self.k1, self.b, self.idf, self.stem = float(k1), float(b), idf, stem
        self.analyzer = Analyzer(stem=stem)
        self._state = self._derive(EMPTY)

    def __len__(self) -> int:
        return len(self._state.raw.ids)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._state.row_of

    def __repr__(self) -> str:
        return f"BM25Index(k1={self.k1}, b={self.b}, idf={self.idf!r}, stem={self.stem}, docs={len(self)})"

    @property
    def ids(self) -> tuple[str, ...]:
        return self._state.raw.ids

    @property
    def vocabulary(self) -> tuple[str, ...]:
        return self._state.raw.vocab

    def add(self, ids: Sequence[str], texts: Sequence[str]) -> None:
        """Index ``texts`` under ``ids``, replacing the text of any id already present."""
        ids, texts = list(ids), list(texts)
        if len(ids) != len(texts):
            raise ValueError(f"add() got {len(ids)} ids and {len(texts)} texts; pass one id per text")
        if not all(isinstance(i, str) for i in ids):
            raise ValueError("add() ids must all be str; convert them, e.g. with str(id)")
        if len(set(ids)) != len(ids):
            repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
            raise ValueError(f"ids {repeated} appear more than once in one add(); pass each id once")
        if not ids:
            return
        state = self._state
        replaced = [state.row_of[i] for i in ids if i in state.row_of]
        raw = without(state.raw, replaced) if replaced else state.raw
        numbering = Numbering({t: i for i, t in enumerate(raw.vocab)} if replaced else state.term_of)
        # May raise (a text that is not a str); only local copies have changed by then.
        term_ids, new_len = self.analyzer.term_ids(texts, numbering.__getitem__)
        term_of = dict(numbering)  # a plain dict again: a lookup in search must never add a term
        row_of = {d: i for i, d in enumerate(raw.ids)} if replaced else dict(state.row_of)
        row_of.update((doc_id, row) for row, doc_id in enumerate(ids, start=len(raw.ids)))
        # group_postings sorts term_ids in place, as its keys: the array is 60 MB at 100k passages.
        new = group_postings(term_ids, new_len, n_terms=len(term_of), first_row=len(raw.ids))
        merged = Postings(
            raw.ids + tuple(ids),
            tuple(term_of),  # ids are handed out in insertion order, so key order is the vocabulary
            *merge(raw, *new),
            np.concatenate([raw.doc_len, new_len]),
        )
        self._state = self._derive(merged, rows=_Rows(merged.ids, row_of), term_of=term_of)

    def remove(self, ids: Iterable[str]) -> int:
        """Drop the documents of ``ids``; ids not in the index are ignored. Returns how many went."""
        state = self._state
        rows = sorted({state.row_of[i] for i in ids if i in state.row_of})
        if rows:
            self._state = self._derive(without(state.raw, rows))
        return len(rows)

    def with_params(
        self, *, k1: float | None = None, b: float | None = None, idf: IdfName | None = None
    ) -> BM25Index:
        """A new index over the same postings with other weighting; never re-tokenises, and weighs
        each term at its first query. With the weighting unchanged it shares this index's weights (the
        store's loader asks for the configured weighting, usually the saved one: it used to compute
        every weight a second time)."""
        other = BM25Index(
            k1=self.k1 if k1 is None else k1,
            b=self.b if b is None else b,
            idf=self.idf if idf is None else idf,
            stem=self.stem,
        )
        other.analyzer = self.analyzer
        state = self._state
        if (other.k1, other.b, other.idf) == (self.k1, self.b, self.idf):
            other._state = state  # read-only to both: an update builds a new state and swaps it in
        else:
            other._state = other._derive(
                state.raw, rows=state.rows, term_of=state.term_of, id_rank=state.weighted.id_rank
            )
        return other

    def weigh(self) -> None:
        """Weigh every term now rather than each at its first query (:mod:`clear_rag.index.weights`):
        the whole cost up front, as an index weighed when it is built pays it. ``bench.retrieval``'s
        build calls it, so that its build time counts the weighing the peers' builds do."""
        state = self._state
        state.weights.fill(np.arange(len(state.raw.vocab), dtype=np.int64))

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best ``(id, score)`` pairs for ``query``; ``[]`` when nothing matches.

        ``search_many([query], k)[0]``, bit for bit, on a path of its own: ``ask`` and ``serve``
        search one question at a time, and through the batched call the numpy setup around the
        kernel cost as much as the scoring."""
        _check_k(k)
        state = self._state
        words = self.analyzer.terms(query)
        # A word outside the vocabulary reads None, one not looked up yet or not weighed UNWEIGHED.
        known = [t for t in map(state.weights.words.get, words, itertools.repeat(UNWEIGHED)) if t is not None]
        if UNWEIGHED in known:
            known = state.weights.weigh_words(words, state.term_of)
        return top_one(state.weighted, state.scratches, np.array(known, dtype=np.int64), k)

    def search_many(self, queries: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        """``search`` for each query, all against the same version of the index."""
        _check_k(k)
        state, queries = self._state, list(queries)
        term_ids, query_ptr = self._term_ids(state, queries)
        state.weights.fill(term_ids)
        return top_k(state.weighted, term_ids, query_ptr, k)

    def save(self, directory: str | Path) -> None:
        """Write the index's files (:mod:`clear_rag.index.stored`), each replaced atomically by way of
        a temporary file of its own (the predecessor's fixed ``.tmp`` names were shared by every
        process writing the same index)."""
        settings = {"k1": self.k1, "b": self.b, "idf": self.idf, "stem": self.stem}
        stored.write(Path(directory), settings, self._state.raw, self._state.weighted.id_rank)

    @classmethod
    def load(cls, directory: str | Path) -> BM25Index:
        """Open an index written by ``save``: its arrays memory-mapped, no text tokenised and no
        posting weighed (each term is at its first query); :class:`StoreError` with the rebuild
        command for files that are missing, damaged or of an earlier format."""
        folder = Path(directory)
        meta, raw, id_rank = stored.read(folder)
        try:
            index = cls(k1=meta["k1"], b=meta["b"], idf=meta["idf"], stem=meta["stem"])
        except (KeyError, ValueError) as err:
            raise StoreError(f"the BM25 index cannot be read ({err})", path=str(folder), fix=REBUILD) from err
        index._state = index._derive(raw, id_rank=id_rank)
        return index

    def _derive(
        self,
        raw: Postings,
        *,
        rows: _Rows | None = None,
        term_of: dict[str, int] | None = None,
        id_rank: IntArray | None = None,
    ) -> _State:
        """A version of the index over ``raw``, no term weighed yet (:class:`TermWeights`)."""
        weights = TermWeights(raw, k1=self.k1, b=self.b, idf=self.idf, id_rank=id_rank)
        if term_of is None:
            term_of = dict(zip(raw.vocab, range(len(raw.vocab)), strict=True))
        rows = rows if rows is not None else _Rows(raw.ids)
        return _State(raw, weights, weights.arrays, rows, term_of, Scratches())

    def _term_ids(self, state: _State, queries: list[str]) -> tuple[IntArray, IntArray]:
        """The known terms of every query, as term numbers end to end, and where each query starts."""
        words: list[str] = []
        ends = [0]
        for query in queries:
            words += self.analyzer.terms(query)
            ends.append(len(words))
        term_ids = np.fromiter(map(state.term_of.get, words, itertools.repeat(-1)), np.int64, len(words))
        known = term_ids >= 0
        known_before = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum(known, out=known_before[1:])
        return term_ids[known], known_before[ends]


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k={k!r} is invalid; ask for a positive number of results")
