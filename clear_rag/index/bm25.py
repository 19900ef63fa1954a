"""BM25 keyword search over a hand-built inverted index, scored at index time (the bm25s approach).

Every (term, document) posting gets its BM25 weight when the index changes, stored in flat numpy
arrays laid out by term: ``indptr[t]:indptr[t + 1]`` is term ``t``'s slice of ``docs`` and
``scores``. A query adds up the slices of its own terms with one ``np.bincount``, a partition
finds the k-th best score (:func:`clear_rag.index.vectors.top_rows`), and only the documents at
or above it are sorted.

What is persisted is the raw inverted index (postings with term frequencies, document lengths,
ids, vocabulary). The scores derive from it, and since every update moves N, avgdl and df, they
are recomputed after each ``add`` or ``remove`` in one vectorised pass; only new texts are ever
tokenised, and ``load`` tokenises nothing.

Matching SQLite FTS5's ``bm25()`` (``tests/index/test_bm25_fts5.py`` checks it):

* a document matches when it contains at least one query term; unknown query terms are ignored;
* a term repeated in the query counts once per occurrence, as FTS5 scores each phrase of
  ``"a" OR "a"`` (and of ``a a``) separately and adds them; occurrences are summed in query order;
* dl counts every token of the document after analysis, N counts every document (also those
  with no tokens), avgdl is total tokens over N, and with ``idf="fts5"`` the idf is FTS5's.

Results are sorted by score descending, ties broken by id ascending (code point order, the same
as SQLite's BINARY collation on UTF-8 text), so two runs over the same index give the same list.
"""

from __future__ import annotations

import json
import math
import os
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple, cast, get_args

import numpy as np
import numpy.typing as npt

from clear_rag.errors import StoreError
from clear_rag.index.analyze import Analyzer
from clear_rag.index.vectors import top_rows

IdfName = Literal["lucene", "fts5"]
IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

FORMAT = 1
META_FILE = "bm25.json"
ARRAY_FILES = ("indptr", "docs", "tfs", "doc_len")
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


def term_score(
    idf: FloatArray, tf: IntArray, doc_len: IntArray, avgdl: float, k1: float, b: float
) -> FloatArray:
    """``idf * (tf * (k1 + 1)) / (tf + k1 * (1 - b + b * dl / avgdl))``.

    The BM25 term weight of Robertson & Zaragoza (2009): tf saturates through ``k1``, and ``b``
    sets how much a document longer than average (``dl / avgdl``) is discounted. The operations
    run in the order FTS5's ``bm25()`` runs them, so equal inputs give bit-equal doubles.
    """
    # In place, still in that order: over millions of postings the temporaries of the one-line
    # expression cost as much as the arithmetic. (Adding and multiplying commute bit for bit.)
    norm = np.multiply(b, doc_len, dtype=np.float64)
    norm /= avgdl
    norm += 1.0 - b
    norm *= k1
    norm += tf
    score = np.multiply(tf, k1 + 1.0, dtype=np.float64)
    score /= norm
    score *= idf
    return score


class _Postings(NamedTuple):
    """The raw inverted index: what is saved, and what updates replace (never edit in place)."""

    ids: tuple[str, ...]
    vocab: tuple[str, ...]
    indptr: IntArray  # len(vocab) + 1 offsets into docs and tfs
    docs: IntArray  # document row of each posting, ascending within a term
    tfs: IntArray  # term frequency of each posting
    doc_len: IntArray  # terms per document


_EMPTY = _Postings((), (), np.zeros(1, dtype=np.int64), *(np.zeros(0, dtype=np.int64),) * 3)


@dataclass(frozen=True, slots=True)
class _State:
    """One version of the index; an update builds a new one and swaps it in."""

    raw: _Postings
    scores: FloatArray  # BM25 weight of each posting, aligned with raw.docs
    row_of: dict[str, int]
    term_of: dict[str, int]


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
        self._state = self._derive(_EMPTY)

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
        raw = _without(state.raw, replaced) if replaced else state.raw
        numbering = _Numbering({t: i for i, t in enumerate(raw.vocab)} if replaced else state.term_of)
        # May raise (a text that is not a str); only local copies have changed by then.
        term_ids, new_len = _term_ids(self.analyzer, texts, numbering)
        term_of = dict(numbering)  # a plain dict again: a lookup in search must never add a term
        row_of = {d: i for i, d in enumerate(raw.ids)} if replaced else dict(state.row_of)
        row_of.update((doc_id, row) for row, doc_id in enumerate(ids, start=len(raw.ids)))
        new_terms, new_docs, new_tfs = _postings(term_ids, new_len, first_row=len(raw.ids))
        merged = _Postings(
            raw.ids + tuple(ids),
            tuple(term_of),  # ids are handed out in insertion order, so key order is the vocabulary
            *_merge(raw, new_terms, new_docs, new_tfs, len(term_of)),
            np.concatenate([raw.doc_len, new_len]),
        )
        self._state = self._derive(merged, row_of=row_of, term_of=term_of)

    def remove(self, ids: Iterable[str]) -> int:
        """Drop the documents of ``ids``; ids not in the index are ignored. Returns how many went."""
        state = self._state
        rows = sorted({state.row_of[i] for i in ids if i in state.row_of})
        if rows:
            self._state = self._derive(_without(state.raw, rows))
        return len(rows)

    def with_params(
        self, *, k1: float | None = None, b: float | None = None, idf: IdfName | None = None
    ) -> BM25Index:
        """A new index over the same postings with other weighting; re-scores, never re-tokenises."""
        other = BM25Index(
            k1=self.k1 if k1 is None else k1,
            b=self.b if b is None else b,
            idf=self.idf if idf is None else idf,
            stem=self.stem,
        )
        other.analyzer = self.analyzer
        other._state = other._derive(self._state.raw, row_of=self._state.row_of, term_of=self._state.term_of)
        return other

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best ``(id, score)`` pairs for ``query``; ``[]`` when nothing matches."""
        _check_k(k)
        return self._search(self._state, query, k)

    def search_many(self, queries: Sequence[str], k: int) -> list[list[tuple[str, float]]]:
        """``search`` for each query, all against the same version of the index."""
        _check_k(k)
        state = self._state
        return [self._search(state, query, k) for query in queries]

    def save(self, directory: str | Path) -> None:
        """Write the raw inverted index as ``.npy`` files and ``bm25.json``, each replaced atomically."""
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        raw = self._state.raw
        meta = {"format": FORMAT, "k1": self.k1, "b": self.b, "idf": self.idf, "stem": self.stem}
        for name in ARRAY_FILES:
            with (folder / f"bm25_{name}.npy.tmp").open("wb") as fh:
                np.save(fh, getattr(raw, name))
        # ensure_ascii (the default) keeps stems holding stray UTF-8 bytes, as lone surrogates, writable.
        body = json.dumps({**meta, "ids": list(raw.ids), "vocab": list(raw.vocab)})
        (folder / f"{META_FILE}.tmp").write_text(body, encoding="utf-8")
        for name in [*(f"bm25_{n}.npy" for n in ARRAY_FILES), META_FILE]:  # the metadata last
            os.replace(folder / f"{name}.tmp", folder / name)

    @classmethod
    def load(cls, directory: str | Path) -> BM25Index:
        """Open an index written by ``save``: scores are recomputed, no text is tokenised."""
        folder = Path(directory)
        try:
            meta = json.loads((folder / META_FILE).read_text(encoding="utf-8"))
            if meta.get("format") != FORMAT:
                raise ValueError(f"format {meta.get('format')!r}, expected {FORMAT}")
            index = cls(k1=meta["k1"], b=meta["b"], idf=meta["idf"], stem=meta["stem"])
            if not isinstance(meta["ids"], list) or not isinstance(meta["vocab"], list):
                raise ValueError("ids and vocab must be lists")
            arrays = [
                np.load(folder / f"bm25_{n}.npy", allow_pickle=False).astype(np.int64) for n in ARRAY_FILES
            ]
            raw = _Postings(tuple(meta["ids"]), tuple(meta["vocab"]), *arrays)
            _check_consistent(raw)
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            raise StoreError(
                f"the BM25 index cannot be read ({err})",
                path=str(folder),
                fix="Re-run ingest to rebuild the keyword index",
            ) from err
        index._state = index._derive(raw)
        return index

    def _derive(
        self, raw: _Postings, *, row_of: dict[str, int] | None = None, term_of: dict[str, int] | None = None
    ) -> _State:
        """Compute every posting's BM25 weight from the raw index, in one numpy pass."""
        n_docs, df = len(raw.ids), np.diff(raw.indptr)
        total = int(raw.doc_len.sum())
        # Documents without terms have no postings to score; 1.0 only avoids 0 / 0 then.
        avgdl = total / n_docs if total > 0 else 1.0
        idf = np.repeat(IDF[self.idf](n_docs, df), df)
        scores = term_score(idf, raw.tfs, raw.doc_len[raw.docs], avgdl, self.k1, self.b)
        if row_of is None:
            row_of = {doc_id: row for row, doc_id in enumerate(raw.ids)}
        if term_of is None:
            term_of = {term: t for t, term in enumerate(raw.vocab)}
        return _State(raw, scores, row_of, term_of)

    def _search(self, state: _State, query: str, k: int) -> list[tuple[str, float]]:
        raw = state.raw
        term_ids = [state.term_of[t] for t in self.analyzer.terms(query) if t in state.term_of]
        if not term_ids:
            return []
        spans = [(raw.indptr[t], raw.indptr[t + 1]) for t in term_ids]
        # bincount adds up each document's weights in array order, that is one occurrence at a
        # time in query order starting from 0.0: FTS5's sum, bit for bit. (It replaced a loop of
        # ``total[docs] += scores`` and a separate match mask, three numpy calls per term.)
        total = cast(
            FloatArray,  # with weights, bincount gives float64; its stub says integers
            np.bincount(
                np.concatenate([raw.docs[lo:hi] for lo, hi in spans]),
                weights=np.concatenate([state.scores[lo:hi] for lo, hi in spans]),
                minlength=len(raw.ids),
            ),
        )
        rows = top_rows(total, k)
        # Every posting weight is positive (idf > 0 under both idf choices, tf >= 1), so a
        # document holds a query term exactly when its total is above zero.
        rows = rows[total[rows] > 0]
        pairs = [(raw.ids[r], s) for r, s in zip(rows.tolist(), total[rows].tolist(), strict=True)]
        pairs.sort(key=lambda pair: (-pair[1], pair[0]))
        return pairs[:k]


class _Numbering(dict[str, int]):
    """A vocabulary that numbers a term the first time it is looked up: 0, 1, 2, ... in order seen."""

    def __missing__(self, term: str) -> int:
        number = self[term] = len(self)
        return number


def _term_ids(analyzer: Analyzer, texts: Sequence[str], numbering: _Numbering) -> tuple[IntArray, IntArray]:
    """Every token of ``texts`` as a term number, in text order, and the token count of each text.

    The tokens of one text become an integer array straight away: the first version kept a
    ``Counter`` of strings per text and counted term frequencies in Python, which at 100k
    passages took twice as long and held every text's terms as strings at once.
    """
    per_text = [_numbers(numbering, analyzer.terms(text)) for text in texts]
    lengths = np.fromiter(map(len, per_text), dtype=np.int64, count=len(per_text))
    return np.concatenate(per_text) if per_text else np.zeros(0, dtype=np.int64), lengths


def _numbers(numbering: _Numbering, terms: list[str]) -> IntArray:
    return np.fromiter(map(numbering.__getitem__, terms), dtype=np.int64, count=len(terms))


def _merge(
    raw: _Postings, terms: IntArray, docs: IntArray, tfs: IntArray, n_terms: int
) -> tuple[IntArray, IntArray, IntArray]:
    """indptr, docs and tfs of ``raw``'s postings and the new ones, sorted by (term, document)."""
    if raw.docs.size:
        # Both sets are sorted by (term, document) and every new document comes after every old
        # one, so a stable sort by term merges them; timsort merges the two runs.
        terms = np.concatenate([_term_of_postings(raw), terms])
        order = np.argsort(terms, kind="stable")
        docs, tfs = np.concatenate([raw.docs, docs])[order], np.concatenate([raw.tfs, tfs])[order]
    return _indptr(np.bincount(terms, minlength=n_terms)), docs, tfs


def _postings(term_ids: IntArray, lengths: IntArray, first_row: int) -> tuple[IntArray, IntArray, IntArray]:
    """(term, document, tf) of each distinct term in each text, sorted by term and then document.

    Each token becomes one integer key ``term * n_texts + text``; sorting the keys groups equal
    (term, text) pairs into runs, whose lengths are the term frequencies.
    """
    n_texts = lengths.size
    keys = term_ids * n_texts
    keys += np.repeat(np.arange(n_texts, dtype=np.int64), lengths)
    keys.sort()  # in place: at 100k passages each copy of the keys is 60 MB
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]])) if keys.size else keys
    tfs = np.diff(np.append(starts, keys.size))
    distinct = keys[starts]
    return distinct // n_texts, distinct % n_texts + first_row, tfs


def _indptr(df: IntArray) -> IntArray:
    return np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(df, dtype=np.int64)])


def _term_of_postings(raw: _Postings) -> IntArray:
    return np.repeat(np.arange(len(raw.vocab), dtype=np.int64), np.diff(raw.indptr))


def _without(raw: _Postings, rows: list[int]) -> _Postings:
    """``raw`` minus the documents at ``rows``, and minus the terms only they contained."""
    keep_doc = np.ones(len(raw.ids), dtype=bool)
    keep_doc[rows] = False
    kept = keep_doc[raw.docs]
    df = np.bincount(_term_of_postings(raw)[kept], minlength=len(raw.vocab))
    keep_term = df > 0
    # Postings stay sorted by term and then document: both renumberings keep the order.
    return _Postings(
        tuple(i for i, keep in zip(raw.ids, keep_doc.tolist(), strict=True) if keep),
        tuple(t for t, keep in zip(raw.vocab, keep_term.tolist(), strict=True) if keep),
        _indptr(df[keep_term]),
        (np.cumsum(keep_doc) - 1)[raw.docs[kept]],
        raw.tfs[kept],
        raw.doc_len[keep_doc],
    )


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k={k!r} is invalid; ask for a positive number of results")


def _check_consistent(raw: _Postings) -> None:
    """Raise ValueError unless the saved arrays describe one well-formed inverted index."""
    ids, vocab, indptr, docs, tfs, doc_len = raw
    if (
        not all(isinstance(x, str) for x in ids + vocab)
        or len({*ids}) != len(ids)
        or len({*vocab}) != len(vocab)
    ):
        raise ValueError("ids and terms must be distinct strings")
    if indptr.shape != (len(vocab) + 1,) or indptr[0] != 0 or indptr[-1] != docs.size:
        raise ValueError("indptr does not fit the terms and postings")
    if docs.shape != tfs.shape or doc_len.shape != (len(ids),):
        raise ValueError("array lengths disagree")
    if (np.diff(indptr) < 1).any() or (docs < 0).any() or (docs >= len(ids)).any() or (tfs < 1).any():
        raise ValueError("postings out of range")
    if not np.array_equal(np.bincount(docs, weights=tfs, minlength=len(ids)), doc_len):
        raise ValueError("document lengths disagree with the postings")
