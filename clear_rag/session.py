"""Opening a store for questions: indexes brought up to date, then a ready ``Pipeline``."""

from __future__ import annotations

from collections.abc import Callable

from clear_rag.config import PipelineConfig
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.sync import SyncReport, keyword_index, vector_index
from clear_rag.index.vectors import VectorIndex
from clear_rag.providers.base import Embedder, Reranker
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.retrieve.stages import ChunkRef
from clear_rag.store.sqlite import Store
from clear_rag.tokens import TokenCounter, default_tokenizer


def open_indexes(
    store: Store,
    config: PipelineConfig,
    embedder: Embedder | None,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[BM25Index | None, VectorIndex | None, list[SyncReport]]:
    """The indexes ``config`` uses, each brought up to date: only changed documents are re-indexed."""
    keyword = vectors = None
    reports = []
    if "keyword" in config.retrievers:
        keyword, report = keyword_index(
            store, stem=config.stem, k1=config.bm25_k1, b=config.bm25_b, idf=config.idf
        )
        reports.append(report)
    if "vector" in config.retrievers and embedder is not None:
        vectors, report = vector_index(store, embedder, progress=progress)
        reports.append(report)
    return keyword, vectors, reports


def open_pipeline(
    store: Store,
    config: PipelineConfig,
    *,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    tokenizer: TokenCounter | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[Pipeline, list[SyncReport]]:
    keyword, vectors, reports = open_indexes(store, config, embedder, progress=progress)
    table = {cid: ChunkRef(doc, start, end) for cid, doc, start, end in store.chunk_spans()}
    pipeline = Pipeline(
        config,
        table=table,
        doc_text=store.document_text,
        tokenizer=tokenizer if tokenizer is not None else default_tokenizer(),
        keyword=keyword,
        vectors=vectors,
        embedder=embedder,
        reranker=reranker,
    )
    return pipeline, reports
