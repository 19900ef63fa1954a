"""The support check's calibration, fitted on SciFact's rationale sentences (no torch needed).

The shipped cross-encoder was trained with a listwise loss, which fixes the differences between its
logits but not where 0 falls, so its logit alone says nothing about "supports or not". The support
check (``clear_rag.generate.support``) therefore reads ``sigmoid(a * logit + c * coverage + b)``, and
this module fits ``(a, c, b)``: a logistic regression over (claim, sentence) pairs of SciFact's test
claims (Wadden et al. 2020), whose rationale file marks the sentences of an abstract that support the
claim.

- **Pairs.** For each claim with a ``SUPPORT`` rationale: every sentence of its abstract (as
  ``sentence_spans`` cuts it), positive when it holds at least half of a rationale sentence (the 0.5
  rule of span coverage), and every sentence of one unrelated abstract (the next record's, when it is
  not judged for the claim), negative. Claims whose rationale ``CONTRADICT``s them are left out: a
  sentence that refutes a claim is neither support nor unrelated.
- **Fit.** Both classes weigh the same in all (each pair ``1 / (2 * class size)``), so the boundary
  ``p = 0.5`` is where a pair is as likely a rationale as not, whatever the share of positives; a
  small ridge (``RIDGE``) keeps the Newton steps finite on separable data.
- **Held out.** Claims split by the parity of their id: fitted on the even ones, measured on the odd
  ones, and the shipped calibration is the one measured (the odd claims never reach the fit).

Neither the claims nor these abstracts are the reranker's training data (it saw the train split's).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from clear_rag.errors import InputError
from clear_rag.eval import beir
from clear_rag.eval.metrics import covers
from clear_rag.generate.sentences import sentence_spans
from clear_rag.generate.support import Calibration
from clear_rag.generate.terms import content_terms, coverage, facts
from clear_rag.generate.verdicts import BOUNDARY, supports
from clear_rag.hashing import file_sha256
from clear_rag.index.analyze import Analyzer
from clear_rag.providers.base import Reranker, describe
from clear_rag.retrieve.stages import ChunkRef

RIDGE = 1e-3
NEWTON_STEPS = 50
_TERMS = Analyzer(stem=True)
Floats = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class Pair:
    """One (claim, sentence) pair: its claim's id, the two texts, and whether the sentence is a rationale."""

    query_id: str
    claim: str
    sentence: str
    positive: bool


def pairs(dataset: beir.BeirDataset, texts: dict[str, str]) -> list[Pair]:
    """Every pair the fit and its check read (see the module docstring)."""
    found = beir.rationales(dataset, texts)
    records = sorted((qid, r) for qid, r in found.items() if r.verdict == "support")
    out: list[Pair] = []
    for n, (qid, rationale) in enumerate(records):
        claim = dataset.queries.get(qid, "")
        if not claim:
            continue
        docs = dict.fromkeys(label.doc_id for label in rationale.labels)
        for doc_id in docs:
            text = texts[doc_id]
            labels = [label for label in rationale.labels if label.doc_id == doc_id]
            for start, end in sentence_spans(text):
                positive = any(covers(ChunkRef(doc_id, start, end), label) for label in labels)
                out.append(Pair(qid, claim, text[start:end], positive))
        other = records[(n + 1) % len(records)][1].labels[0].doc_id
        if other not in dataset.qrels.get(qid, {}) and other not in docs:
            text = texts[other]
            out += [Pair(qid, claim, text[s:e], False) for s, e in sentence_spans(text)]
    return out


def features(model: Reranker, found: Sequence[Pair]) -> Floats:
    """``(logit, coverage)`` per pair, the model scoring each claim's sentences in one call."""
    out = np.zeros((len(found), 2))
    by_claim: dict[str, list[int]] = {}
    for i, pair in enumerate(found):
        by_claim.setdefault(pair.claim, []).append(i)
    for claim, rows in by_claim.items():
        logits = model.score(claim, [found[i].sentence for i in rows])
        terms = content_terms(claim)
        for i, logit in zip(rows, np.asarray(logits, dtype=np.float64).tolist(), strict=True):
            out[i] = (logit, coverage(terms, set(_TERMS.terms(found[i].sentence))))
    return out


def fit(x: Floats, y: npt.NDArray[np.bool_]) -> Floats:
    """Class-balanced logistic regression by Newton's method: weights ``(a, c)`` of ``x``'s two columns
    and the bias ``b``, minimising ``sum_i w_i * logloss_i + RIDGE * |(a, c)|^2``."""
    if y.all() or not y.any():
        raise ValueError("the fit needs pairs of both classes")
    design = np.column_stack([x, np.ones(len(x))])
    weights = np.where(y, 0.5 / y.sum(), 0.5 / (~y).sum())
    ridge = np.diag([RIDGE, RIDGE, 0.0])
    theta = np.zeros(3)
    for _ in range(NEWTON_STEPS):
        p = 1.0 / (1.0 + np.exp(-design @ theta))
        gradient = design.T @ (weights * (p - y)) + 2 * ridge @ theta
        hessian = design.T @ (design * (weights * p * (1 - p))[:, None]) + 2 * ridge
        step = np.linalg.solve(hessian, gradient)
        theta -= step
        if np.abs(step).max() < 1e-10:
            break
    return theta


def auc(scores: Floats, y: npt.NDArray[np.bool_]) -> float:
    """The area under the ROC curve: the chance a positive outscores a negative, ties counting half
    (the Mann-Whitney U over the two classes' sizes)."""
    ranks = _average_ranks(scores)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if not n_pos or not n_neg:
        return float("nan")
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _average_ranks(values: Floats) -> Floats:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for value in np.unique(values):  # ties share their mean rank
        tied = values == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks


def held_out(calibration: Calibration, x: Floats, found: Sequence[Pair]) -> dict[str, Any]:
    """How the calibration decides the held-out pairs: AUCs of each feature and of the probability, and
    the precision, recall and balanced accuracy of ``supports`` (the boundary, numbers and names included)."""
    y = np.array([p.positive for p in found])
    probability = np.array([calibration.probability(a, c) for a, c in x])
    decided = np.array(
        [
            supports(p, [t for t in facts(pair.claim) if t not in set(_TERMS.terms(pair.sentence))])
            for p, pair in zip(probability, found, strict=True)
        ]
    )
    true_positive = int((decided & y).sum())
    recall = true_positive / int(y.sum())
    specificity = int((~decided & ~y).sum()) / int((~y).sum())
    return {
        "claims": len({p.query_id for p in found}),
        "pairs": len(found),
        "positives": int(y.sum()),
        "auc_logit": round(auc(x[:, 0], y), 4),
        "auc_coverage": round(auc(x[:, 1], y), 4),
        "auc_probability": round(auc(probability, y), 4),
        "precision": round(true_positive / int(decided.sum()), 4) if decided.any() else None,
        "recall": round(recall, 4),
        "balanced_accuracy": round((recall + specificity) / 2, 4),
    }


def calibrate(folder: Path, model: Reranker, *, command: str, log: Callable[[str], None]) -> dict[str, Any]:
    """Fit the calibration of ``model`` on the even claims of the SciFact test split in ``folder``, check
    it on the odd ones; the record ``clear-rag train support`` writes beside the model."""
    dataset = beir.load(folder, split="test")
    texts = {doc.id: doc.text for doc in beir.documents(dataset)}
    found = pairs(dataset, texts)
    log(f"{len(found)} (claim, sentence) pairs from {len({p.query_id for p in found})} claims; scoring ...")
    x = features(model, found)
    even = np.array([_even(p.query_id) for p in found])
    y = np.array([p.positive for p in found])
    if len(set(y[even].tolist())) < 2 or len(set(y[~even].tolist())) < 2:
        raise InputError(
            "has too few rationale sentences to fit and check a calibration (each half of the claims "
            "needs both rationales and other sentences)",
            path=str(folder / beir.RATIONALES),
            fix="Point --data at the BEIR SciFact folder with its test_rationale_spans.jsonl",
        )
    a, c, b = fit(x[even], y[even]).tolist()
    source = (
        f"fitted by `{command}` on SciFact test claims with even ids ({int(even.sum())} pairs), "
        f"checked on the odd ones; p >= {BOUNDARY} decides"
    )
    calibration = Calibration(round(a, 6), round(c, 6), round(b, 6), source)
    odd = [p for p, keep in zip(found, even, strict=True) if not keep]
    return {
        "name": "support calibration",
        "model": describe(model),
        **calibration.to_dict(),
        "fitted_on": {"split": "test", "claims": "even ids", "pairs": int(even.sum())},
        "held_out": held_out(calibration, x[~even], odd),
        "in_sample": held_out(calibration, x[even], [p for p, keep in zip(found, even, strict=True) if keep]),
        "data": {
            name: file_sha256(folder / name)
            for name in (beir.CORPUS, beir.QUERIES, "qrels/test.tsv", beir.RATIONALES)
        },
        "command": command,
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def _even(query_id: str) -> bool:
    """The half a claim falls in: its id's parity, or for a non-numeric id its digest's."""
    if query_id.isdigit():
        return int(query_id) % 2 == 0
    return hashlib.sha256(query_id.encode()).digest()[0] % 2 == 0
