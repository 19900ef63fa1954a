"""Weights computed a term at a time, at the term's first query (clear_rag.index.weights): a load or an
update weighs nothing; whatever order terms are weighed in, one at a time or in batches, by one thread
or several at once, on the compiled path or numpy's, every weight is the double the whole-index pass
computes and every list the one the built index gives."""

from __future__ import annotations

import mmap
import random
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index import ranking, weights
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.scoring import IDF, FloatArray, length_norm, term_score
from clear_rag.index.weights import TermWeights

WORDS = [f"w{rank}" for rank in range(30)]
ZIPF = [1 / (rank + 1) for rank in range(len(WORDS))]
# Skewed, as text is: a few words in most texts (dense rows, pruning), many in few; empty texts too.
text = st.lists(st.sampled_from(WORDS[:4]) | st.sampled_from(WORDS), max_size=12).map(" ".join)
query = st.lists(st.sampled_from([*WORDS, "unknown"]), max_size=6).map(" ".join)


def indexed(texts: list[str], **params: Any) -> BM25Index:
    index = BM25Index(**params)
    index.add([f"d{(n * 7919) % 1000:03}-{n}" for n in range(len(texts))], texts)  # ids not in row order
    return index


def zipf_texts(seed: int, count: int, longest: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, ZIPF, k=rng.randint(0, longest))) for _ in range(count)]


def one_pass(index: BM25Index) -> FloatArray:
    """Every posting's weight as the predecessor computed them at each load: one vectorised pass."""
    raw = index._state.raw
    n_docs, df = len(raw.ids), np.diff(raw.indptr)
    total = int(raw.doc_len.sum())
    norm = length_norm(raw.doc_len, total / n_docs if total else 1.0, index.k1, index.b)
    return term_score(np.repeat(IDF[index.idf](n_docs, df), df), raw.tfs, norm, raw.docs, index.k1)


def assert_weighed_as_one_pass(index: BM25Index) -> None:
    """The weights, bounds and dense rows of every term weighed so far are the one pass's, bit for bit;
    the dense rows of the others are still zeros."""
    state = index._state
    ready, arrays, expected = state.weights.ready, state.weighted, one_pass(index)
    df = np.diff(arrays.indptr)
    at = np.repeat(ready, df)
    assert arrays.weights[at].tobytes() == expected[at].tobytes()
    if df.size:
        assert np.array_equal(arrays.bounds[ready], np.maximum.reduceat(expected, arrays.indptr[:-1])[ready])
    for term in np.flatnonzero(arrays.dense_row >= 0).tolist():
        row = np.zeros(len(index))
        if ready[term]:
            span = slice(arrays.indptr[term], arrays.indptr[term + 1])
            row[arrays.docs[span]] = expected[span]
        assert arrays.dense[arrays.dense_row[term]].tobytes() == row.tobytes()
    assert weighed_words(index) == {index.vocabulary[t]: t for t in np.flatnonzero(ready).tolist()}
    unknown = [w for w, t in state.weights.words.items() if t is None]
    assert not set(unknown) & set(index.vocabulary)


def weighed_words(index: BM25Index) -> dict[str, int]:
    """The words ``search`` finds weighed (the others it maps to None: outside the vocabulary)."""
    return {w: t for w, t in index._state.weights.words.items() if t is not None}


def nothing_weighed(index: BM25Index) -> bool:
    return not index._state.weights.ready.any() and not index._state.weights.words


def test_a_load_an_update_and_other_settings_weigh_nothing(tmp_path: Path) -> None:
    index = indexed(zipf_texts(1, 200, 20))
    assert nothing_weighed(index)
    index.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    assert nothing_weighed(loaded)
    loaded.search("w0 w3 w3", 5)
    assert sorted(weighed_words(loaded)) == ["w0", "w3"]  # what the question named, no more
    loaded.add(["late"], ["w7 w1"])
    assert nothing_weighed(loaded)  # a new version: N, avgdl and df moved
    loaded.search("w7", 5)
    loaded.remove(["late"])
    assert nothing_weighed(loaded)
    assert nothing_weighed(loaded.with_params(k1=0.9))
    loaded.search("w2", 5)
    assert loaded.with_params()._state.weights is loaded._state.weights  # the same settings: shared


def test_weigh_weighs_every_term_as_one_pass_and_searches_answer_alike() -> None:
    lazy, eager = indexed(zipf_texts(3, 150, 25)), indexed(zipf_texts(3, 150, 25))
    eager.weigh()
    assert eager._state.weights.ready.all()
    assert_weighed_as_one_pass(eager)
    for question in ("w0 w1", "w5 w5 w29 unknown", "", "w12 w3 w3 w9"):
        assert eager.search(question, 7) == lazy.search(question, 7)
    assert eager.search_many(["w2 w8", "w0"], 4) == lazy.search_many(["w2 w8", "w0"], 4)


@settings(max_examples=120, deadline=None)
@given(
    texts=st.lists(text, min_size=1, max_size=40),
    asked=st.lists(st.tuples(st.booleans(), st.lists(query, min_size=1, max_size=4)), min_size=1, max_size=6),
    per_pass=st.sampled_from([1, 2, 3, 7, weights.WEIGH_PER_PASS]),
    idf=st.sampled_from(["lucene", "fts5"]),
    k=st.integers(1, 45),
)
def test_a_loaded_index_answers_as_the_built_one_whatever_order_its_terms_are_weighed_in(
    tmp_path_factory: pytest.TempPathFactory,
    texts: list[str],
    asked: list[tuple[bool, list[str]]],
    per_pass: int,
    idf: str,
    k: int,
) -> None:
    """Questions one at a time and in batches, in any order, weigh the terms they name in that order
    and in those groups; passes of a few postings split long terms and join short ones."""
    built = indexed(texts, idf=idf)
    built.weigh()  # every weight, as before
    folder = tmp_path_factory.mktemp("bm25")
    built.save(folder)
    loaded = BM25Index.load(folder)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(weights, "WEIGH_PER_PASS", per_pass)
        for batched, queries in asked:
            if batched:
                assert loaded.search_many(queries, k) == built.search_many(queries, k)
            else:
                assert [loaded.search(q, k) for q in queries] == [built.search(q, k) for q in queries]
            assert_weighed_as_one_pass(loaded)
    assert_weighed_as_one_pass(built)


def test_the_numpy_path_weighs_the_terms_it_is_asked_for(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Where numba is absent, or its kernels are not ready yet, numpy answers: from weighed terms too."""
    built = indexed(zipf_texts(2, 300, 25))
    queries = ["w0 w5", "w1 w1 w9", "w29 unknown", "w3"]
    expected = [built.search(q, 7) for q in queries]
    built.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    monkeypatch.setattr(ranking, "_kernels", lambda: None)
    assert [loaded.search(q, 7) for q in queries] == expected
    assert sorted(weighed_words(loaded)) == sorted({"w0", "w5", "w1", "w9", "w29", "w3"})
    assert loaded._state.weights.words["unknown"] is None
    assert_weighed_as_one_pass(loaded)
    again = BM25Index.load(tmp_path)
    assert again.search_many(queries, 7) == expected
    assert_weighed_as_one_pass(again)


@pytest.mark.usefixtures("compiled_kernels")  # the compiled kernels run without the GIL: the case to test
def test_threads_weighing_the_same_terms_at_once_agree(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Eight threads ask a fresh load the same questions at once, each in an order of its own: every
    list is the built index's, and each term is weighed once, by whichever thread came first."""
    built = indexed(zipf_texts(3, 3000, 60))
    rng = random.Random(4)
    queries = [" ".join(rng.choices([*WORDS, "unknown"], k=rng.randint(1, 6))) for _ in range(150)]
    expected = built.search_many(queries, 10)
    built.save(tmp_path)
    loaded = BM25Index.load(tmp_path)
    weighed: list[int] = []
    weigh = TermWeights._weigh

    def counted(self: TermWeights, term: Any, first: Any, last: Any) -> None:
        weighed.extend(np.unique(term).tolist())
        weigh(self, term, first, last)

    monkeypatch.setattr(TermWeights, "_weigh", counted)
    threads = 8
    start = threading.Barrier(threads)
    wrong: list[str] = []
    errors: list[BaseException] = []

    def ask(worker: int) -> None:
        order = random.Random(worker).sample(range(len(queries)), len(queries))
        try:
            start.wait()
            for n in order:
                if worker % 2:  # half the threads through the batched call, half one query at a time
                    found = loaded.search_many([queries[n]], 10)[0]
                else:
                    found = loaded.search(queries[n], 10)
                if found != expected[n]:
                    wrong.append(queries[n])
        except BaseException as err:  # reported below, not lost in the thread
            errors.append(err)

    workers = [threading.Thread(target=ask, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors and not wrong
    assert sorted(weighed) == sorted(set(weighed))  # no term weighed twice
    assert len(weighed) == len(weighed_words(loaded))
    assert_weighed_as_one_pass(loaded)


def test_a_loaded_index_reads_its_document_rows_from_the_file(tmp_path: Path) -> None:
    """From 65,536 documents the file holds the rows as uint32: the kernels read the map itself (as
    int32, read-only), not a copy; a smaller index's narrower rows are copied."""
    big = BM25Index()
    big.add([f"p{n:05d}" for n in range(70_000)], [f"w{n % 3}" for n in range(70_000)])
    big.save(tmp_path / "big")
    loaded = BM25Index.load(tmp_path / "big")
    docs = loaded._state.weighted.docs
    assert docs.dtype == np.int32 and not docs.flags.writeable
    base = docs
    while isinstance(base, np.ndarray) and base.base is not None:
        base = base.base
    assert isinstance(base, mmap.mmap)
    assert loaded.search("w1 w2", 3) == big.search("w1 w2", 3)
    small = indexed(["w0 w1", "w1"])
    small.save(tmp_path / "small")
    rows = BM25Index.load(tmp_path / "small")._state.weighted.docs
    assert rows.dtype == np.int32 and not rows.flags.writeable


def test_the_kernels_get_a_read_only_view_of_the_rows_and_the_postings_stay_as_built() -> None:
    index = indexed(["w0 w1", "w1"])
    raw_docs = index._state.raw.docs
    assert raw_docs.flags.writeable and not index._state.weighted.docs.flags.writeable
    assert np.shares_memory(raw_docs, index._state.weighted.docs)


@given(st.lists(st.integers(0, 50), max_size=30))
def test_the_terms_to_weigh_are_each_named_once_in_order(terms: list[int]) -> None:
    assert weights._distinct(np.array(terms, dtype=np.int64)).tolist() == sorted(set(terms))


def test_words_outside_the_vocabulary_are_remembered_up_to_a_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """A query naming them again takes the quick path; a server asked any words at all stays bounded."""
    index = indexed(zipf_texts(5, 100, 20))
    monkeypatch.setattr(weights, "UNKNOWN_WORDS", 3)
    for n in range(10):
        assert index.search(f"w1 nowhere{n}", 4) == index.search_many([f"w1 nowhere{n}"], 4)[0]
    unknown = [w for w, t in index._state.weights.words.items() if t is None]
    assert unknown == ["nowhere0", "nowhere1", "nowhere2"]
    assert weighed_words(index) == {"w1": index.vocabulary.index("w1")}
