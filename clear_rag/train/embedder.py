"""Contrastive fine-tuning of a mean-pooled BERT bi-encoder on claims and abstracts (needs torch).

Each step takes ``claims_per_step`` claims. Every claim is encoded as a query; its judged abstract and
``negatives`` of its mined hard negatives are encoded as documents, all mean-pooled over the attention
mask and L2-normalised, exactly as ``OnnxEmbedder`` serves them. With ``s(q, d) = cos(q, d) / tau``
each claim's loss is the softmax cross-entropy of its positive against every document of the step,

    L_i = -log( exp(s(q_i, d_i+)) / sum_d exp(s(q_i, d)) ),

so the other claims' positives and negatives are in-batch negatives (Henderson et al. 2017; Karpukhin
et al. 2020) and the mined ones are hard negatives; ``tau`` 0.05 is the scale 20 of
sentence-transformers' MultipleNegativesRankingLoss, under which all-MiniLM-L6-v2 was trained.
Everything random comes from ``seed``.
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
from clear_rag.train.cross_encoder import TrainReport, linear_schedule
from clear_rag.train.mining import Group, training_lists

Log = Callable[[str], None]


@dataclass(frozen=True, slots=True)
class EmbedderSettings:
    max_tokens: int = 128
    query_tokens: int = 32
    negatives: int = 3
    claims_per_step: int = 16
    temperature: float = 0.05
    learning_rate: float = 5e-5
    warmup: float = 0.1
    weight_decay: float = 0.01
    epochs: int = 1
    seed: int = 17
    threads: int = 2  # in the cache key, as the thread count can move floats
    max_steps: int = 0
    # how the export is made int8: fused as the shipped minilm-q8 is, then this variant of
    # clear_rag.train.onnx_export.QUANTISATIONS (plain per-channel kept 0.968 mean cosine to fp32)
    quantisation: str = "per_channel_layer0_ffn_out_fp32"


def encode(tokenizer: Any, texts: Sequence[str], max_tokens: int) -> dict[str, Any]:
    import torch  # type: ignore[import-not-found, unused-ignore]

    tokenizer.enable_truncation(max_tokens)
    tokenizer.no_padding()
    encodings = tokenizer.encode_batch(list(texts))
    width = max(len(e.ids) for e in encodings)
    ids = torch.zeros((len(texts), width), dtype=torch.long)
    mask = torch.zeros_like(ids)
    for row, e in enumerate(encodings):
        ids[row, : len(e.ids)] = torch.tensor(e.ids)
        mask[row, : len(e.ids)] = 1
    return {"input_ids": ids, "attention_mask": mask, "token_type_ids": torch.zeros_like(ids)}


def pooled(model: Any, batch: Mapping[str, Any]) -> Any:
    """Mean of the token vectors the mask keeps, L2-normalised: ``OnnxEmbedder``'s pooling in torch."""
    import torch  # type: ignore[import-not-found, unused-ignore]

    hidden = model(**batch).last_hidden_state
    weights = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
    mean = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
    return torch.nn.functional.normalize(mean, dim=-1)


def train(
    base: Path | Any,
    tokenizer_path: Path,
    groups: Sequence[Group],
    texts: Mapping[str, str],
    settings: EmbedderSettings,
    *,
    log: Log | None = None,
) -> tuple[Any, TrainReport]:
    """Fine-tune the ``BertModel`` in folder ``base`` (or a random one built from a ``BertConfig``)."""
    require_torch()
    import torch  # type: ignore[import-not-found, unused-ignore]
    from tokenizers import Tokenizer
    from transformers import AutoModel, BertModel  # type: ignore[import-not-found, unused-ignore]

    torch.manual_seed(settings.seed)
    torch.set_num_threads(settings.threads)
    model = AutoModel.from_pretrained(str(base)) if isinstance(base, Path) else BertModel(base)
    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    items = training_lists(
        groups, texts, seed=settings.seed, negatives=settings.negatives, epochs=settings.epochs
    )
    total = math.ceil(len(items) / settings.claims_per_step)
    if settings.max_steps:
        total = min(total, settings.max_steps)
    warmup = int(settings.warmup * total)
    optimiser = torch.optim.AdamW(
        model.parameters(), lr=settings.learning_rate, weight_decay=settings.weight_decay
    )
    schedule = torch.optim.lr_scheduler.LambdaLR(optimiser, lambda s: linear_schedule(s, total, warmup))
    model.train()
    losses: list[float] = []
    pairs = 0
    started = time.perf_counter()
    per = settings.negatives + 1
    for step in range(total):
        chunk = items[step * settings.claims_per_step : (step + 1) * settings.claims_per_step]
        queries = pooled(model, encode(tokenizer, [q for q, _ in chunk], settings.query_tokens))
        docs = pooled(model, encode(tokenizer, [d for _, ds in chunk for d in ds], settings.max_tokens))
        scores = queries @ docs.T / settings.temperature
        target = torch.arange(len(chunk)) * per  # each claim's positive is first of its documents
        loss: Any = torch.nn.functional.cross_entropy(scores, target)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimiser.step()
        schedule.step()
        optimiser.zero_grad()
        losses.append(float(loss.detach()))
        pairs += len(chunk) * per
        if log is not None and (step + 1) % 5 == 0:
            rate = pairs / (time.perf_counter() - started)
            log(f"step {step + 1}/{total}  loss {float(np.mean(losses[-5:])):.4f}  {rate:.1f} documents/s")
    model.eval()
    return model, TrainReport(total, pairs, tuple(losses), time.perf_counter() - started)
