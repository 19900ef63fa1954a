"""From a trained torch model to the int8 ONNX file clear-rag ships (needs torch and onnx).

``torch.onnx.export`` with the TorchScript exporter (``dynamo=False``) at opset 17, through a wrapper
whose ``forward`` takes the three BERT inputs by name (the exporter passes positionally, and BERT's
positional order is not ``input_ids, attention_mask, token_type_ids``). Batch and sequence axes are
dynamic. ``onnxruntime.quantization.quantize_dynamic`` then stores the MatMul weights as signed int8
with per-channel scales and quantises activations at run time (Jacob et al. 2018): about a quarter of
the fp32 size, and on a CPU several times faster. ``agreement`` checks what matters for a reranker:
that the int8 scores rank each group's passages as the fp32 torch scores do.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.eval.metrics import kendall_tau
from clear_rag.train.onnx_export import INPUTS, export_onnx

__all__ = ["INPUTS", "agreement", "export_onnx", "quantise", "torch_logits"]


def quantise(fp32: Path, int8: Path) -> Path:
    """Dynamic int8 quantisation of ``fp32`` into ``int8``: signed weights, one scale per output channel
    (``onnx_export.quantise``'s ``per_channel``; with one per tensor the same MiniLM weights as an
    embedder kept a median cosine of 0.934 to fp32, with one per channel 0.994:
    results/bench/embed-steps.json). Any BERT shape; an embedder of MiniLM's shape takes
    ``onnx_export.fused_int8`` instead."""
    from clear_rag.train.onnx_export import quantise as quantise_variant

    int8.parent.mkdir(parents=True, exist_ok=True)
    return quantise_variant(fp32, int8, "per_channel")


def torch_logits(
    model: Any, tokenizer_path: Path, query: str, passages: Sequence[str], max_tokens: int
) -> npt.NDArray[np.float32]:
    """The trained torch model's fp32 logits for one query's passages (the reference for ``agreement``)."""
    import torch  # type: ignore[import-not-found, unused-ignore]
    from tokenizers import Tokenizer

    from clear_rag.train.cross_encoder import encode_pairs

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    # In eval mode, as exported: the first shipped reranker was checked against logits with dropout
    # on, which made a faithful export look like one that ignored the attention mask.
    model.eval()
    with torch.no_grad():
        logits = model(**encode_pairs(tokenizer, [(query, p) for p in passages], max_tokens)).logits
    return np.asarray(logits.reshape(-1).numpy(), dtype=np.float32)


def agreement(reference: Sequence[Sequence[float]], quantised: Sequence[Sequence[float]]) -> dict[str, float]:
    """How the int8 scores agree with the fp32 ones over several groups: mean Kendall tau, the share of
    groups whose top passage is the same, and the largest absolute logit difference."""
    taus = [kendall_tau(r, q, variant="a") for r, q in zip(reference, quantised, strict=True)]
    tops = [int(np.argmax(r)) == int(np.argmax(q)) for r, q in zip(reference, quantised, strict=True)]
    diff = max(
        float(np.max(np.abs(np.asarray(r) - np.asarray(q))))
        for r, q in zip(reference, quantised, strict=True)
    )
    return {
        "groups": len(taus),
        "mean_kendall_tau": round(float(np.mean(taus)), 4),
        "same_top": round(float(np.mean(tops)), 4),
        "max_abs_logit_diff": round(diff, 4),
    }
