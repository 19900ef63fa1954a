from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from clear_rag.errors import StoreError
from clear_rag.index.vectors import VectorIndex
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import HashEmbedder
from clear_rag.retrieve.stages import (
    ChunkRef,
    ChunkRows,
    ChunkTable,
    KeywordRetriever,
    Retriever,
    VectorRetriever,
    rank_order,
    run_concurrently,
)
from clear_rag.types import Candidate, Contribution
from tests.retrieve.conftest import TABLE, chunk_text

MakeCandidate = Callable[[str, float], Candidate]


class DictIndex:
    """A keyword index that answers every query with the same hits."""

    def __init__(self, hits: list[tuple[str, float]]) -> None:
        self.hits = hits
        self.calls: list[tuple[str, int]] = []

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        self.calls.append((query, k))
        return self.hits[:k]


class SpyEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=64)
        self.kinds: list[EmbedKind] = []

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        self.kinds.append(kind)
        return super().embed(texts, kind)


def vector_index(embedder: HashEmbedder) -> VectorIndex:
    index = VectorIndex(embedder.dim)
    ids = sorted(TABLE)
    index.add(ids, embedder.embed([chunk_text(i) for i in ids], kind="document"))
    return index


def test_rank_order_sorts_by_score_then_chunk_id(cand: MakeCandidate) -> None:
    ordered = rank_order([cand("tyres#0000", 1.0), cand("chains#0001", 2.0), cand("brakes#0001", 1.0)])
    assert [c.chunk_id for c in ordered] == ["chains#0001", "brakes#0001", "tyres#0000"]
    assert rank_order([]) == []


def test_keyword_retriever_turns_hits_into_ranked_candidates(table: ChunkTable) -> None:
    index = DictIndex([("tyres#0001", 2.5), ("brakes#0000", 4.0), ("chains#0000", 2.5)])
    got = KeywordRetriever(index, table, k=3)("gravel tyres")
    assert index.calls == [("gravel tyres", 3)]
    assert [(c.chunk_id, c.doc_id, c.start, c.end, c.score) for c in got] == [
        ("brakes#0000", "brakes", TABLE["brakes#0000"].start, TABLE["brakes#0000"].end, 4.0),
        ("chains#0000", "chains", TABLE["chains#0000"].start, TABLE["chains#0000"].end, 2.5),
        ("tyres#0001", "tyres", TABLE["tyres#0001"].start, TABLE["tyres#0001"].end, 2.5),
    ]
    assert [c.sources for c in got] == [
        {"keyword": Contribution(rank=1, score=4.0, contribution=4.0)},
        {"keyword": Contribution(rank=2, score=2.5, contribution=2.5)},
        {"keyword": Contribution(rank=3, score=2.5, contribution=2.5)},
    ]


def test_keyword_retriever_on_no_hits(table: ChunkTable) -> None:
    assert KeywordRetriever(DictIndex([]), table, k=5, name="bm25")("") == []


def test_a_hit_missing_from_the_table_is_a_store_error(table: ChunkTable) -> None:
    with pytest.raises(StoreError, match=r"'ghost#0000'.*Re-run ingest"):
        KeywordRetriever(DictIndex([("ghost#0000", 1.0)]), table, k=5)("q")


@pytest.mark.parametrize(("k", "name", "message"), [(0, "keyword", "k=0"), (5, "", "name=''")])
def test_retriever_settings_are_checked(table: ChunkTable, k: int, name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KeywordRetriever(DictIndex([]), table, k=k, name=name)


def test_vector_retriever_embeds_as_a_query_and_ranks_by_cosine(table: ChunkTable) -> None:
    embedder = SpyEmbedder()
    index = vector_index(HashEmbedder(dim=64))
    got = VectorRetriever(index, embedder, table, k=2)("gravel tyres run lower")
    assert embedder.kinds == ["query"]
    assert [c.chunk_id for c in got] == ["tyres#0001", "tyres#0000"]
    cosines = dict(index.search(embedder.embed(["gravel tyres run lower"], kind="query")[0], k=2))
    assert [c.sources["vector"] for c in got] == [
        Contribution(rank=1, score=cosines["tyres#0001"], contribution=cosines["tyres#0001"]),
        Contribution(rank=2, score=cosines["tyres#0000"], contribution=cosines["tyres#0000"]),
    ]


def test_vector_retriever_on_an_empty_index(table: ChunkTable) -> None:
    assert VectorRetriever(VectorIndex(64), HashEmbedder(dim=64), table, k=3)("tyres") == []


def test_vector_retriever_refuses_an_embedder_of_another_dimension(table: ChunkTable) -> None:
    with pytest.raises(ValueError, match=r"64-dimensional.*32-dimensional"):
        VectorRetriever(VectorIndex(32), HashEmbedder(dim=64), table, k=3)


def test_run_concurrently_returns_what_running_one_by_one_returns(table: ChunkTable) -> None:
    embedder = HashEmbedder(dim=64)
    retrievers: list[Retriever] = [
        KeywordRetriever(DictIndex([("chains#0001", 3.0), ("tyres#0000", 1.0)]), table, k=5),
        VectorRetriever(vector_index(embedder), embedder, table, k=4),
    ]
    query = "worn chain wears the cassette"
    results = run_concurrently(retrievers, query)
    assert list(results) == ["keyword", "vector"]
    assert {name: list(r.candidates) for name, r in results.items()} == {r.name: r(query) for r in retrievers}
    assert all(r.name == name and r.elapsed_ms >= 0.0 for name, r in results.items())


def test_run_concurrently_runs_in_parallel(table: ChunkTable) -> None:
    barrier = threading.Barrier(2, timeout=60)  # ready when both run, however loaded the machine

    class Waiting:
        def __init__(self, name: str) -> None:
            self.name = name

        def __call__(self, query: str, *, source: str | None = None) -> list[Candidate]:
            barrier.wait()  # only returns once both retrievers are running at the same time
            return []

    results = run_concurrently([Waiting("a"), Waiting("b")], "q")
    assert {name: r.candidates for name, r in results.items()} == {"a": (), "b": ()}


def test_run_concurrently_on_no_retrievers_and_repeated_names(table: ChunkTable) -> None:
    assert run_concurrently([], "q") == {}
    twice = KeywordRetriever(DictIndex([]), table, k=1)
    with pytest.raises(ValueError, match=r"\['keyword', 'keyword'\] repeat"):
        run_concurrently([twice, twice], "q")


def test_run_concurrently_raises_a_retrievers_error(table: ChunkTable) -> None:
    broken = KeywordRetriever(DictIndex([("ghost#0000", 1.0)]), table, k=1)
    with pytest.raises(StoreError, match="ghost"):
        run_concurrently([broken], "q")


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=6),
        st.tuples(st.text(max_size=4), st.integers(0, 99), st.integers(0, 99), st.none() | st.integers(0, 9)),
        max_size=8,
    ),
    st.text(max_size=6),
)
def test_a_table_over_rows_is_the_table_of_chunk_refs(
    rows: dict[str, tuple[str, int, int, int | None]], other: str
) -> None:
    """``ChunkRows`` (what a pipeline opens with) answers as the dict of ``ChunkRef`` it stands for."""
    table = ChunkRows((cid, *row) for cid, row in rows.items())
    expected = {cid: ChunkRef(*row) for cid, row in rows.items()}
    assert dict(table) == expected and len(table) == len(expected) and list(table) == list(expected)
    assert table.get(other) == expected.get(other) and (other in table) == (other in expected)
    if other not in expected:
        with pytest.raises(KeyError):
            table[other]
