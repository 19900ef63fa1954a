"""One query at a time (``BM25Index.search``, the path ``ask`` and ``serve`` take) against the batched
call and against numpy, list for list, and with several threads searching one index at once.

``search`` has a kernel entry of its own (``kernels.top_one``) that borrows its working memory from
the index (``ranking.Scratches``) instead of allocating it per call, so what is checked here is what
that could break: the same ids, doubles and tie order as ``search_many([query], k)[0]`` and as the
numpy path; the working memory given back as it was lent (zero scores, no candidates), so the next
search starts clean; and no set lent to two searches at once.
"""

from __future__ import annotations

import random
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index import ranking
from clear_rag.index.bm25 import BM25Index
from tests.index.zipf import WORDS, ZIPF, indexed, texts

kernels = pytest.importorskip("clear_rag.index.kernels", reason="the one-query kernel needs numba")
# The kernels answer only once they are ready; before that both sides would come from numpy.
pytestmark = pytest.mark.usefixtures("compiled_kernels")


# Unknown words, repeats (sampling with replacement) and the empty query all occur.
query = st.lists(st.sampled_from([*WORDS, "unknown", "W0", "w0"]), max_size=8).map(" ".join)


def on_numpy(index: BM25Index, query: str, k: int) -> list[tuple[str, float]]:
    """``search`` as it runs where numba is not installed."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(ranking, "_kernels", lambda: None)
        return index.search(query, k)


def zipf_index(seed: int, count: int, longest: int = 30) -> BM25Index:
    rng = random.Random(seed)
    index = BM25Index()
    corpus = [" ".join(rng.choices(WORDS, ZIPF, k=rng.randint(0, longest))) for _ in range(count)]
    index.add([f"d{(n * 7919) % 1000:03}-{n}" for n in range(count)], corpus)  # ids not in row order
    return index


def assert_clean(index: BM25Index) -> None:
    """Every set of working memory the index holds is as a search must find it."""
    for scratch in index._state.scratches._free:
        assert not scratch.score.any() and not scratch.is_candidate.any()


@settings(max_examples=300, deadline=None)
@given(
    corpus=st.lists(texts, min_size=1, max_size=60),
    copies=st.integers(0, 3),
    queries=st.lists(query, min_size=1, max_size=6),
    k=st.integers(1, 70),
    idf=st.sampled_from(["lucene", "fts5"]),
)
def test_one_query_is_the_batched_call_and_numpy_bit_for_bit(
    corpus: list[str], copies: int, queries: list[str], k: int, idf: str
) -> None:
    index = indexed(corpus, copies, idf)
    batched = index.search_many(queries, k)
    for text, expected in zip(queries, batched, strict=True):
        found = index.search(text, k)
        assert found == expected == on_numpy(index, text, k)
        assert all(isinstance(i, str) and isinstance(s, float) for i, s in found)
    assert_clean(index)


def test_ties_empty_queries_and_k_past_the_matches() -> None:
    index = BM25Index()
    ids = [f"{n * 37 % 40:02}" for n in range(40)]  # a shuffle of 00..39, all the same text
    index.add([*ids, "x", "y"], [*["w1 w2 w3"] * 40, "w1 w0", ""])
    assert [i for i, _ in index.search("w1 w2 w3", 5)] == ["00", "01", "02", "03", "04"]
    for text in ("", "unknown", "   ", "w9"):
        assert index.search(text, 3) == [] == index.search_many([text], 3)[0]
    everything = index.search("w0 w1", 10**9)  # k past the 41 matches and the 42 documents
    assert len(everything) == 41 and everything == index.search_many(["w0 w1"], 10**9)[0]
    assert everything[0][0] == "x"  # the only one holding both
    assert BM25Index().search("w0", 3) == []
    assert_clean(index)


def test_the_working_memory_follows_each_version_of_the_index() -> None:
    index = zipf_index(2, 80)
    before = index.search("w0 w3 w7", 10)
    index.add(["late"], ["w7 w7 w7 w3"])  # a new version, with a row more
    assert index.search("w0 w3 w7", 10) == index.search_many(["w0 w3 w7"], 10)[0] != before
    index.remove(["late"])
    assert index.search("w0 w3 w7", 10) == before
    other = index.with_params(k1=0.5, idf="fts5")
    assert other.search("w0 w3 w7", 10) == other.search_many(["w0 w3 w7"], 10)[0]
    assert index._state.scratches is not other._state.scratches
    assert_clean(index)


def test_simultaneous_searches_get_sets_of_their_own() -> None:
    scratches = ranking.Scratches()
    first = scratches.take(kernels, 10)
    second = scratches.take(kernels, 10)  # the first is still lent
    assert first is not second
    assert not np.shares_memory(first.score, second.score)
    scratches.give(first)
    assert scratches.take(kernels, 10) is first  # given back, lent again, not allocated again


def test_threads_searching_one_index_at_once_each_get_their_own_lists() -> None:
    """The kernel releases the GIL, so these searches overlap; any sharing of working memory
    between two of them would mix one query's scores into another's list."""
    index = zipf_index(7, 3000, longest=80)
    rng = random.Random(8)
    queries = [" ".join(rng.choices([*WORDS, "unknown"], k=rng.randint(0, 6))) for _ in range(200)]
    expected = index.search_many(queries, 10)
    threads, rounds = 8, 5
    start = threading.Barrier(threads)
    wrong: list[tuple[int, str]] = []
    errors: list[BaseException] = []

    def search(worker: int) -> None:
        order = random.Random(worker).sample(range(len(queries)), len(queries))
        try:
            start.wait()
            for _ in range(rounds):
                for n in order:
                    if index.search(queries[n], 10) != expected[n]:
                        wrong.append((worker, queries[n]))
        except BaseException as err:  # reported below, not lost in the thread
            errors.append(err)

    workers = [threading.Thread(target=search, args=(n,)) for n in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert not errors and not wrong
    assert 1 <= len(index._state.scratches._free) <= threads  # a set per search at once, at most
    assert_clean(index)
