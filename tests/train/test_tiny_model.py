"""End to end on a tiny randomly initialised BERT built here: train a few steps, export, quantise,
load with the providers clear-rag serves with, and check int8 against the torch model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("onnx")

from clear_rag.providers.cross_encoder import OnnxCrossEncoder
from clear_rag.train import build, export
from clear_rag.train import cross_encoder as ce
from clear_rag.train import embedder as be
from clear_rag.train.embedder_build import check_embedder
from clear_rag.train.mining import Group
from clear_rag.train.reranker_build import check_reranker
from tests.providers.tiny_models import VOCAB, build_tokenizer

TEXTS = {
    "pads": "disc brake pads need new pads at the rotor",
    "tyres": "tyre pressure for road bikes is psi",
    "gravel": "gravel tyres run lower pressure",
    "chain": "replace the chain at stretch",
    "bleed": "bleed the brakes yearly",
}
GROUPS = [
    Group("q1", "when to replace brake pads", ("pads",), ("bleed", "chain")),
    Group("q2", "road tyre pressure", ("tyres",), ("gravel", "chain")),
    Group("q3", "chain stretch", ("chain",), ("pads", "tyres")),
    Group("q4", "bleed brakes", ("bleed",), ("pads", "gravel")),
]


def tiny_config(num_labels: int = 1) -> object:
    from transformers import BertConfig  # type: ignore[import-not-found, unused-ignore]

    return BertConfig(  # type: ignore[call-arg, unused-ignore]
        vocab_size=len(VOCAB),
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=64,
        num_labels=num_labels,
    )


def test_a_cross_encoder_trains_exports_and_serves(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(tmp_path / "model" / "tokenizer.json")
    settings = ce.CrossEncoderSettings(
        max_tokens=32, negatives=2, groups_per_step=2, epochs=2, max_steps=4, threads=1
    )
    model, report = ce.train(tiny_config(), tokenizer, GROUPS, TEXTS, settings)
    assert report.steps == 4 and report.pairs == 4 * 2 * 3 and len(report.losses) == 4
    assert all(np.isfinite(report.losses))
    fp32 = export.export_onnx(model, tmp_path / "fp32" / "model.onnx", output="logits")
    int8 = export.quantise(fp32, tmp_path / "model" / build.MODEL_FILE)
    assert int8.stat().st_size < fp32.stat().st_size
    served = OnnxCrossEncoder(tmp_path / "model", name="tiny", version="test", max_tokens=32)
    assert served.model_path.name == build.MODEL_FILE  # picked by OnnxCrossEncoder's MODEL_FILES
    passages = list(TEXTS.values())
    reference = export.torch_logits(model, tokenizer, "brake pads", passages, 32)
    # int8 is the fp32 graph quantised: close to its logits (a random tiny model's logits barely
    # spread, so the bound is on their size, not on their ranking)
    fp32_served = OnnxCrossEncoder((fp32, tokenizer), name="tiny", version="fp32", max_tokens=32)
    full = fp32_served.score("brake pads", passages)
    quantised = served.score("brake pads", passages)
    assert np.isfinite(quantised).all() and quantised.shape == (len(passages),)
    assert float(np.max(np.abs(quantised - full))) <= 0.25 * float(np.max(np.abs(full))) + 1e-3
    spread = float(np.ptp(reference))
    check = check_reranker(model, tmp_path / "model", tokenizer, GROUPS, TEXTS, 32)
    assert check["groups"] == len(GROUPS) and np.isfinite(spread)


def test_the_exported_graph_gives_the_torch_logits(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(tmp_path / "tokenizer.json")
    settings = ce.CrossEncoderSettings(max_tokens=32, negatives=2, groups_per_step=2, max_steps=1, threads=1)
    model, _ = ce.train(tiny_config(), tokenizer, GROUPS, TEXTS, settings)
    fp32 = export.export_onnx(model, tmp_path / "model.onnx", output="logits")
    served = OnnxCrossEncoder((fp32, tokenizer), name="tiny", version="fp32", max_tokens=32)
    passages = list(TEXTS.values())
    reference = export.torch_logits(model, tokenizer, "brake pads", passages, 32)
    np.testing.assert_allclose(served.score("brake pads", passages), reference, atol=1e-4)


def test_the_listwise_loss_is_the_positives_softmax_cross_entropy() -> None:
    import torch  # type: ignore[import-not-found, unused-ignore]

    logits = torch.tensor([2.0, 0.0, 1.0, 0.5, 0.5, 3.0])
    expected = np.mean(
        [
            -np.log(np.exp(2.0) / (np.exp(2.0) + np.exp(0.0) + np.exp(1.0))),
            -np.log(np.exp(0.5) / (np.exp(0.5) + np.exp(0.5) + np.exp(3.0))),
        ]
    )
    assert float(ce.listwise_loss(logits, 3)) == pytest.approx(expected, rel=1e-6)


def test_training_is_seeded(tmp_path: Path) -> None:
    tokenizer = build_tokenizer(tmp_path / "tokenizer.json")
    settings = ce.CrossEncoderSettings(max_tokens=32, negatives=2, groups_per_step=2, max_steps=2, threads=1)
    first = ce.train(tiny_config(), tokenizer, GROUPS, TEXTS, settings)[1].losses
    again = ce.train(tiny_config(), tokenizer, GROUPS, TEXTS, settings)[1].losses
    assert first == again


def test_an_embedder_trains_exports_and_serves(tmp_path: Path) -> None:
    from clear_rag.providers.onnx import OnnxEmbedder

    tokenizer = build_tokenizer(tmp_path / "model" / "tokenizer.json")
    settings = be.EmbedderSettings(
        max_tokens=32, query_tokens=16, negatives=1, claims_per_step=2, max_steps=2
    )
    model, report = be.train(tiny_config(), tokenizer, GROUPS, TEXTS, settings)
    assert report.steps == 2 and all(np.isfinite(report.losses))
    fp32 = export.export_onnx(model, tmp_path / "fp32" / "model.onnx", output="last_hidden_state")
    export.quantise(fp32, tmp_path / "model" / build.MODEL_FILE)
    served = OnnxEmbedder(fp32, tokenizer, name="tiny", version="fp32", max_tokens=32)
    assert served.embed(["brake pads"], "query").shape == (1, 32)
    check = check_embedder(model, tmp_path / "model", tokenizer, list(TEXTS.values()), 32)
    assert check["texts"] == len(TEXTS) and check["min_cosine"] > 0.9
