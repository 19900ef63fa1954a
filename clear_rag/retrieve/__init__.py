"""Retrieval stages: each consumes and produces ``list[Candidate]`` in ``rank_order``."""

from __future__ import annotations

from clear_rag.retrieve.assemble import Assembled, Passage, assemble
from clear_rag.retrieve.fusion import minmax, rrf
from clear_rag.retrieve.rerank import RerankStage, sigmoid
from clear_rag.retrieve.stages import (
    ChunkRef,
    ChunkTable,
    KeywordRetriever,
    Retriever,
    SearchIndex,
    Stage,
    VectorRetriever,
    rank_order,
    run_concurrently,
)

__all__ = [
    "Assembled",
    "ChunkRef",
    "ChunkTable",
    "KeywordRetriever",
    "Passage",
    "RerankStage",
    "Retriever",
    "SearchIndex",
    "Stage",
    "VectorRetriever",
    "assemble",
    "minmax",
    "rank_order",
    "rrf",
    "run_concurrently",
    "sigmoid",
]
