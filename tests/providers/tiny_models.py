"""Tiny, hand-built stand-ins for a real cross-encoder: an ONNX graph and a ``tokenizer.json``.

They go through exactly the loading path a real model does (onnxruntime, the tokenizers library, the
BERT pair template with token types), but their logit is a formula a test can write down:

    logit = scale * (sum over the passage's word tokens of how often the query holds that word)
                  / (number of word tokens in the passage) + bias

Special tokens ([CLS], [SEP], [PAD], [UNK]) count for nothing, so padding and batching cannot move
a logit, and a passage that shares the query's words outranks one that does not.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]")
# fmt: off
WORDS = (
    "disc", "brake", "brakes", "pads", "rotor", "bleed", "tyre", "tyres", "pressure", "psi", "road",
    "gravel", "chain", "stretch", "replace", "the", "a", "for", "at", "is", "of", "and", "to", "new",
    "check", "lower", "run", "bikes", "yearly", "when",
)
# fmt: on
VOCAB = {token: i for i, token in enumerate((*SPECIALS, *WORDS))}


def build_tokenizer(path: Path) -> Path:
    """A WordLevel tokenizer over ``VOCAB`` with the BERT pair template, saved as ``path``."""
    tokenizer = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    # Saved with a fixed padding, as some published tokenizer.json files are; the loader must undo it.
    tokenizer.enable_padding(pad_id=VOCAB["[PAD]"], pad_token="[PAD]", length=64)
    path.parent.mkdir(parents=True, exist_ok=True)
    tokenizer.save(str(path))
    return path


def build_cross_encoder(
    path: Path,
    *,
    scale: float = 10.0,
    bias: float = 0.0,
    token_types: bool = True,
    flat_output: bool = False,
    outputs: int = 1,
    ids_name: str = "input_ids",
) -> Path:
    """The overlap cross-encoder of the module docstring as an ONNX file (opset 17).

    ``token_types=False`` leaves out the ``token_type_ids`` input; with no way to tell query from
    passage, its logit is ``scale * (word tokens / all tokens) + bias`` over the whole pair.
    ``flat_output`` gives shape ``(n,)`` instead of ``(n, 1)``; ``outputs`` and ``ids_name`` build the
    malformed graphs the loader must refuse.
    """
    size = len(VOCAB)
    word = np.array([0.0 if t in SPECIALS else 1.0 for t in VOCAB], dtype=np.float32)
    inits = [
        numpy_helper.from_array(np.diag(word).astype(np.float32), "embedding"),  # one-hot, specials zero
        numpy_helper.from_array(word, "is_word"),
        numpy_helper.from_array(np.full((size, outputs), scale, dtype=np.float32), "weight"),
        numpy_helper.from_array(np.array([bias], dtype=np.float32), "bias"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
    ]
    nodes = [
        helper.make_node("Gather", ["embedding", ids_name], ["emb"]),
        helper.make_node("Gather", ["is_word", ids_name], ["word"]),
        helper.make_node("Cast", ["attention_mask"], ["mask_f"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["mask_f", "word"], ["words"]),
    ]
    if token_types:
        inits.append(numpy_helper.from_array(np.array([1.0], dtype=np.float32), "one"))
        nodes += [
            helper.make_node("Cast", ["token_type_ids"], ["type_f"], to=TensorProto.FLOAT),
            helper.make_node("Mul", ["words", "type_f"], ["p_mask"]),
            helper.make_node("Sub", ["words", "p_mask"], ["q_mask"]),
            *_masked_sum("q_mask", "q_bag"),
            *_masked_sum("p_mask", "p_bag"),
            helper.make_node("ReduceSum", ["p_mask", "axis1"], ["p_count"], keepdims=1),
            helper.make_node("Max", ["p_count", "one"], ["p_div"]),
            helper.make_node("Div", ["p_bag", "p_div"], ["p_mean"]),
            helper.make_node("Mul", ["q_bag", "p_mean"], ["features"]),
        ]
    else:
        nodes += [
            *_masked_sum("words", "bag"),
            helper.make_node("ReduceSum", ["mask_f", "axis1"], ["count"], keepdims=1),
            helper.make_node("Div", ["bag", "count"], ["features"]),
        ]
    nodes += [
        helper.make_node("MatMul", ["features", "weight"], ["scaled"]),
        helper.make_node("Add", ["scaled", "bias"], ["logits2d" if flat_output else "logits"]),
    ]
    if flat_output:
        nodes.append(helper.make_node("Squeeze", ["logits2d", "axis1"], ["logits"]))
    names = [ids_name, "attention_mask", *(["token_type_ids"] if token_types else [])]
    graph = helper.make_graph(
        nodes,
        "tiny-cross-encoder",
        [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", "sequence"]) for n in names],
        [
            helper.make_tensor_value_info(
                "logits", TensorProto.FLOAT, ["batch"] if flat_output else ["batch", outputs]
            )
        ],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8  # what onnxruntime releases of the last few years all read
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))
    return path


def _masked_sum(mask: str, out: str) -> list[onnx.NodeProto]:
    """``out = sum over positions of emb * mask``: a bag of words, shape (batch, vocab)."""
    return [
        helper.make_node("Unsqueeze", [mask, "axis2"], [f"{mask}_3d"]),
        helper.make_node("Mul", ["emb", f"{mask}_3d"], [f"{mask}_emb"]),
        helper.make_node("ReduceSum", [f"{mask}_emb", "axis1"], [out], keepdims=0),
    ]


def build_model_dir(
    folder: Path, model_name: str = "model.onnx", *, bias: float = 0.0, token_types: bool = True
) -> Path:
    """A folder laid out like a downloaded model: ``model_name`` plus ``tokenizer.json``."""
    build_cross_encoder(folder / model_name, bias=bias, token_types=token_types)
    build_tokenizer(folder / "tokenizer.json")
    return folder


def expected_logit(query: str, passage: str, *, scale: float = 10.0, bias: float = 0.0) -> float:
    """The formula of the module docstring, for words in ``VOCAB`` (lower case, space separated)."""
    query_words, passage_words = query.lower().split(), passage.lower().split()
    overlap = sum(query_words.count(w) for w in passage_words)
    return scale * overlap / max(len(passage_words), 1) + bias
