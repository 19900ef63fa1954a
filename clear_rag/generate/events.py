"""The events the question path reports as it goes, as the chat endpoint sends them (design.md, "Events
on the wire"): their kinds, a stage as the wire carries it, and what is known of the support before the
answer. A stored trace replayed sends the same shapes (``clear_rag.web.replay``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from clear_rag.retrieve.rerank import sigmoid
from clear_rag.trace import candidate_dict
from clear_rag.types import StageResult, Support

EventKind = Literal["query", "stage", "context", "token", "citations", "support", "done", "error"]


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)


EventSink = Callable[[Event], None]


def stage_event(stage: StageResult) -> dict[str, Any]:
    """A stage as the wire carries it: every candidate with its rank, score, display score (a
    reranker's logit through a sigmoid, other scores as they are) and per-source contributions.
    The tail a rerank stage kept below the candidates it re-scored (``StageResult.rescored``) has no
    logit to show: its display score is ``None`` where the stage shows logits through a sigmoid."""
    logits = stage.detail.get("display") == "sigmoid"
    candidates = []
    for rank, cand in enumerate(stage.candidates, start=1):
        item = candidate_dict(cand)
        item["rank"] = rank
        if not logits:
            item["display_score"] = cand.score
        else:
            item["display_score"] = sigmoid(cand.score) if stage.rescored(rank) else None
        candidates.append(item)
    return {
        "name": stage.name,
        "elapsed_ms": stage.elapsed_ms,
        "detail": dict(stage.detail),
        "candidates": candidates,
    }


def retrieval_dict(support: Support) -> dict[str, Any]:
    """What is known of the support before the answer: the ``context`` event's ``retrieval``."""
    keys = ("answers", "outside", "weak", "weak_reason", "model", "calibration")
    data = dataclasses.asdict(support)
    return {key: data[key] for key in keys}
