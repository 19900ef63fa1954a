"""The approximate index behind the vector-stage interface, its config key, and the exact int8
pre-pass of ``VectorIndex.search`` against a full float32 pass and numpy in float64."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.index import dense, prepass, vectors
from clear_rag.index.dense import l2_normalise
from clear_rag.index.selection import top_k
from clear_rag.index.vectors import VectorIndex
from clear_rag.retrieve.stages import ChunkRef, VectorRetriever
from tests.conftest import toy_pipeline

needs_faiss = pytest.mark.skipif(importlib.util.find_spec("faiss") is None, reason="the ann extra is absent")


def clustered(n: int, dim: int, seed: int) -> npt.NDArray[np.float64]:
    """``n`` vectors around ``n // 20`` random centres: neighbours in clusters, as real embeddings."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(max(1, n // 20), dim))
    return centres[rng.integers(0, len(centres), n)] + 0.5 * rng.normal(size=(n, dim))


@pytest.fixture
def small() -> tuple[list[str], npt.NDArray[np.float64], VectorIndex]:
    data = clustered(600, 16, seed=3)
    ids = [f"c{i:04d}" for i in np.random.default_rng(4).permutation(600)]
    exact = VectorIndex(16, threads=1)
    exact.add(ids, data)
    return ids, data, exact


def ordered(hits: list[tuple[str, float]]) -> bool:
    return hits == sorted(hits, key=lambda hit: (-hit[1], hit[0]))


# -- the approximate index --------------------------------------------------------------------------


@needs_faiss
@pytest.mark.parametrize(
    "settings_kw",
    [
        {"backend": "hnsw", "m": 32, "ef_construction": 200, "ef_search": 600},
        {"backend": "ivf", "nlist": 8, "nprobe": 8},  # every list read: exhaustive
    ],
)
def test_ann_at_full_effort_returns_the_exact_top_k_in_rank_order(
    small: tuple[list[str], npt.NDArray[np.float64], VectorIndex], settings_kw: dict[str, object]
) -> None:
    from clear_rag.index.ann import AnnIndex, AnnSettings

    ids, _, exact = small
    ann = AnnIndex.from_exact(exact, AnnSettings(**settings_kw))  # type: ignore[arg-type]
    assert len(ann) == len(ids)
    for query in np.random.default_rng(5).normal(size=(20, 16)):
        got, want = ann.search(query, 10), exact.search(query, 10)
        assert ordered(got)
        assert [i for i, _ in got] == [i for i, _ in want]
        np.testing.assert_allclose([s for _, s in got], [s for _, s in want], atol=1e-5)


@needs_faiss
def test_ann_search_many_equals_search_and_empty_cases_give_nothing(
    small: tuple[list[str], npt.NDArray[np.float64], VectorIndex],
) -> None:
    from clear_rag.index.ann import AnnIndex

    _, _, exact = small
    ann = AnnIndex.from_exact(exact)
    queries = np.random.default_rng(6).normal(size=(4, 16))
    queries[1] = 0.0
    many = ann.search_many(queries, 5)
    assert many[1] == []
    assert many == [ann.search(q, 5) for q in queries]
    empty = AnnIndex(16)
    empty.build([], np.zeros((0, 16)))
    assert empty.search(np.ones(16), 3) == []
    with pytest.raises(ValueError, match="k=0"):
        ann.search(np.ones(16), 0)
    with pytest.raises(ValueError, match="does not fit"):
        ann.search(np.ones(5), 3)


class QueryTable:
    """An embedder that knows a few query texts' vectors: the stage's interface, no model."""

    name = "query-table"

    def __init__(self, rows: dict[str, npt.NDArray[np.float64]]) -> None:
        self.rows, self.dim = rows, len(next(iter(rows.values())))

    def embed(self, texts: Sequence[str], kind: str) -> npt.NDArray[np.float32]:
        return np.array([self.rows[t] for t in texts], dtype=np.float32)


@needs_faiss
def test_the_vector_stage_takes_either_index_alike(
    small: tuple[list[str], npt.NDArray[np.float64], VectorIndex],
) -> None:
    from clear_rag.index.ann import AnnIndex, AnnSettings

    ids, _, exact = small
    ann = AnnIndex.from_exact(exact, AnnSettings("hnsw", ef_search=600))
    rng = np.random.default_rng(8)
    embedder = QueryTable({f"q{i}": rng.normal(size=16) for i in range(5)})
    table = {cid: ChunkRef(cid, 0, 1) for cid in ids}
    for text in embedder.rows:
        by_exact = VectorRetriever(exact, embedder, table, k=8)(text)  # type: ignore[arg-type]
        by_ann = VectorRetriever(ann, embedder, table, k=8)(text)  # type: ignore[arg-type]
        assert [c.chunk_id for c in by_ann] == [c.chunk_id for c in by_exact]
        assert [c.sources["vector"].rank for c in by_ann] == list(range(1, 9))


@needs_faiss
def test_a_config_naming_hnsw_opens_a_pipeline_on_the_approximate_index(toy_store: object) -> None:
    from clear_rag.index.ann import AnnIndex

    exact = toy_pipeline(toy_store)  # type: ignore[arg-type]
    approximate = toy_pipeline(toy_store, vector_index="hnsw")  # type: ignore[arg-type]
    assert isinstance(approximate._retrievers[1].index, AnnIndex)  # type: ignore[attr-defined]
    question = "How often should the chain be replaced?"
    ranked = [c.chunk_id for c in approximate.retrieve(question).ranked]
    assert ranked == [c.chunk_id for c in exact.retrieve(question).ranked]  # a toy store: HNSW is exact


# -- the config key ---------------------------------------------------------------------------------


def test_vector_index_defaults_to_exact_and_leaves_the_hash_alone() -> None:
    assert PipelineConfig().vector_index == "exact"
    assert PipelineConfig(vector_index="exact").hash() == PipelineConfig().hash()
    assert PipelineConfig(vector_index="hnsw").hash() != PipelineConfig().hash()


@pytest.mark.parametrize("bad", ["annoy", "HNSW", 3, None])
def test_an_unknown_vector_index_is_a_config_error_naming_key_and_choices(bad: object) -> None:
    with pytest.raises(ConfigError, match=r"vector_index.*\['exact', 'hnsw', 'ivf'\]"):
        PipelineConfig.from_mapping({"vector_index": bad})


def test_without_faiss_the_error_names_the_ann_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from clear_rag.index.ann import AnnIndex, settings_for

    monkeypatch.setitem(sys.modules, "faiss", None)  # import faiss now raises ImportError
    with pytest.raises(ConfigError, match=r"vector_index.*clear-rag\[ann\]"):
        AnnIndex(8)
    with pytest.raises(ConfigError, match=r"vector_index='exact'.*exact, or one of hnsw, ivf"):
        settings_for("exact")


# -- the exact int8 pre-pass ------------------------------------------------------------------------


def full_pass(index: VectorIndex, query: npt.ArrayLike, k: int) -> list[tuple[str, float]]:
    """The pre-pass's reference: every row scored by the same float32 loop, then the top k."""
    scores = prepass.exact_scores(index.matrix, l2_normalise(np.asarray(query, dtype=np.float64)))
    return top_k(scores, list(index.ids), k)


def check_against_float64(
    got: list[tuple[str, float]],
    ids: list[str],
    data: npt.NDArray[np.float64],
    query: npt.NDArray[np.float64],
) -> None:
    """``got`` is a top k of the real cosines: each score within float32 rounding of numpy's float64
    cosine, ranked by score then id, and no row left out scores clearly above the last one kept."""
    unit = data / np.linalg.norm(data, axis=1, keepdims=True)
    cosine = dict(zip(ids, (unit @ (query / np.linalg.norm(query))).tolist(), strict=True))
    assert ordered(got)
    for chunk_id, score in got:
        assert score == pytest.approx(cosine[chunk_id], abs=1e-5)
    kept = {i for i, _ in got}
    worst = min(cosine[i] for i in kept)
    assert all(cosine[i] <= worst + 2e-5 for i in ids if i not in kept)


values = st.sampled_from([-1.0, -0.5, 0.0, 0.25, 0.5, 1.0])  # small dyadic values: real ties


@pytest.mark.usefixtures("compiled_kernels")  # searches take the pre-pass once it is ready
@settings(max_examples=80, deadline=None)
@given(
    rows=st.integers(1, 120),
    dim=st.integers(1, 24),
    k=st.integers(1, 15),
    seed=st.integers(0, 2**32 - 1),
    tied=st.booleans(),
    data=st.data(),
)
def test_the_pre_pass_gives_the_full_pass_list_bit_for_bit(
    rows: int, dim: int, k: int, seed: int, tied: bool, data: st.DataObject
) -> None:
    rng = np.random.default_rng(seed)
    if tied:  # rows and queries of a few dyadic values: many exact ties, broken by id
        matrix = np.array(
            data.draw(st.lists(st.lists(values, min_size=dim, max_size=dim), min_size=rows, max_size=rows))
        )
        matrix[~matrix.any(axis=1), 0] = 1.0
        query = np.array(data.draw(st.lists(values, min_size=dim, max_size=dim)))
    else:  # clustered rows, some repeated, at scales from tiny to large
        matrix = clustered(rows, dim, seed) * rng.choice([1e-6, 1.0, 1e6], size=(rows, 1))
        matrix[rng.integers(0, rows, rows // 4)] = matrix[0]
        query = rng.normal(size=dim)
    if not query.any():
        query[0] = 1.0
    ids = [f"d{i:03d}" for i in rng.permutation(rows)]
    index = VectorIndex(dim, threads=1)
    index.add(ids, matrix)
    lo = np.empty(rows, dtype=np.float32)
    hi = np.empty(rows, dtype=np.float32)
    q = l2_normalise(query)
    quantised = prepass.quantise(index.matrix)
    prepass.bounds(quantised, q, lo, hi)
    exact = prepass.exact_scores(index.matrix, q)
    assert np.all(lo <= exact) and np.all(exact <= hi)  # the bound holds row by row
    got = index._search_prepass(q, k)
    assert got == full_pass(index, query, k)  # ids and scores, bit for bit
    check_against_float64(got or [], ids, matrix, query)


@pytest.mark.parametrize("block", [1, 7, 64, None])
def test_the_int8_copy_is_the_same_whatever_rows_a_block_takes(block: int | None) -> None:
    matrix = l2_normalise(clustered(300, 48, seed=5)).astype(np.float32)
    whole = prepass.quantise(matrix, block=300)
    got = prepass.quantise(matrix, block=block)
    for field in ("codes", "scale", "bound"):
        assert np.array_equal(getattr(got, field), getattr(whole, field)), field


def test_a_block_of_no_rows_is_refused() -> None:
    with pytest.raises(ValueError, match="block=0"):
        prepass.quantise(np.ones((2, 3), dtype=np.float32), block=0)


@pytest.mark.usefixtures("compiled_kernels")  # searches take the pre-pass once it is ready
def test_search_takes_the_pre_pass_from_prepass_min_and_agrees_with_brute_force() -> None:
    # MiniLM's 384 dimensions: the compiled loops' vector width and remainder as in production
    data = clustered(5000, 384, seed=11)
    ids = [f"v{i:05d}" for i in range(5000)]
    index = VectorIndex(384, threads=1)
    index.add(ids, data)
    assert len(index) >= vectors.PREPASS_MIN
    for query in np.random.default_rng(12).normal(size=(10, 384)):
        got = index.search(query, 10)
        assert index._quantised is not None
        assert got == full_pass(index, query, 10)
        check_against_float64(got, ids, data, query)
    # adding or removing drops the int8 copy, and the next search sees the change
    index.add(["new"], -data[:1])
    assert index._quantised is None
    assert index.search(-data[0], 1)[0][0] == "new"
    index.remove(["new"])
    assert "new" not in {i for i, _ in index.search(-data[0], 10)}


@pytest.mark.usefixtures("compiled_kernels")  # searches take the pre-pass once it is ready
def test_the_pre_pass_split_across_threads_gives_the_same_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vectors, "PREPASS_MIN", 1)
    monkeypatch.setattr(dense, "PARALLEL_MIN", 1)
    data = clustered(1001, 16, seed=13)
    ids = [f"r{i:04d}" for i in range(1001)]
    one, three = VectorIndex(16, threads=1), VectorIndex(16, threads=3)
    one.add(ids, data)
    three.add(ids, data)
    for query in np.random.default_rng(14).normal(size=(10, 16)):
        assert three.search(query, 10) == one.search(query, 10) == full_pass(one, query, 10)
