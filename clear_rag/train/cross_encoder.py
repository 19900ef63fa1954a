"""Fine-tuning a BERT encoder as a cross-encoder reranker with a listwise softmax loss (needs torch).

Each step takes ``groups_per_step`` claims; each claim contributes one judged abstract and its mined
hard negatives, read together with the claim as ``[CLS] claim [SEP] abstract [SEP]`` and scored by a
single-logit head (``AutoModelForSequenceClassification(num_labels=1)``, the head sentence-transformers'
cross-encoders use). The loss is the softmax cross-entropy of the positive within its group,

    L = -log( exp(s_pos) / (exp(s_pos) + sum_j exp(s_neg_j)) ),

the listwise form of the contrastive loss used for BERT rerankers (Gao et al. 2021, "Rethink Training
of BERT Rerankers in Multi-Stage Retrieval Pipelines", their LCE loss). AdamW with linear warm-up and
linear decay (Devlin et al. 2019). Tokenisation is the ``tokenizers`` file the ONNX model ships with,
truncated longest-first exactly as ``OnnxCrossEncoder`` does, so training and serving read the same
tokens. Everything random (head initialisation, dropout, claim order, which positive of a claim with
several) comes from ``seed``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from clear_rag.train import require_torch
from clear_rag.train.mining import Group, training_lists

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class CrossEncoderSettings:
    """What a training run is; every field is in the cache key and the manifest."""

    max_tokens: int = 128
    negatives: int = 3
    groups_per_step: int = 8
    learning_rate: float = 1e-4
    head_learning_rate: float = 1e-3
    warmup: float = 0.1
    weight_decay: float = 0.01
    # Three passes over the claims. The first model trained here made one (102 steps): its listwise
    # loss was still falling at the end, and it ranked its own training claims no better than the
    # hybrid retrieval it re-scored (`clear-rag beir --split train`, results/beir-scifact-train.json at
    # the commit that shipped it): under-fitted, with two thirds of the 30-minute budget unspent.
    epochs: int = 3
    seed: int = 17
    threads: int = 2
    max_steps: int = 0  # 0: every group once per epoch (809 claims in 102 steps of 8)


@dataclass(frozen=True, slots=True)
class TrainReport:
    steps: int
    pairs: int
    losses: tuple[float, ...]
    seconds: float

    def summary(self, parts: int = 10) -> list[dict[str, float]]:
        """The mean loss over each tenth of the run (first and last step of each part, inclusive)."""
        n = len(self.losses)
        out = []
        for i in range(min(parts, n)):
            lo, hi = i * n // min(parts, n), (i + 1) * n // min(parts, n)
            out.append(
                {
                    "from_step": lo + 1,
                    "to_step": hi,
                    "mean_loss": round(float(np.mean(self.losses[lo:hi])), 4),
                }
            )
        return out


def encode_pairs(tokenizer: Any, pairs: Sequence[tuple[str, str]], max_tokens: int) -> dict[str, Any]:
    """Pad a batch of (query, passage) pairs into ``input_ids``, ``attention_mask``, ``token_type_ids``."""
    import torch  # type: ignore[import-not-found, unused-ignore]

    tokenizer.enable_truncation(max_tokens, strategy="longest_first")
    tokenizer.no_padding()
    encodings = tokenizer.encode_batch(list(pairs))
    width = max(len(e.ids) for e in encodings)
    ids = torch.zeros((len(pairs), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    types = torch.zeros_like(ids)
    for row, e in enumerate(encodings):
        n = len(e.ids)
        ids[row, :n] = torch.tensor(e.ids)
        mask[row, :n] = 1
        types[row, :n] = torch.tensor(e.type_ids)
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}


def listwise_loss(logits: Any, group_size: int) -> Any:
    """Softmax cross-entropy with the positive first in each group of ``group_size`` logits."""
    import torch  # type: ignore[import-not-found, unused-ignore]

    scores = logits.reshape(-1, group_size)
    target = torch.zeros(scores.shape[0], dtype=torch.long)
    return torch.nn.functional.cross_entropy(scores, target)


def linear_schedule(step: int, total: int, warmup: int) -> float:
    """The learning-rate factor: ``step / warmup`` rising, then ``(total - step) / (total - warmup)``."""
    if step < warmup:
        return (step + 1) / max(warmup, 1)
    return max(0.0, (total - step) / max(total - warmup, 1))


HEAD = ("classifier.", "bert.pooler.")  # new or barely trained: these start at head_learning_rate


def identity_pooler(model: Any) -> None:
    """Start the pooler as ``tanh(h_CLS)``: weight = identity, bias = 0.

    all-MiniLM-L6-v2 was trained with mean pooling, and its checkpoint's pooler is close to zero
    (weights of std 0.009), so the pooled vector, and every gradient that reaches the encoder through
    it, starts about a hundred times smaller than the hidden states. The first run here (head and
    encoder at the encoder's rate) sat at ln 2 for 25 steps. Identity passes the [CLS] state through.
    """
    import torch  # type: ignore[import-not-found, unused-ignore]

    pooler = getattr(getattr(model, "bert", None), "pooler", None)
    if pooler is None:
        return
    with torch.no_grad():
        pooler.dense.weight.copy_(torch.eye(pooler.dense.weight.shape[0]))
        pooler.dense.bias.zero_()


def parameter_groups(model: Any, settings: CrossEncoderSettings) -> list[dict[str, Any]]:
    """AdamW groups: no weight decay on biases and LayerNorm; the head at its own learning rate.

    The head (a fresh classifier of std 0.02 and the pooler) is new to this task; at the encoder's
    rate Adam moves each of its weights by about 1e-4 a step, and a run at 5e-5 sat at ln 2 for 25
    steps. The head's larger rate (discriminative fine-tuning, Howard and Ruder 2018, ULMFiT) lets the
    logits spread within the warm-up.
    """
    groups: list[dict[str, Any]] = []
    for head in (False, True):
        for decays in (True, False):
            params = [
                p
                for n, p in model.named_parameters()
                if n.startswith(HEAD) == head and (n.endswith("bias") or "LayerNorm" in n) != decays
            ]
            rate = settings.head_learning_rate if head else settings.learning_rate
            decay = settings.weight_decay if decays else 0.0
            groups.append({"params": params, "lr": rate, "weight_decay": decay})
    return groups


def train(
    base: Path | Any,
    tokenizer_path: Path,
    groups: Sequence[Group],
    texts: Mapping[str, str],
    settings: CrossEncoderSettings,
    *,
    log: Log | None = None,
) -> tuple[Any, TrainReport]:
    """Fine-tune the BERT weights in folder ``base`` (or a ``BertConfig``, randomly initialised: the
    tests' tiny model) as a cross-encoder; the trained torch model and what the run did."""
    require_torch()
    import torch  # type: ignore[import-not-found, unused-ignore]
    from tokenizers import Tokenizer
    from transformers import AutoModelForSequenceClassification, BertForSequenceClassification  # type: ignore[import-not-found, unused-ignore]

    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    if isinstance(base, Path):
        model = AutoModelForSequenceClassification.from_pretrained(str(base), num_labels=1)
    else:
        model = BertForSequenceClassification(base)
    identity_pooler(model)
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    lists = training_lists(
        groups, texts, seed=settings.seed, negatives=settings.negatives, epochs=settings.epochs
    )
    per_step = settings.groups_per_step
    total = math.ceil(len(lists) / per_step)
    if settings.max_steps:
        total = min(total, settings.max_steps)
    warmup = int(settings.warmup * total)
    optimiser = torch.optim.AdamW(parameter_groups(model, settings), lr=settings.learning_rate)
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: linear_schedule(s, total, warmup))
    model.train()
    losses: list[float] = []
    pairs = 0
    started = time.perf_counter()
    size = settings.negatives + 1
    for step in range(total):
        chunk = lists[step * per_step : (step + 1) * per_step]
        batch = encode_pairs(tokenizer, [(q, p) for q, ps in chunk for p in ps], settings.max_tokens)
        loss = listwise_loss(model(**batch).logits, size)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(float(loss.detach()))
        pairs += len(chunk) * size
        if log is not None and (step + 1) % 5 == 0:
            rate = pairs / (time.perf_counter() - started)
            recent = float(np.mean(losses[-5:]))
            log(f"step {step + 1}/{total}  loss {recent:.4f}  {rate:.1f} pairs/s")
    model.eval()
    return model, TrainReport(total, pairs, tuple(losses), time.perf_counter() - started)
