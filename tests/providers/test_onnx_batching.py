"""Batching and session settings of the embedded ONNX embedder (``bench.embed`` measures their speed).

What is tested is what must not move when the speed does: a text's vector is the same whether it is
embedded alone or in a batch, sorted by length or not, through I/O binding or not.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag import models
from clear_rag.packaged import packaged_file
from clear_rag.providers.onnx import (
    _MINILM_FILE,
    MINILM_PACKAGE,
    OnnxEmbedder,
    SessionSettings,
    minilm_int8,
)
from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

WORDS = [
    "cell",
    "protein",
    "tumour",
    "growth",
    "receptor",
    "signal",
    "blood",
    "study",
    "patients",
    "risk",
    "gene",
    "the",
    "of",
    "and",
    "in",
]


@pytest.mark.parametrize(
    ("field", "value"),
    [("threads", -1), ("threads", True), ("threads", 1.5), ("graph", "fast"), ("graph", "ALL")],
)
def test_session_settings_reject_bad_values(field: str, value: object) -> None:
    with pytest.raises(ValueError, match=f"{field}="):
        SessionSettings(**{field: value})  # type: ignore[arg-type]


def test_session_settings_reach_onnxruntime() -> None:
    import onnxruntime

    options = SessionSettings(threads=2, graph="basic", spinning=False, arena=False, parallel=True).options()
    assert options.intra_op_num_threads == 2
    assert options.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    assert options.enable_cpu_mem_arena is False
    assert options.execution_mode == onnxruntime.ExecutionMode.ORT_PARALLEL
    default = SessionSettings().options()
    assert default.graph_optimization_level == onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
    assert default.execution_mode == onnxruntime.ExecutionMode.ORT_SEQUENTIAL


@pytest.fixture(scope="module")
def sorted_embedder() -> OnnxEmbedder:
    return minilm_int8(threads=2, batch_size=3)


@pytest.fixture(scope="module")
def bound_embedder() -> OnnxEmbedder:
    """The same shipped file, unsorted, through I/O binding, without spinning threads."""
    return OnnxEmbedder(
        packaged_file(MINILM_PACKAGE, _MINILM_FILE),
        packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE),
        name="bound",
        version="test",
        batch_size=2,
        session=SessionSettings(threads=2, io_binding=True, spinning=False),
        sort_by_length=False,
    )


texts_of_random_lengths = st.lists(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=40).map(" ".join), min_size=1, max_size=6
)


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=texts_of_random_lengths)
def test_length_sorted_batches_give_each_text_its_own_vector_in_input_order(
    sorted_embedder: OnnxEmbedder, bound_embedder: OnnxEmbedder, texts: list[str]
) -> None:
    alone = np.vstack([sorted_embedder.embed([t], kind="document") for t in texts])
    batched = sorted_embedder.embed(texts, kind="document")
    unsorted_bound = bound_embedder.embed(texts, kind="document")
    assert batched.shape == alone.shape == (len(texts), 384)
    np.testing.assert_allclose(batched, alone, atol=2e-5)
    np.testing.assert_allclose(unsorted_bound, alone, atol=2e-5)


@pytest.mark.slow
@pytest.mark.skipif(not models.has(models.FAST, models.FAST_MODEL), reason="minilm-q8 is not installed")
def test_fast_embedder_keeps_the_default_vectors_direction() -> None:
    texts = [
        "Aspirin lowers the risk of a second heart attack in patients with coronary disease.",
        "Tumour growth slowed when the receptor signal was blocked in mice.",
        "a",
    ]
    fast, default = models.fast_embedder(threads=2, batch_size=2), minilm_int8(threads=2)
    ours, theirs = fast.embed(texts, kind="document"), default.embed(texts, kind="document")
    assert fast.dim == 384 and fast.name != default.name
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert float(np.min((ours * theirs).sum(axis=1))) > 0.97
    # Still a text embedder: the two medical sentences are nearer each other than either is to "a".
    assert ours[0] @ ours[1] > ours[0] @ ours[2]


@pytest.mark.slow
@pytest.mark.skipif(not models.has(models.FAST, models.FAST_MODEL), reason="minilm-q8 is not installed")
def test_fast_embedder_is_chosen_by_name_and_default_is_unchanged() -> None:
    from clear_rag.providers.select import DEFAULT_EMBEDDER, EMBEDDERS, make_embedder

    assert DEFAULT_EMBEDDER == "minilm" and "minilm-q8" in EMBEDDERS
    assert make_embedder("minilm-q8").name == "all-MiniLM-L6-v2-q8-fused"


@pytest.mark.skipif(not models.has(models.FAST, models.FAST_MODEL), reason="minilm-q8 is not installed")
def test_fast_model_file_is_the_one_its_build_record_names() -> None:
    import json

    from clear_rag.hashing import file_sha256
    from clear_rag.train.onnx_export import QUANTISATIONS, SHIPPED_QUANTISATION

    folder = models.shipped(models.FAST)
    record = json.loads((folder / "build.json").read_text(encoding="utf-8"))
    assert record["sha256"] == file_sha256(folder / models.FAST_MODEL)
    assert record["quantisation"] == {
        "kind": "dynamic",
        "weight_type": "int8",
        **QUANTISATIONS[SHIPPED_QUANTISATION],
    }
