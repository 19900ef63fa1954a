"""``retrieve(question) -> Trace``: every stage of one question, in order, with its timings.

keyword || vector (concurrently) -> fusion (RRF or min-max) -> rerank (optional) -> top k ->
context assembly. Each stage's output is kept in the trace, so the page and ``clear-rag replay`` can
show how every candidate moved, and the evaluation can be recomputed without any model.
"""

from __future__ import annotations

import functools
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.providers.base import Embedder, Reranker, describe
from clear_rag.retrieve.assemble import Assembled, assemble
from clear_rag.retrieve.fusion import minmax, rrf
from clear_rag.retrieve.rerank import RerankStage
from clear_rag.retrieve.stages import (
    ChunkRef,
    KeywordRetriever,
    Retriever,
    SearchIndex,
    VectorRetriever,
    VectorSearchIndex,
    run_jobs,
)
from clear_rag.tokens import TokenCounter
from clear_rag.types import Candidate, StageResult, Trace


def new_trace_id() -> str:
    """Sortable by time, unique by a random suffix: ``20261129-194501-3fa2c1``."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class Pipeline:
    """One configured retrieval pipeline over already-built indexes.

    ``doc_text`` gives a document's canonical text by id (the store's, usually); chunk texts are
    slices of it. Building a pipeline reads nothing and builds nothing: indexes come in ready.
    """

    def __init__(
        self,
        config: PipelineConfig,
        *,
        table: Mapping[str, ChunkRef],
        doc_text: Callable[[str], str],
        tokenizer: TokenCounter,
        keyword: SearchIndex | None = None,
        vectors: VectorSearchIndex | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
    ) -> None:
        self.config = config
        self._table = table
        self._doc_text = functools.lru_cache(maxsize=4096)(doc_text)
        self._tokenizer = tokenizer
        self._retrievers: list[Retriever] = []
        for name in config.retrievers:
            if name == "keyword":
                if keyword is None:
                    raise _missing("retrievers", "keyword", "a keyword index")
                self._retrievers.append(KeywordRetriever(keyword, table, config.depth))
            else:
                if vectors is None or embedder is None:
                    raise _missing("retrievers", "vector", "a vector index and an embedder")
                self._retrievers.append(VectorRetriever(vectors, embedder, table, config.depth))
        self._rerank: RerankStage | None = None
        if config.rerank:
            if reranker is None:
                raise _missing("rerank", True, "a reranker model")
            self._rerank = RerankStage(reranker, self.chunk_text, shortlist=config.shortlist)
        models = {
            "embedder": describe(embedder) if embedder is not None and vectors is not None else "",
            "reranker": describe(reranker) if reranker is not None and config.rerank else "",
            "tokenizer": tokenizer.name,
        }
        self.models = {role: name for role, name in models.items() if name}

    def chunk_text(self, chunk_id: str) -> str:
        ref = self._table[chunk_id]
        return self._doc_text(ref.doc_id)[ref.start : ref.end]

    def retrieve(
        self, question: str, *, phrasings: Sequence[str] = (), hypothetical: str | None = None
    ) -> tuple[Trace, Assembled]:
        """Run every stage for ``question``; the trace and the assembled context.

        ``phrasings`` are other wordings of the question (multi-query expansion): every retriever
        searches each, and each retriever's rankings are fused by RRF before the retrievers are
        fused, so there is still one keyword and one vector ranking to compare. ``hypothetical`` is
        a HyDE passage: embedded as a document, its vector searches beside the query's.
        """
        config = self.config
        queries = list(dict.fromkeys([question, *phrasings]))
        stages, per_retriever = self._first_stages(queries, hypothetical)
        current = stages[-1]
        if len(per_retriever) > 1:
            current = _timed_stage(
                "fusion",
                lambda: _fuse(config, {name: list(r.candidates) for name, r in per_retriever.items()}),
                detail=_fusion_detail(config, per_retriever),
            )
            stages.append(current)
        if self._rerank is not None:
            rerank = self._rerank
            head = list(current.candidates)
            current = _timed_stage(
                "rerank",
                lambda: rerank(question, head),
                detail={
                    "input": current.name,
                    "shortlist": config.shortlist,
                    "model": self.models.get("reranker", ""),
                },
            )
            stages.append(current)
        top = list(current.candidates[: config.top_k])
        started = time.perf_counter()
        packed = assemble(
            top, doc_text=self._doc_text, budget_tokens=config.budget_tokens, tokenizer=self._tokenizer
        )
        kept = {cid for passage in packed.passages for cid in passage.chunk_ids}
        stages.append(
            StageResult(
                "context",
                tuple(c for c in top if c.chunk_id in kept),
                (time.perf_counter() - started) * 1000,
                {
                    "input": current.name,
                    "top_k": config.top_k,
                    "tokens": packed.token_count,
                    "budget_tokens": packed.budget_tokens,
                    "passages": len(packed.passages),
                    "dropped": [list(pair) for pair in packed.dropped],
                },
            )
        )
        trace = Trace(
            id=new_trace_id(),
            query=question,
            phrasings=tuple(queries),
            stages=tuple(stages),
            context=context_text(packed),
            config={**config.to_dict(), "hash": config.hash()},
            models=dict(self.models),
            created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
        )
        return trace, packed

    def _first_stages(
        self, queries: Sequence[str], hypothetical: str | None
    ) -> tuple[list[StageResult], dict[str, StageResult]]:
        """Every (retriever, phrasing) search at once, then one ranking per retriever."""
        jobs: dict[str, Callable[[], list[Candidate]]] = {}
        owners: dict[str, list[str]] = {}
        for retriever in self._retrievers:
            searches: dict[str, Callable[[], list[Candidate]]] = {
                f"q{n}": functools.partial(retriever, query) for n, query in enumerate(queries)
            }
            if hypothetical is not None and isinstance(retriever, VectorRetriever):
                searches["hyde"] = functools.partial(retriever.search_document, hypothetical)
            # a retriever with one search keeps its own name; with several, each is named apart
            # so the fused ranking can take the retriever's name without a clash
            for suffix, search in searches.items():
                name = retriever.name if len(searches) == 1 else f"{retriever.name}·{suffix}"
                jobs[name] = search
                owners.setdefault(retriever.name, []).append(name)
        searched = run_jobs(jobs)
        stages = list(searched.values())
        for stage in stages:
            if stage.name.endswith("·hyde"):
                stages[stages.index(stage)] = replace(
                    stage, detail={**stage.detail, "hypothetical": hypothetical}
                )
        per_retriever: dict[str, StageResult] = {}
        for owner, names in owners.items():
            if len(names) == 1:
                per_retriever[owner] = searched[names[0]]
                continue
            lists = {n: list(searched[n].candidates) for n in names}
            fused = _timed_stage(
                owner,
                functools.partial(rrf, lists, k=self.config.rrf_k),
                detail={"method": "rrf", "inputs": ",".join(names), "k": self.config.rrf_k},
            )
            stages.append(fused)
            per_retriever[owner] = fused
        return stages, per_retriever


def context_text(packed: Assembled) -> str:
    """The passages as the prompt will show them, numbered for citation."""
    return "\n\n".join(f"[{n}] ({p.doc_id})\n{p.text}" for n, p in enumerate(packed.passages, start=1))


def _fuse(config: PipelineConfig, ranked: Mapping[str, Sequence[Candidate]]) -> list[Candidate]:
    if config.fusion == "rrf":
        return rrf(ranked, k=config.rrf_k)
    return minmax(ranked, config.weights)


def _fusion_detail(config: PipelineConfig, first: Mapping[str, StageResult]) -> dict[str, Any]:
    detail: dict[str, Any] = {"method": config.fusion, "inputs": ",".join(first)}
    if config.fusion == "rrf":
        detail["k"] = config.rrf_k
    else:
        detail["weights"] = {name: config.weights.get(name, 1.0) for name in first}
    return detail


def _timed_stage(name: str, run: Callable[[], list[Candidate]], *, detail: dict[str, Any]) -> StageResult:
    started = time.perf_counter()
    candidates = run()
    return StageResult(name, tuple(candidates), (time.perf_counter() - started) * 1000, detail)


def _missing(key: str, value: object, what: str) -> ConfigError:
    return ConfigError(
        f"needs {what}, and none was given",
        field=key,
        value=value,
        fix="Provide it, or change the setting",
    )
