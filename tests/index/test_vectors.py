from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import ConfigError, StoreError
from clear_rag.index import batched, dense, prepass
from clear_rag.index.selection import top_k
from clear_rag.index.vectors import VectorIndex


def brute_force(
    ids: list[str], vectors: npt.NDArray[np.float64], query: npt.NDArray[np.float64], k: int
) -> list[tuple[str, float]]:
    """The reference: cosine of every vector in float64, fully sorted by (-score, id)."""
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    scores = unit @ (query / np.linalg.norm(query))
    order = sorted(range(len(ids)), key=lambda i: (-scores[i], ids[i]))[:k]
    return [(ids[i], float(scores[i])) for i in order]


def assert_same(got: list[tuple[str, float]], expected: list[tuple[str, float]]) -> None:
    assert [i for i, _ in got] == [i for i, _ in expected]
    np.testing.assert_allclose([s for _, s in got], [s for _, s in expected], atol=1e-5)


@pytest.fixture
def random_index() -> tuple[VectorIndex, list[str], npt.NDArray[np.float64]]:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(300, 24))
    ids = [f"doc{i:03d}#0000" for i in rng.permutation(300)]
    index = VectorIndex(24)
    index.add(ids, vectors)
    return index, ids, vectors


@pytest.mark.parametrize("k", [1, 5, 50, 299, 300, 1000])
def test_search_equals_a_brute_force_sort(
    random_index: tuple[VectorIndex, list[str], npt.NDArray[np.float64]], k: int
) -> None:
    index, ids, vectors = random_index
    for query in np.random.default_rng(k).normal(size=(5, 24)):
        assert_same(index.search(query, k), brute_force(ids, vectors, query, k))


def test_ties_at_the_k_boundary_are_cut_by_id() -> None:
    # One-hot vectors and a dyadic query: every cosine is a query component, exact in float32,
    # so the tie groups are real ties however the product is summed.
    basis = np.eye(4)
    picks = [0, 1, 1, 2, 1, 0, 3, 2, 1, 0]
    ids = ["j", "c", "h", "a", "e", "b", "i", "d", "g", "f"]
    vectors = basis[picks]
    query = np.array([0.5, 0.25, 0.25, 0.125])
    index = VectorIndex(4)
    index.add(ids, vectors)
    for k in range(1, len(ids) + 1):
        assert_same(index.search(query, k), brute_force(ids, vectors, query, k))
    # Basis 1 and basis 2 score the same (0.25): ids c, h, e, g and a, d form one tie group.
    assert [i for i, _ in index.search(query, 5)] == ["b", "f", "j", "a", "c"]


def test_top_k_takes_tied_winners_in_id_order() -> None:
    scores = np.array([1.0, 1.0, 1.0, 0.5], dtype=np.float32)
    assert top_k(scores, ["c", "a", "b", "d"], 2) == [("a", 1.0), ("b", 1.0)]
    assert top_k(np.array([], dtype=np.float32), [], 3) == []


def test_search_many_equals_search(
    random_index: tuple[VectorIndex, list[str], npt.NDArray[np.float64]],
) -> None:
    index, _, _ = random_index
    queries = np.random.default_rng(3).normal(size=(6, 24))
    queries[2] = 0.0
    many = index.search_many(queries, 10)
    assert len(many) == 6
    for query, got in zip(queries, many, strict=True):
        assert_same(got, index.search(query, 10))
    assert many[2] == []


@settings(max_examples=60, deadline=None)
@given(
    rows=st.integers(0, 80),
    dim=st.integers(1, 16),
    k=st.integers(1, 100),
    queries=st.integers(1, 9),
    threads=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_search_and_search_many_equal_a_numpy_brute_force(
    rows: int, dim: int, k: int, queries: int, threads: int, seed: int
) -> None:
    """Random data of any size (none included), k below and above the size, one thread or several:
    one query at a time and batched both give the brute-force list, and so each other's."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((rows, dim))
    ids = [f"c{i:03d}" for i in rng.permutation(rows)]
    asked = rng.standard_normal((queries, dim))
    index = VectorIndex(dim, threads=threads)
    index.add(ids, vectors)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(dense, "PARALLEL_MIN", 1)  # every search_many with threads > 1 splits its queries
        many = index.search_many(asked, k)
    assert len(many) == queries
    for query, hits in zip(asked, many, strict=True):
        expected = brute_force(ids, vectors, query, k)
        assert len(expected) == min(k, rows)
        assert_same(hits, expected)
        assert_same(index.search(query, k), expected)


def test_vectors_are_stored_unit_length_float32() -> None:
    index = VectorIndex(3)
    index.add(["a", "b"], [[3.0, 4.0, 0.0], [0.0, 0.0, 2.0]])
    assert index.matrix.dtype == np.float32
    np.testing.assert_allclose(index.matrix, [[0.6, 0.8, 0.0], [0.0, 0.0, 1.0]])
    assert_same(index.search([1.0, 0.0, 0.0], 2), [("a", 0.6), ("b", 0.0)])


def test_empty_index_and_zero_query_give_nothing() -> None:
    index = VectorIndex(3)
    assert index.search([1.0, 0.0, 0.0], 5) == []
    assert index.search_many(np.ones((2, 3)), 5) == [[], []]
    index.add([], np.zeros((0, 3)))
    assert len(index) == 0
    index.add(["a"], [[1.0, 0.0, 0.0]])
    assert index.search([0.0, 0.0, 0.0], 5) == []


def test_re_adding_an_id_replaces_its_vector() -> None:
    index = VectorIndex(2)
    index.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    index.add(["a"], [[0.0, 5.0]])
    assert len(index) == 2
    assert index.search([0.0, 1.0], 2) == [("a", 1.0), ("b", 1.0)]


def test_remove_drops_ids_and_ignores_unknown_ones() -> None:
    index = VectorIndex(2)
    index.add(["a", "b", "c"], [[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
    assert index.remove(["b", "zzz"]) == 1
    assert index.remove(["zzz"]) == 0
    assert index.ids == ("a", "c")
    assert "b" not in index
    assert [i for i, _ in index.search([1.0, 1.0], 3)] == ["a", "c"]
    index.add(["b"], [[1.0, 1.0]])
    assert_same(index.search([1.0, 1.0], 1), [("b", 1.0)])


def test_adding_one_at_a_time_equals_adding_in_bulk() -> None:
    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(40, 8))
    ids = [f"c{i:02d}" for i in range(40)]
    bulk, step = VectorIndex(8), VectorIndex(8)
    bulk.add(ids, vectors)
    for chunk_id, vector in zip(ids, vectors, strict=True):
        step.add([chunk_id], vector[None, :])
    assert step.ids == bulk.ids
    np.testing.assert_array_equal(step.matrix, bulk.matrix)


def test_a_zero_vector_is_refused_by_id() -> None:
    index = VectorIndex(2)
    with pytest.raises(ValueError, match=r"id 'empty#0003' is all zeros"):
        index.add(["ok", "empty#0003"], [[1.0, 0.0], [0.0, 0.0]])
    assert len(index) == 0  # nothing of a refused batch is added


@pytest.mark.parametrize(
    ("ids", "vectors", "message"),
    [
        (["a"], [[1.0, 0.0, 0.0]], r"shape \(1, 3\).*expected \(1, 2\)"),
        (["a", "b"], [[1.0, 0.0]], r"shape \(1, 2\).*expected \(2, 2\)"),
        (["a", "a"], [[1.0, 0.0], [0.0, 1.0]], r"\['a'\] appear more than once"),
        (["nan"], [[float("nan"), 1.0]], r"id 'nan' has NaN"),
    ],
)
def test_bad_vectors_are_refused(ids: list[str], vectors: list[list[float]], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        VectorIndex(2).add(ids, vectors)


@pytest.mark.parametrize("bad", [0, -1, True])
def test_dim_and_k_are_checked(bad: int) -> None:
    with pytest.raises(ValueError, match=r"dim="):
        VectorIndex(bad)
    with pytest.raises(ValueError, match=r"k="):
        VectorIndex(2).search([1.0, 0.0], bad)
    with pytest.raises(ValueError, match=r"query of shape \(3,\)"):
        VectorIndex(2).search([1.0, 0.0, 0.0], 1)


@pytest.mark.parametrize("mmap", [True, False])
def test_save_and_load_give_the_same_results(
    random_index: tuple[VectorIndex, list[str], npt.NDArray[np.float64]], tmp_path: Path, mmap: bool
) -> None:
    index, _, _ = random_index
    index.save(tmp_path / "vectors")
    assert sorted(p.name for p in (tmp_path / "vectors").iterdir()) == ["ids.json", "vectors.npy"]
    loaded = VectorIndex.load(tmp_path / "vectors", mmap=mmap)
    assert isinstance(loaded.matrix, np.memmap) is mmap
    assert loaded.ids == index.ids
    query = np.random.default_rng(11).normal(size=24)
    assert loaded.search(query, 20) == index.search(query, 20)


def test_a_memory_mapped_index_changes_in_memory_not_on_disk(tmp_path: Path) -> None:
    index = VectorIndex(2)
    index.add(["a", "b"], [[1.0, 0.0], [0.0, 1.0]])
    index.save(tmp_path)
    loaded = VectorIndex.load(tmp_path)
    loaded.add(["a"], [[0.0, 1.0]])
    loaded.remove(["b"])
    assert loaded.search([0.0, 1.0], 2) == [("a", 1.0)]
    assert VectorIndex.load(tmp_path).search([0.0, 1.0], 2) == [("b", 1.0), ("a", 0.0)]


def test_an_empty_index_saves_and_loads(tmp_path: Path) -> None:
    VectorIndex(5).save(tmp_path)
    loaded = VectorIndex.load(tmp_path)
    assert (loaded.dim, len(loaded), loaded.search(np.ones(5), 3)) == (5, 0, [])


def test_loading_a_missing_or_inconsistent_index_is_a_store_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="cannot be read"):
        VectorIndex.load(tmp_path / "nowhere")
    index = VectorIndex(2)
    index.add(["a"], [[1.0, 0.0]])
    index.save(tmp_path)
    (tmp_path / "ids.json").write_text('["a", "b"]', encoding="utf-8")
    with pytest.raises(StoreError, match=r"disagree.*2 ids"):
        VectorIndex.load(tmp_path)


def test_a_search_split_across_threads_gives_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    # Lower the size at which scoring is split, so a small matrix takes the threaded path.
    monkeypatch.setattr(dense, "PARALLEL_MIN", 1)
    rng = np.random.default_rng(5)
    rows = rng.standard_normal((1001, 16))
    ids = [f"c{i:04d}" for i in range(1001)]
    one, three = VectorIndex(16, threads=1), VectorIndex(16, threads=3)
    one.add(ids, rows)
    three.add(ids, rows)
    for query in rng.standard_normal((20, 16)):
        assert three.search(query, 10) == one.search(query, 10)
    query = rng.standard_normal(16).astype(np.float32)
    split = dense.scores_of(one.matrix, query, threads=3)
    assert split.dtype == np.float32
    assert np.array_equal(split, one.matrix @ query)


def test_threads_default_to_the_environment_then_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLEAR_RAG_THREADS", "3")
    assert VectorIndex(2).threads == 3
    monkeypatch.setenv("CLEAR_RAG_THREADS", "many")  # said, not silently replaced by the cores
    with pytest.raises(ConfigError, match=r"CLEAR_RAG_THREADS.*many.*is not a whole number"):
        VectorIndex(2)
    monkeypatch.delenv("CLEAR_RAG_THREADS")
    assert VectorIndex(2).threads >= 1
    assert VectorIndex(2, threads=0).threads == 1


@pytest.mark.usefixtures("compiled_kernels")  # search_many ranks a block in one compiled call once ready
@settings(max_examples=40, deadline=None)
@given(
    rows=st.integers(1, 60),
    dim=st.integers(1, 8),
    k=st.integers(1, 70),
    tied=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_compiled_batched_top_k_equals_ranking_line_by_line(
    rows: int, dim: int, k: int, tied: bool, seed: int
) -> None:
    """Ids as selection.top_k ranks each line of the one-query path's exact scores
    (prepass.exact_scores, the loop that scores a pre-pass's survivors), ties by id included (a few
    dyadic values make many exact ties, and equal rows; the ids are shuffled so that id order is not
    row order); each score that loop's or BLAS's, within batched.margin of it."""
    rng = np.random.default_rng(seed)
    draw = (lambda shape: rng.choice([-1.0, -0.5, 0.5, 1.0], size=shape)) if tied else rng.standard_normal
    matrix, queries = draw((rows, dim)), draw((4, dim))
    matrix[rng.integers(0, rows, rows // 3)] = matrix[rng.integers(0, rows, rows // 3)]  # equal rows
    ids = [f"r{i:02d}" for i in rng.permutation(rows)]
    index = VectorIndex(dim, threads=1)
    index.add(ids, matrix)
    lines = [prepass.exact_scores(index.matrix, query) for query in dense.l2_normalise(queries)]
    expected = [top_k(line, list(index.ids), k) for line in lines]
    found = index.search_many(queries, k)
    assert [[i for i, _ in hits] for hits in found] == [[i for i, _ in hits] for hits in expected]
    for hits, wanted in zip(found, expected, strict=True):
        gaps = [abs(score - exact) for (_, score), (_, exact) in zip(hits, wanted, strict=True)]
        assert all(gap <= batched.margin(dim) for gap in gaps)
    assert index._rank is not None  # the compiled path ran
