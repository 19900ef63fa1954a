"""Models trained here and shipped inside the package (``clear_rag/models/<name>/``), never downloaded.

Each folder holds an int8 ONNX file, the ``tokenizer.json`` it reads, and ``training.json``: what it was
trained from and how (``clear_rag.train.build``). ``make run`` uses them as they are, with no torch;
``clear-rag train reranker`` / ``embedder`` (the ``train`` extra) makes them again, and does nothing
while the manifest names the current inputs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from clear_rag.errors import ModelMissing

FOLDER = Path(__file__).resolve().parent
MANIFEST = "training.json"
RERANKERS = ("scifact-minilm-l6",)
EMBEDDERS = ("scifact-minilm-l6-embed",)


def model_folder(name: str) -> Path:
    """The shipped folder of ``name``, with its manifest; ``ModelMissing`` names the command that makes it."""
    folder = FOLDER / name
    if not (folder / MANIFEST).is_file():
        kind = "reranker" if name in RERANKERS else "embedder"
        raise ModelMissing(
            "is not in this installation (its folder or training.json is missing)",
            path=str(folder),
            fix=f"Reinstall clear-rag, or train it: pip install -e '.[train]'; clear-rag train {kind}",
        )
    return folder


def manifest(name: str) -> dict[str, Any]:
    return read_manifest(model_folder(name))


def read_manifest(folder: Path) -> dict[str, Any]:
    """The ``training.json`` of a model folder, shipped or written by ``clear-rag train --out``."""
    found: dict[str, Any] = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    return found


SUPPORT = "support.json"  # the support check's calibration of a shipped cross-encoder (generate.support)


def support_calibration(name: str) -> dict[str, Any] | None:
    """The calibration ``clear-rag calibrate-support`` wrote beside the shipped cross-encoder ``name``,
    or ``None`` for a model that has none (another reranker, or the lexical fake)."""
    path = FOLDER / name / SUPPORT
    if name not in RERANKERS or not path.is_file():
        return None
    found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return found


def version(found: dict[str, Any]) -> str:
    """What rows record after the name: the training date and the first 8 digits of the cache key."""
    return f"{str(found['date'])[:10]}.{str(found['cache_key'])[:8]}"


def shipped_reranker(name: str, **settings: int) -> Any:
    """The shipped cross-encoder ``name`` (``trained_reranker`` on its folder; ``settings`` are
    ``OnnxCrossEncoder``'s batch_size, threads and memo)."""
    return trained_reranker(model_folder(name), name, **settings)


def trained_reranker(folder: Path, name: str | None = None, **settings: int) -> Any:
    """A cross-encoder trained here, shipped or written by ``clear-rag train reranker --out FOLDER``, loaded
    by ``OnnxCrossEncoder``: its version from its manifest, and pairs cut to the length it was trained
    at (``training.max_tokens``), not the 512 tokens the loader allows a pulled model."""
    from clear_rag.providers.cross_encoder import OnnxCrossEncoder

    found = read_manifest(folder)
    return OnnxCrossEncoder(
        folder,
        name=name or folder.name,
        version=version(found),
        max_tokens=int(found["inputs"]["training"]["max_tokens"]),
        **settings,
    )


SERVE_TOKENS = 256  # all-MiniLM-L6-v2's own limit: training cuts abstracts to 128 for speed, search need not


def shipped_embedder(name: str, **settings: Any) -> Any:
    """The shipped adapted embedder ``name``, loaded by the embedded ``OnnxEmbedder`` (``settings`` are
    its batch_size and threads, its own defaults where not given).

    Texts are cut at ``SERVE_TOKENS``, as the base model's are, whatever length it was trained at."""
    return trained_embedder(model_folder(name), name, **settings)


def trained_embedder(folder: Path, name: str | None = None, **settings: Any) -> Any:
    """An embedder trained here, shipped or written by ``clear-rag train embedder --out FOLDER`` (or
    ``--corpus STORE``), loaded by ``OnnxEmbedder`` with its version from its manifest."""
    from clear_rag.providers.onnx import OnnxEmbedder

    found = read_manifest(folder)
    name = name or folder.name
    return OnnxEmbedder(
        folder / "model_int8.onnx",
        folder / "tokenizer.json",
        name=name,
        version=version(found),
        max_tokens=max(SERVE_TOKENS, int(found["inputs"]["training"]["max_tokens"])),
        **settings,
    )
