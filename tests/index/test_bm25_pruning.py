"""The pruned search (clear_rag.index.kernels, numba) against exhaustive scoring (numpy), list for list.

Both add a document's weights in the same order, so the lists must be equal bit for bit: the same
ids in the same order, the same doubles. The corpora are skewed, as text is, so that some terms are
in most documents and pruning has lists to skip; repeated texts give exact ties for the id rule.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index import ranking
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.scoring import summation_order
from clear_rag.index.weights import DENSE_SHARE
from tests.index.zipf import WORDS, ZIPF, indexed, texts

kernels = pytest.importorskip("clear_rag.index.kernels", reason="the pruned search needs numba")
# Searches take the pruned path only once the compiled kernels are ready; wait, or the lists compared
# would both come from numpy.
pytestmark = pytest.mark.usefixtures("compiled_kernels")


def exhaustive(index: BM25Index, queries: list[str], k: int) -> list[list[tuple[str, float]]]:
    """``search_many`` as it runs where numba is not installed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "_kernels", lambda: None)
        return index.search_many(queries, k)


def zipf_texts(rng: random.Random, count: int, longest: int) -> list[str]:
    return [" ".join(rng.choices(WORDS, ZIPF, k=rng.randint(0, longest))) for _ in range(count)]


query = st.lists(st.sampled_from([*WORDS, "unknown"]), max_size=8).map(" ".join)


def test_summation_order_is_by_bound_then_by_first_named() -> None:
    bounds = np.array([1.0, 2.0, 0.5, 3.0])
    # count * bound: term 0 twice, 2.0; term 1 once, 2.0; term 2, 0.5; term 3 unnamed
    terms, counts = summation_order(np.array([2, 0, 0, 1]), bounds)
    assert terms.tolist() == [0, 1, 2] and counts.tolist() == [2, 1, 1]
    terms, _ = summation_order(np.array([1, 2, 0, 0]), bounds)
    assert terms.tolist() == [1, 0, 2]  # the tie now goes to term 1, named first


@settings(max_examples=300, deadline=None)
@given(
    corpus=st.lists(texts, min_size=1, max_size=60),
    copies=st.integers(0, 3),
    queries=st.lists(query, min_size=1, max_size=6),
    k=st.integers(1, 70),
    idf=st.sampled_from(["lucene", "fts5"]),
)
def test_pruned_search_is_exhaustive_search_bit_for_bit(
    corpus: list[str], copies: int, queries: list[str], k: int, idf: str
) -> None:
    index = indexed(corpus, copies, idf)
    assert index.search_many(queries, k) == exhaustive(index, queries, k)


def test_pruning_skips_postings_and_keeps_the_top_k() -> None:
    rng = random.Random(5)
    words = [f"v{rank}" for rank in range(3000)]  # the synthetic corpus of bench/retrieval.py, small
    weights = [1 / (rank + 1) for rank in range(len(words))]
    index = BM25Index()
    index.add(
        [f"p{n}" for n in range(3000)],
        [" ".join(rng.choices(words, weights, k=rng.randint(30, 120))) for _ in range(3000)],
    )
    queries = [" ".join(rng.choices(words, weights, k=rng.randint(2, 6))) for _ in range(200)]
    state = index._state
    term_ids, query_ptr = index._term_ids(state, queries)
    state.weights.fill(term_ids)  # as search_many does before it calls the kernel
    _, _, _, read = kernels.top_k(term_ids, query_ptr, *state.weighted[1:], 10)
    postings = np.diff(state.raw.indptr)[term_ids].sum()
    assert read.sum() < postings / 2  # the common words' lists are mostly skipped
    assert index.search_many(queries, 10) == exhaustive(index, queries, 10)


def test_ties_at_the_k_boundary_go_to_the_smaller_ids_also_when_pruning() -> None:
    index = BM25Index()
    same = ["w1 w2 w3"] * 40
    ids = [f"{n * 37 % 40:02}" for n in range(40)]  # a shuffle of 00..39
    index.add([*ids, "x", "y"], [*same, "w1 w0", "w0 w0 w0 w0"])
    found = index.search_many(["w1 w2 w3", "w3", "w1 w0"], 5)
    assert [i for i, _ in found[0]] == ["00", "01", "02", "03", "04"]
    assert [i for i, _ in found[1]] == ["00", "01", "02", "03", "04"]
    assert found == exhaustive(index, ["w1 w2 w3", "w3", "w1 w0"], 5)


def test_a_long_query_and_repeated_terms_sum_as_the_exhaustive_path() -> None:
    rng = random.Random(11)
    index = BM25Index(idf="fts5")
    index.add([f"p{n}" for n in range(400)], zipf_texts(rng, 400, 40))
    long_query = " ".join(rng.choices([*WORDS, "nowhere"], k=300))  # > 64 distinct-term slots
    queries = [long_query, "w0 w0 w0 w5", "w5 w0 w0 w0", "w39 w39"]
    for k in (1, 10, 400, 1000):
        assert index.search_many(queries, k) == exhaustive(index, queries, k)
    # The order of the words does not change a score: the sum runs in an order of the terms' own.
    assert index.search("w0 w0 w0 w5", 5) == index.search("w5 w0 w0 w0", 5)


def test_every_k_and_empty_inputs() -> None:
    assert BM25Index().search_many(["w0", ""], 3) == [[], []]
    index = BM25Index()
    index.add(["a", "b", "c"], ["w0 w1", "", "w1"])
    assert index.search_many(["", "unknown", "w2"], 3) == [[], [], []]
    for k in (1, 2, 3, 4, 10**9):
        assert index.search_many(["w0 w1", "w1"], k) == exhaustive(index, ["w0 w1", "w1"], k)


def test_queries_go_to_the_kernel_in_slices_when_k_is_large(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(3)
    index = BM25Index()
    index.add([f"p{n}" for n in range(50)], zipf_texts(rng, 50, 20))
    queries = [" ".join(rng.choices(WORDS, k=3)) for _ in range(7)]
    whole = index.search_many(queries, 50)
    monkeypatch.setattr(ranking, "RESULTS_PER_CALL", 100)  # two queries a call at k = 50
    assert index.search_many(queries, 50) == whole == [index.search(q, 50) for q in queries]


operations = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.dictionaries(st.sampled_from("abcdefghijkl"), texts, max_size=6)),
        st.tuples(st.just("remove"), st.lists(st.sampled_from("abcdefghijklz"), max_size=4)),
        st.tuples(st.just("reload"), st.none()),
    ),
    max_size=8,
)


@settings(max_examples=100, deadline=None)
@given(ops=operations, idf=st.sampled_from(["lucene", "fts5"]))
def test_updates_and_reloads_keep_pruned_and_exhaustive_equal(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, object]], idf: str
) -> None:
    index = BM25Index(idf=idf)  # type: ignore[arg-type]
    final: dict[str, str] = {}
    for op, arg in ops:
        if op == "add":
            assert isinstance(arg, dict)
            index.add(list(arg), list(arg.values()))
            final.update(arg)
        elif op == "remove":
            assert isinstance(arg, list)
            index.remove(arg)
            for doc_id in arg:
                final.pop(doc_id, None)
        else:
            folder = tmp_path_factory.mktemp("bm25")
            index.save(folder)
            index = BM25Index.load(folder)
    scratch = BM25Index(idf=idf)  # type: ignore[arg-type]
    scratch.add(list(final), list(final.values()))
    queries = ["w0 w1", "w2 w0 w0", "w30 w1", "w11 w3 w0 w7"]
    for k in (1, 3, 20):
        found = index.search_many(queries, k)
        assert found == exhaustive(index, queries, k) == scratch.search_many(queries, k)


@settings(max_examples=300, deadline=None)
@given(
    docs=st.lists(st.integers(0, 500), unique=True, min_size=1, max_size=120).map(sorted),
    doc=st.integers(-2, 502),
)
def test_locate_finds_a_document_in_a_list_exactly_when_it_is_there(docs: list[int], doc: int) -> None:
    padded = np.array([-9, *docs, 999], dtype=np.int64)  # the list is a slice of a longer array
    position = kernels._locate(padded, 1, len(docs) + 1, doc)
    assert position == (docs.index(doc) + 1 if doc in docs else -1)


def test_dense_rows_hold_the_weights_of_the_common_terms() -> None:
    index = BM25Index()
    index.add([f"p{n}" for n in range(8)], ["w0 w1", "w0", "w0 w2", "w0", "w1", "w3", "", "w0 w0"])
    state = index._state
    state.weights.fill(np.arange(len(index.vocabulary)))
    row_of_term, rows = state.weighted.dense_row, state.weighted.dense
    df = np.diff(state.raw.indptr)
    assert np.array_equal(row_of_term >= 0, df * DENSE_SHARE >= 8)  # w0 (5 of 8), w1 (2 of 8)
    for term in np.flatnonzero(row_of_term >= 0).tolist():
        span = slice(state.raw.indptr[term], state.raw.indptr[term + 1])
        expected = np.zeros(8)
        expected[state.raw.docs[span]] = state.weighted.weights[span]
        assert np.array_equal(rows[row_of_term[term]], expected)


@pytest.fixture(scope="module")
def large_k_corpus() -> BM25Index:
    rng = random.Random(8)
    index = BM25Index()
    index.add([f"p{n}" for n in range(600)], zipf_texts(rng, 600, 30))
    return index


@pytest.mark.parametrize("k", [1, 5, 64, 599, 600])
def test_top_k_at_every_size_matches(large_k_corpus: BM25Index, k: int) -> None:
    rng = random.Random(k)
    queries = [" ".join(rng.choices(WORDS, k=rng.randint(1, 7))) for _ in range(40)]
    assert large_k_corpus.search_many(queries, k) == exhaustive(large_k_corpus, queries, k)


def test_the_kernel_rejects_a_k_that_is_not_a_positive_int() -> None:
    index = BM25Index()
    index.add(["a"], ["w0"])
    state = index._state
    term_ids, query_ptr = index._term_ids(state, ["w0"])
    for k in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="k="):
            kernels.top_k(term_ids, query_ptr, *state.weighted[1:], k)


def test_saved_index_files_are_unchanged_by_the_derived_arrays(tmp_path: Path) -> None:
    index = BM25Index()
    index.add(["a", "b"], ["w0 w1", "w0"])
    index.save(tmp_path)
    # no weights, bounds or dense rows; the id order is kept, as sorting the ids again is a Python sort
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        [
            "bm25.json",
            "bm25_indptr.npy",
            "bm25_docs.npy",
            "bm25_tfs.npy",
            "bm25_doc_len.npy",
            "bm25_id_rank.npy",
        ]
    )
