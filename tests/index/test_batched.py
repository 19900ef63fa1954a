"""The compiled batched top k of ``VectorIndex.search_many`` (clear_rag.index.batched) against a numpy
brute force: every score of every query, fully sorted by score and then by id.

The data is drawn to reach every branch of the scan: sizes from one vector up, k from 1 to past the
number of vectors (kept as a sorted run up to ``batched.SMALL_K``, in a heap above it), tiles and
blocks of queries that split the vectors and the queries unevenly, and repeated vectors, whose
scores are equal and whose order is then the ids' alone.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.index import batched, compiled, vectors
from clear_rag.index.dense import l2_normalise
from clear_rag.index.vectors import VectorIndex

pytestmark = pytest.mark.usefixtures("compiled_kernels")


def brute_force(
    index: VectorIndex, queries: npt.NDArray[np.float64], k: int
) -> list[list[tuple[str, float]]]:
    """Each query's ``k`` best: the normalised queries' products with every vector in float64, rounded
    to float32, each line sorted whole by score descending and then by id (a zero query finds
    nothing). Not a float32 product: BLAS's gemv, which numpy takes for a single query, gave two equal
    vectors different scores by their places in the matrix (0.9876823 and 0.98768234)."""
    lines = (l2_normalise(queries).astype(np.float64) @ index.matrix.T.astype(np.float64)).astype(np.float32)
    ids = np.array(index.ids)
    found = []
    for query, line in zip(queries, lines, strict=True):
        order = np.lexsort((ids, -line))[:k]  # the last key sorts first
        found.append([(str(ids[i]), float(line[i])) for i in order] if query.any() else [])
    return found


def assert_same(
    found: list[list[tuple[str, float]]], expected: list[list[tuple[str, float]]], exact: bool
) -> None:
    """The same ids in the same order; the scores bit for bit where every sum is exact, else to float32
    rounding (BLAS sums a product of another shape in another order)."""
    assert [[i for i, _ in hits] for hits in found] == [[i for i, _ in hits] for hits in expected]
    for hits, wanted in zip(found, expected, strict=True):
        scores, reference = [s for _, s in hits], [s for _, s in wanted]
        assert scores == reference if exact else scores == pytest.approx(reference, rel=1e-5, abs=1e-6)


@settings(max_examples=150, deadline=None)
@given(
    rows=st.integers(1, 150),
    dim=st.integers(1, 12),
    k=st.integers(1, 160),
    count=st.integers(1, 12),
    tile=st.integers(1, 80),
    block=st.integers(1, 7),
    repeats=st.integers(0, 40),
    exact=st.booleans(),
    seed=st.integers(0, 2**32 - 1),
)
def test_search_many_is_the_brute_force_top_k(
    rows: int, dim: int, k: int, count: int, tile: int, block: int, repeats: int, exact: bool, seed: int
) -> None:
    """Exact: entries of +-1 in 1, 4 or 16 dimensions, so every vector's length is a power of two and
    every score a sum of a few multiples of 1/16, exact whatever order BLAS sums it in: many ties of
    different vectors, ranked by id alone, and scores bit for bit. Otherwise normal draws, equal only
    where a vector is repeated."""
    rng = np.random.default_rng(seed)
    if exact:
        dim = [1, 4, 16][dim % 3]
        matrix, queries = (
            rng.choice([-1.0, 1.0], size=(rows, dim)),
            rng.choice([-1.0, 1.0], size=(count, dim)),
        )
    else:
        matrix, queries = rng.standard_normal((rows, dim)), rng.standard_normal((count, dim))
    matrix[rng.integers(0, rows, repeats)] = matrix[rng.integers(0, rows, repeats)]  # equal vectors
    queries[rng.random(count) < 0.1] = 0.0  # a query with no direction finds nothing
    index = VectorIndex(dim, threads=1)
    index.add([f"v{i:03d}" for i in rng.permutation(rows)], matrix)  # id order is not row order
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(batched, "TILE", tile)
        patch.setattr(vectors, "BATCH_QUERIES", block)
        found = index.search_many(queries, k)
    assert compiled.status().state == "ready"  # the compiled path answered, not numpy
    assert_same(found, brute_force(index, queries, k), exact)


def test_a_tile_past_the_vectors_and_one_vector_a_tile_give_the_same_lists() -> None:
    rng = np.random.default_rng(5)
    queries = l2_normalise(rng.standard_normal((9, 6)))
    matrix = l2_normalise(rng.standard_normal((37, 6)))
    matrix[20:30] = matrix[3]  # ten equal vectors across tiles: their order is their rank's
    rank = rng.permutation(37).astype(np.intp)
    for k in (1, 12, batched.SMALL_K + 3, 37, 50):
        whole = batched.top_k(queries, matrix, k, rank, tile=1000)
        for tile in (1, 5, 16, 36):
            rows, scores = batched.top_k(queries, matrix, k, rank, tile=tile)
            np.testing.assert_array_equal(rows, whole[0])
            np.testing.assert_allclose(scores, whole[1], rtol=1e-5, atol=1e-6)  # BLAS sums by shape
        assert whole[0].shape == (9, min(k, 37))


def test_no_queries_and_a_bad_tile() -> None:
    matrix = np.eye(3, dtype=np.float32)
    rows, scores = batched.top_k(np.empty((0, 3), dtype=np.float32), matrix, 2, np.arange(3))
    assert rows.shape == scores.shape == (0, 2)
    with pytest.raises(ValueError, match=r"tile=0 is invalid"):
        batched.top_k(matrix, matrix, 2, np.arange(3), tile=0)
