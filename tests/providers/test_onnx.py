"""The embedded ONNX embedder on a real onnxruntime session (the int8 MiniLM shipped on PyPI)."""

from __future__ import annotations

import numpy as np
import pytest

from clear_rag.providers.onnx import OnnxEmbedder, mean_pool, minilm_int8

TEXTS = [
    "Webhook deliveries are retried with exponential backoff.",
    "Retries of failed webhook deliveries back off exponentially over time.",
    "The Growth plan costs 290 dollars per month.",
    "a",
]


@pytest.fixture(scope="module")
def embedder() -> OnnxEmbedder:
    return minilm_int8(batch_size=2)


def test_mean_pool_ignores_padding() -> None:
    hidden = np.array([[[1.0, 2.0], [3.0, 4.0], [100.0, 100.0]]], dtype=np.float32)
    mask = np.array([[1, 1, 0]], dtype=np.int64)
    assert mean_pool(hidden, mask).tolist() == [[(1 + 3) / 2, (2 + 4) / 2]]


@pytest.mark.slow
def test_vectors_are_normalised_and_meaningful(embedder: OnnxEmbedder) -> None:
    vectors = embedder.embed(TEXTS, kind="document")
    assert vectors.shape == (4, 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    similar, unrelated = vectors[0] @ vectors[1], vectors[0] @ vectors[2]
    assert similar > unrelated + 0.3


@pytest.mark.slow
def test_batching_and_length_sorting_keep_input_order(embedder: OnnxEmbedder) -> None:
    together = embedder.embed(TEXTS, kind="document")
    one_by_one = np.vstack([embedder.embed([t], kind="document") for t in TEXTS])
    assert np.allclose(together, one_by_one, atol=1e-4)


@pytest.mark.slow
def test_kind_is_checked_and_empty_input_is_fine(embedder: OnnxEmbedder) -> None:
    with pytest.raises(ValueError, match="kind='passage'"):
        embedder.embed(["x"], kind="passage")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="single string"):
        embedder.embed("x", kind="query")
    assert embedder.embed([], kind="query").shape == (0, 384)
    assert embedder.name == "all-MiniLM-L6-v2-int8" and embedder.version
