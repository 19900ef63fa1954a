"""``Pipeline.retrieve``: every retrieval stage of one question, each reported the moment it finishes.

first-stage searches (every retriever under every phrasing, concurrently) -> per-retriever fusion
across phrasings -> fusion across retrievers (RRF or min-max) -> rerank (optional) -> top k -> context
assembly. A stage is reported to ``on_stage`` as soon as it ends: keyword search before vector search
when keyword search is faster, a retriever's fusion across phrasings as soon as its own searches are
in, without waiting for the other retriever (``clear_rag.retrieve.first_stage``). The returned
``Retrieval`` lists the same stages in one fixed order, so two runs over the same input give the same
stages whatever finished first. Building the trace around it (the question, the answer, the models) is
the planner's work (``clear_rag.generate.planner``); this module searches indexes that come in ready.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.providers.base import Embedder, Reranker, describe
from clear_rag.retrieve.assemble import Assembled, assemble
from clear_rag.retrieve.counts import ChunkTokens
from clear_rag.retrieve.first_stage import StageCallback, first_searches, first_stages, timed_stage
from clear_rag.retrieve.fusion import minmax, rrf
from clear_rag.retrieve.rerank import RerankStage
from clear_rag.retrieve.stages import (
    ChunkRef,
    KeywordRetriever,
    Retriever,
    SearchIndex,
    Stage,
    VectorRetriever,
    VectorSearchIndex,
)
from clear_rag.tokens import TokenCount, TokenCounter
from clear_rag.types import Candidate, StageResult


def final_ranking(stages: Sequence[StageResult]) -> tuple[Candidate, ...]:
    """The ranking a question ended with: its last stage before context assembly (what is scored)."""
    ranked = [s for s in stages if s.name != "context"]
    return ranked[-1].candidates if ranked else ()


@dataclass(frozen=True, slots=True)
class Retrieval:
    """Every stage of one question in a fixed order (the context stage last), and the packed context."""

    stages: tuple[StageResult, ...]
    packed: Assembled

    @property
    def ranked(self) -> tuple[Candidate, ...]:
        return final_ranking(self.stages)


class DocumentTexts(Protocol):
    """Where a pipeline reads documents' texts: the generation of the store its chunk table and
    indexes were read from (``clear_rag.store.Snapshot``), for as long as the pipeline is used."""

    def document_text(self, doc_id: str) -> str: ...

    def document_texts(self, doc_ids: Iterable[str]) -> dict[str, str]: ...

    def close(self) -> None: ...


class Pipeline:
    """One configured retrieval pipeline over already-built indexes.

    ``texts`` gives a document's canonical text by id, from the generation of the store ``table``
    and the indexes describe; chunk texts are slices of it. ``table`` holds each chunk's own token
    count where the store has it, counted by the tokenizer ``counted_by`` names (the context stage
    reads them rather than tokenise, ``clear_rag.retrieve.counts``). Building a pipeline reads nothing and
    builds nothing: indexes come in ready (``clear_rag.session.open_pipeline`` loads them and checks
    them against the snapshot of the store it reads). ``close()`` closes the snapshot's connection.
    """

    def __init__(
        self,
        config: PipelineConfig,
        *,
        table: Mapping[str, ChunkRef],
        texts: DocumentTexts,
        tokenizer: TokenCounter,
        keyword: SearchIndex | None = None,
        vectors: VectorSearchIndex | None = None,
        embedder: Embedder | None = None,
        reranker: Reranker | None = None,
        counted_by: str | None = None,
    ) -> None:
        self.config = config
        self._table = table
        self._texts = texts
        self._chunk_tokens = ChunkTokens(table, self.chunk_text, counted_by)
        self.tokenizer = tokenizer
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
        # the stages after fusion, in the order they run: built from the config, run as a list
        self.later: list[Stage] = []
        if config.rerank:
            if reranker is None:
                raise _missing("rerank", True, "a reranker model")
            self.later.append(
                RerankStage(
                    reranker,
                    self.chunk_text,
                    shortlist=config.shortlist,
                    rrf_k=config.rrf_k if config.rerank_fusion == "rrf" else None,
                )
            )
        models = {
            "embedder": describe(embedder) if embedder is not None and vectors is not None else "",
            "reranker": describe(reranker) if reranker is not None and config.rerank else "",
            "tokenizer": tokenizer.name,
        }
        self.models = {role: name for role, name in models.items() if name}

    def chunk_text(self, chunk_id: str) -> str:
        ref = self._table[chunk_id]
        return self._texts.document_text(ref.doc_id)[ref.start : ref.end]

    def document_text(self, doc_id: str) -> str:
        """A document's text as this pipeline's chunks and indexes know it (citations are shown in it)."""
        return self._texts.document_text(doc_id)

    def close(self) -> None:
        self._texts.close()

    def retrieve(
        self,
        question: str,
        *,
        phrasings: Sequence[str] = (),
        hypothetical: str | None = None,
        on_stage: StageCallback | None = None,
        tokenizer: TokenCount | None = None,
    ) -> Retrieval:
        """Run every stage for ``question``, reporting each to ``on_stage`` as it finishes.

        ``phrasings`` are other wordings of the question (multi-query expansion): every retriever
        searches each, and each retriever's rankings are fused by RRF before the retrievers are
        fused, so there is still one keyword and one vector ranking to compare. ``hypothetical`` is
        a HyDE passage: embedded as a document, its vector searches beside the query's.
        ``tokenizer`` counts the context budget (the chat model's own, where it has one); by
        default the pipeline's.
        """
        config = self.config
        report = on_stage if on_stage is not None else _ignore
        queries = list(dict.fromkeys([question, *phrasings]))
        stages, per_retriever = first_stages(self._retrievers, queries, hypothetical, config.rrf_k, report)
        current = stages[-1]
        if len(per_retriever) > 1:
            current = timed_stage(
                "fusion",
                lambda: _fuse(config, {name: list(r.candidates) for name, r in per_retriever.items()}),
                detail=_fusion_detail(config, per_retriever),
            )
            stages.append(current)
            report(current)
        else:
            current = next(iter(per_retriever.values()))
        for later in self.later:
            current = _later_stage(later, question, current)
            stages.append(current)
            report(current)
        context, packed = self._assemble(current, tokenizer or self.tokenizer)
        stages.append(context)
        report(context)
        return Retrieval(tuple(stages), packed)

    def _assemble(self, current: StageResult, tokenizer: TokenCount) -> tuple[StageResult, Assembled]:
        top = list(current.candidates[: self.config.top_k])
        started = time.perf_counter()
        packed = assemble(
            top,
            doc_text=self._texts.document_texts([c.doc_id for c in top]),
            budget_tokens=self.config.budget_tokens,
            tokenizer=tokenizer,
            chunk_tokens=self._chunk_tokens.counter(tokenizer),
        )
        kept = {cid for passage in packed.passages for cid in passage.chunk_ids}
        context = tuple(c for c in top if c.chunk_id in kept)
        stage = StageResult(
            "context",
            context,
            (time.perf_counter() - started) * 1000,
            {
                "input": current.name,
                "top_k": self.config.top_k,
                "tokens": packed.token_count,
                "budget_tokens": packed.budget_tokens,
                "tokenizer": tokenizer.name,
                "passages": len(packed.passages),
                "dropped": [list(pair) for pair in packed.dropped],
                # its scores are its input's, shown as the input shows them (a reranker's through a sigmoid)
                **({"display": current.detail["display"]} if "display" in current.detail else {}),
                **_reranked_kept(current, context),
            },
        )
        return stage, packed

    def plan(
        self, question: str, *, phrasings: Sequence[str] = (), hypothetical: str | None = None
    ) -> list[dict[str, Any]]:
        """The stages ``retrieve`` will report for these arguments, before it runs: each one's name,
        the names it is built from, and a first-stage search's retriever. Named by the code that
        names the stages, so a page can lay out the whole graph (and show what is still running)
        from the query event, and lay it out the same way when a trace is replayed."""
        queries = list(dict.fromkeys([question, *phrasings]))
        plan: list[dict[str, Any]] = []
        owners: dict[str, list[str]] = {}
        for owner, name, _search, _text, _detail in first_searches(self._retrievers, queries, hypothetical):
            plan.append({"name": name, "inputs": [], "retriever": owner})
            owners.setdefault(owner, []).append(name)
        current = ""
        for owner, names in owners.items():
            if len(names) > 1:
                plan.append({"name": owner, "inputs": names})
            current = owner if len(names) > 1 else names[0]
        if len(owners) > 1:
            plan.append(
                {"name": "fusion", "inputs": [n if len(ns) > 1 else ns[0] for n, ns in owners.items()]}
            )
            current = "fusion"
        for later in self.later:
            plan.append({"name": later.name, "inputs": [current]})
            current = later.name
        plan.append({"name": "context", "inputs": [current]})
        return plan


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


def _later_stage(stage: Stage, question: str, before: StageResult) -> StageResult:
    """One later stage run on the ranking of the stage ``before`` it, timed, with its detail."""
    detail: dict[str, Any] = {"input": before.name, **stage.detail()}
    ranked = list(before.candidates)
    return timed_stage(
        stage.name, lambda: stage(question, ranked, source=before.name, detail=detail), detail=detail
    )


def _reranked_kept(current: StageResult, context: Sequence[Candidate]) -> dict[str, int]:
    """``reranked`` for the context built on a rerank stage: how many of its candidates the reranker
    re-scored. The context keeps its input's order, so they are its first that many, as in the rerank
    stage, and the tail the reranker kept unscored follows them."""
    if "reranked" not in current.detail:
        return {}
    scored = {c.chunk_id for rank, c in enumerate(current.candidates, start=1) if current.rescored(rank)}
    return {"reranked": sum(c.chunk_id in scored for c in context)}


def _ignore(stage: StageResult) -> None:
    """The default stage callback: nobody is watching."""


def _missing(key: str, value: object, what: str) -> ConfigError:
    return ConfigError(
        f"needs {what}, and none was given",
        field=key,
        value=value,
        fix="Provide it, or change the setting",
    )
