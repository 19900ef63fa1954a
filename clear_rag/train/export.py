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

import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.eval.metrics import kendall_tau

INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def export_onnx(model: Any, path: Path, *, output: str) -> Path:
    """Write ``model`` (a BERT ``...ForSequenceClassification`` or ``BertModel``) as fp32 ONNX.

    ``output`` names the graph's one output: ``logits`` for a cross-encoder, ``last_hidden_state``
    for an embedder (what ``OnnxEmbedder`` mean-pools).
    """
    import torch  # type: ignore[import-not-found, unused-ignore]

    class ByName(torch.nn.Module):  # type: ignore[misc, unused-ignore]  # torch is Any where not installed
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out[0]

    model.eval()
    # Eager attention, since the SDPA path transformers picks by default decides in Python whether a
    # mask is needed and a trace keeps that decision; and a sample with padding, so the masking ops
    # are traced rather than skipped for an all-ones mask.
    if hasattr(model, "set_attn_implementation"):
        model.set_attn_implementation("eager")
    else:
        model.config._attn_implementation = "eager"
    sample = torch.ones((2, 8), dtype=torch.long)
    mask = sample.clone()
    mask[1, 5:] = 0
    axes = {name: {0: "batch", 1: "sequence"} for name in INPUTS}
    axes[output] = {0: "batch"} if output == "logits" else {0: "batch", 1: "sequence"}
    path.parent.mkdir(parents=True, exist_ok=True)
    # The TorchScript exporter on purpose (it warns that it is the legacy one): it is the one found to
    # export MiniLM here (opset 17, inputs by name), and its graphs load in the onnxruntime we ship with.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy-exporter notice and tracing notes on shape checks
        torch.onnx.export(
            ByName(model),
            (sample, mask, torch.zeros_like(sample)),
            str(path),
            input_names=list(INPUTS),
            output_names=[output],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    return path


def quantise(fp32: Path, int8: Path) -> Path:
    """Dynamic int8 quantisation of ``fp32`` into ``int8``: signed weights, one scale per output channel
    (``onnx_export.quantise``'s ``per_channel``; with one per tensor the same MiniLM weights as an
    embedder kept a median cosine of 0.934 to fp32, with one per channel 0.994:
    results/bench/embed-steps.json). Any BERT shape; an embedder of MiniLM's shape takes
    ``onnx_export.fused_int8`` instead."""
    from clear_rag.providers.onnx_export import quantise as quantise_variant

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
