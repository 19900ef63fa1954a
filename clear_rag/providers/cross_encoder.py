"""A cross-encoder reranker exported to ONNX (ms-marco-MiniLM-L6-v2 and its kind), run with onnxruntime.

The model reads the query and one passage together as ``[CLS] query [SEP] passage [SEP]`` and returns
one relevance logit for the pair. The files are the ones the Hugging Face repositories publish: an ONNX
graph (full precision or one of its quantised variants) and a ``tokenizer.json`` that carries the
BERT pair template. They come from ``clear-rag models pull`` (``clear_rag.providers.hub``) or from any
folder the user points at; nothing is downloaded here.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from tokenizers import Encoding, Tokenizer

from clear_rag.errors import ModelError
from clear_rag.providers import hub

# Looked for in this order, first in the folder itself and then in its ``onnx/`` subfolder (the layout
# of a cloned Hugging Face repository). Quantised files come first: on a CPU an int8 MiniLM ranks
# about as well as fp32 at a fraction of the time, and the fp32 file is the fallback. The names are
# the ones Xenova/optimum exports use (``model_quantized``), a plain ``model_int8``, and the
# sentence-transformers exports in the cross-encoder/* repositories (``model_quint8_avx2`` and so on).
MODEL_FILES = (
    "model_quantized.onnx",
    "model_int8.onnx",
    "model_quint8_avx2.onnx",
    "model_qint8_avx512_vnni.onnx",
    "model_qint8_avx512.onnx",
    "model_qint8_arm64.onnx",
    "model.onnx",
)
TOKENIZER_FILE = "tokenizer.json"
# One pair per call by default. An int8 graph quantised dynamically (per tensor, at run time, as the
# shipped scifact-minilm-l6 is) scales each call's activations by that call's own range, so a batch of
# several pairs gives each a logit that depends on the others: by up to about one logit on the tech
# corpus's chunks (results/bench/batch.json). One pair per call makes a logit its pair's alone, which
# lets a logit be kept and reused; on two cores it cost 6% more time than the fastest batch for
# passages and 28% more for single sentences (the same file).
BATCH_SIZE = 1
MEMO_PAIRS = 8192  # logits kept per model, most recent first; 0 keeps none


def find_model_files(model_dir: str | Path) -> tuple[Path, Path]:
    """The ONNX file (first of ``MODEL_FILES`` present) and ``tokenizer.json`` in ``model_dir``."""
    folder = Path(model_dir)
    fix = (
        f"Run `clear-rag models pull {hub.DEFAULT_RERANKER}` to download the default reranker, or pass "
        "the folder that holds the model's .onnx file and tokenizer.json"
    )
    if not folder.is_dir():
        raise ModelError("is not a folder holding a cross-encoder model", path=str(folder), fix=fix)
    places = (folder, folder / "onnx")
    model = next((p / n for n in MODEL_FILES for p in places if (p / n).is_file()), None)
    if model is None:
        raise ModelError(
            f"holds no cross-encoder ONNX file (looked for {', '.join(MODEL_FILES)}, here and in onnx/)",
            path=str(folder),
            fix=fix,
        )
    tokenizer = next((p / TOKENIZER_FILE for p in places if (p / TOKENIZER_FILE).is_file()), None)
    if tokenizer is None:
        raise ModelError(f"has {model.name} but no {TOKENIZER_FILE}", path=str(folder), fix=fix)
    return model, tokenizer


class OnnxCrossEncoder:
    """Scores (query, passage) pairs with an ONNX cross-encoder: one float32 logit per passage.

    ``model`` is a folder (see ``MODEL_FILES`` for which file is picked) or a
    ``(model_path, tokenizer_path)`` pair. Pairs are truncated to ``max_tokens`` longest-first, which
    cuts the passage and keeps the query whole whenever the query is the shorter of the two.

    With ``batch_size`` 1 (the default, see ``BATCH_SIZE``) a logit depends on its pair alone, so the
    last ``memo`` pairs' logits are kept and a pair scored again (a deeper shortlist of the same
    question, a second rerank row, a question asked again) is not run twice; ``score_reusing`` says
    how many came from there. With a larger batch the memo is off, since a logit depends on its batch.
    """

    def __init__(
        self,
        model: str | Path | tuple[str | Path, str | Path],
        *,
        name: str,
        version: str,
        max_tokens: int = 512,
        batch_size: int = BATCH_SIZE,
        threads: int = 0,
        memo: int = MEMO_PAIRS,
    ) -> None:
        if not name or not version:
            raise ValueError(f"name={name!r}, version={version!r}: both are needed to record the model")
        if isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"batch_size={batch_size!r} is invalid; use a positive size such as 16")
        # [CLS] q [SEP] p [SEP] needs three special tokens plus at least a few of each text.
        if isinstance(max_tokens, bool) or max_tokens < 8:
            raise ValueError(f"max_tokens={max_tokens!r} is too small; use at least 8 (the model allows 512)")
        if isinstance(threads, bool) or threads < 0:
            raise ValueError(f"threads={threads!r} is invalid; use 0 (every core) or a positive count")
        if isinstance(memo, bool) or memo < 0:
            raise ValueError(f"memo={memo!r} is invalid; use 0 (keep none) or a number of pairs to keep")
        if isinstance(model, tuple):
            model_path, tokenizer_path = (Path(p) for p in model)
            for path in (model_path, tokenizer_path):
                if not path.is_file():
                    raise ModelError(
                        "does not exist", path=str(path), fix="Pass the paths of the .onnx and tokenizer.json"
                    )
        else:
            model_path, tokenizer_path = find_model_files(model)
        self.name, self.version = name, version
        self.model_path, self.tokenizer_path = model_path, tokenizer_path
        self.max_tokens = max_tokens
        self._batch_size = batch_size
        self._memo_size = memo if batch_size == 1 else 0
        self._memo: OrderedDict[tuple[str, str], float] = OrderedDict()
        self._lock = threading.Lock()
        self._tokenizer = _load_tokenizer(tokenizer_path, max_tokens)
        self._session = _load_session(model_path, threads)
        self._inputs = {i.name for i in self._session.get_inputs()}
        _check_graph(self._session, model_path)

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        """One logit per passage, in the order given; higher means more relevant."""
        return self.score_reusing(query, passages)[0]

    def score_reusing(self, query: str, passages: Sequence[str]) -> tuple[npt.NDArray[np.float32], int]:
        """``score``, and how many of the logits were kept from an earlier call rather than run."""
        if isinstance(passages, str):
            raise TypeError("passages is a single string; pass a list of strings")
        out = np.zeros(len(passages), dtype=np.float32)
        kept: list[float | None] = [None] * len(passages)
        if self._memo_size:
            with self._lock:
                kept = [self._memo.get((query, p)) for p in passages]
        todo = [i for i, logit in enumerate(kept) if logit is None]
        for i, logit in enumerate(kept):
            if logit is not None:
                out[i] = logit
        if todo:
            encodings = self._tokenizer.encode_batch([(query, passages[i]) for i in todo])
            # Sorting by length makes each batch pad to about the same width; rows go back by index.
            order = sorted(range(len(todo)), key=lambda i: len(encodings[i].ids))
            for begin in range(0, len(order), self._batch_size):
                rows = order[begin : begin + self._batch_size]
                out[[todo[i] for i in rows]] = self._run([encodings[i] for i in rows])
        if self._memo_size:
            with self._lock:
                for i in range(len(passages)):
                    self._memo[(query, passages[i])] = float(out[i])
                    self._memo.move_to_end((query, passages[i]))
                while len(self._memo) > self._memo_size:
                    self._memo.popitem(last=False)
        return out, len(passages) - len(todo)

    def _run(self, batch: Sequence[Encoding]) -> npt.NDArray[np.float32]:
        width = max(len(e.ids) for e in batch)
        ids = np.zeros((len(batch), width), dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        types = np.zeros((len(batch), width), dtype=np.int64)
        for row, encoding in enumerate(batch):
            n = len(encoding.ids)
            ids[row, :n] = encoding.ids
            mask[row, :n] = 1
            types[row, :n] = encoding.type_ids
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
        logits = np.asarray(
            self._session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0],
            dtype=np.float32,
        )
        if logits.shape not in {(len(batch),), (len(batch), 1)}:
            raise ModelError(
                f"returned logits of shape {logits.shape} for {len(batch)} pairs; a reranker gives one each",
                path=str(self.model_path),
                fix="Use a cross-encoder with a single relevance output (e.g. ms-marco-MiniLM-L6-v2)",
            )
        return logits.reshape(len(batch))


def _load_tokenizer(path: Path, max_tokens: int) -> Tokenizer:
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as err:  # the Rust side raises a bare Exception on a bad file
        raise ModelError(
            f"cannot be read as a tokenizer ({err})", path=str(path), fix="Download it again"
        ) from err
    # Longest-first rather than only-second: the two agree whenever the query is shorter than the
    # passage left after cutting (any real query at 512 tokens), only-second raises on a query that
    # alone overflows the budget, and longest-first is what sentence-transformers used to train and
    # evaluate these models, so the logits match the published ones.
    tokenizer.enable_truncation(max_tokens, strategy="longest_first")
    # Padding is done per batch in ``_run``; a padding setting saved in tokenizer.json would pad
    # every pair to a fixed width and waste the length sort.
    tokenizer.no_padding()
    return tokenizer


def _load_session(path: Path, threads: int) -> Any:
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads  # 0 lets onnxruntime use every core
    try:
        return onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
    except Exception as err:  # onnxruntime raises its own untyped errors on a bad file
        raise ModelError(f"cannot be loaded ({err})", path=str(path), fix="Download it again") from err


def _check_graph(session: Any, path: Path) -> None:
    """Fail at load time, not at the first question, on a graph that is not a one-logit cross-encoder."""
    inputs = [i.name for i in session.get_inputs()]
    unknown = sorted(set(inputs) - {"input_ids", "attention_mask", "token_type_ids"})
    if "input_ids" not in inputs or "attention_mask" not in inputs or unknown:
        raise ModelError(
            f"has inputs {inputs}; a cross-encoder takes input_ids, attention_mask and maybe token_type_ids",
            path=str(path),
            fix="Export the model with those input names (optimum and sentence-transformers do)",
        )
    shape = session.get_outputs()[0].shape
    if len(shape) > 2 or (len(shape) == 2 and isinstance(shape[1], int) and shape[1] != 1):
        raise ModelError(
            f"has output shape {shape}; a reranker gives one logit per pair, (n, 1) or (n,)",
            path=str(path),
            fix="Use a cross-encoder with a single relevance output (e.g. ms-marco-MiniLM-L6-v2)",
        )


def pulled_reranker(
    name: str = hub.DEFAULT_RERANKER,
    cache_dir: str | Path | None = None,
    *,
    batch_size: int = BATCH_SIZE,
    threads: int = 0,
) -> OnnxCrossEncoder:
    """A reranker that ``clear-rag models pull NAME`` downloaded; its version records what was pulled."""
    folder = hub.locate(name, cache_dir)
    return OnnxCrossEncoder(
        folder, name=name, version=hub.pulled_version(folder), batch_size=batch_size, threads=threads
    )
