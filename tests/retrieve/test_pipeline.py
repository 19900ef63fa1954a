"""The whole retrieval path on the fake providers, over a real store and real indexes."""

from __future__ import annotations

from pathlib import Path

import pytest

from clear_rag.chunk.base import Chunker
from clear_rag.config import PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.ingest import ingest
from clear_rag.providers.fake import HashEmbedder, LexicalReranker
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.session import open_pipeline
from clear_rag.store import Store
from clear_rag.tokens import RegexTokenizer
from clear_rag.trace import from_json, to_json, without_timings


@pytest.fixture
def store(tmp_path: Path, corpus: Path, chunker: Chunker) -> Store:
    opened = Store(tmp_path / "s", root=tmp_path)
    ingest(opened, [corpus], chunker)
    return opened


def _pipeline(store: Store, **changes: object) -> Pipeline:
    config = PipelineConfig(**changes)  # type: ignore[arg-type]
    pipeline, _ = open_pipeline(
        store, config, embedder=HashEmbedder(dim=64), reranker=LexicalReranker(), tokenizer=RegexTokenizer()
    )
    return pipeline


def test_hybrid_stages_in_order_with_rrf_contributions(store: Store) -> None:
    trace, packed = _pipeline(store).retrieve("when do disc brake pads need replacing")
    assert [s.name for s in trace.stages] == ["keyword", "vector", "fusion", "context"]
    keyword, vector, fusion, context = trace.stages
    best = fusion.candidates[0]
    assert best.doc_id == "docs/a.md"
    ranks = {name: c.rank for name, c in best.sources.items()}
    assert best.score == pytest.approx(sum(1 / (60 + r) for r in ranks.values()))
    assert keyword.candidates[ranks["keyword"] - 1].chunk_id == best.chunk_id
    assert vector.candidates[ranks["vector"] - 1].chunk_id == best.chunk_id
    assert context.detail["input"] == "fusion"
    assert context.detail["tokens"] <= context.detail["budget_tokens"]
    assert packed.passages[0].doc_id == "docs/a.md"
    assert "[1] (docs/a.md)" in trace.context
    assert trace.config["hash"] == PipelineConfig().hash()
    assert trace.models["embedder"].startswith("hash")


def test_same_question_twice_gives_the_same_trace_apart_from_timings(store: Store) -> None:
    pipeline = _pipeline(store)
    first, _ = pipeline.retrieve("chain stretch")
    second, _ = pipeline.retrieve("chain stretch")
    assert first.id != second.id
    assert without_timings(first) == without_timings(second)
    # and over a freshly opened pipeline, as after a restart
    third, _ = _pipeline(store).retrieve("chain stretch")
    assert without_timings(first) == without_timings(third)


def test_rerank_orders_the_shortlist_by_logit(store: Store) -> None:
    trace, _ = _pipeline(store, rerank=True, shortlist=3).retrieve("tyre pressure psi")
    rerank = trace.stages[3]
    assert rerank.name == "rerank" and rerank.detail["input"] == "fusion"
    assert len(rerank.candidates) <= 3
    scores = [c.score for c in rerank.candidates]
    assert scores == sorted(scores, reverse=True)
    assert rerank.candidates[0].doc_id == "docs/b.txt"
    assert all("rerank" in c.sources for c in rerank.candidates)


def test_single_retriever_has_no_fusion_stage(store: Store) -> None:
    trace, _ = _pipeline(store, retrievers=("keyword",)).retrieve("chain")
    assert [s.name for s in trace.stages] == ["keyword", "context"]
    assert trace.stages[1].detail["input"] == "keyword"
    assert "embedder" not in trace.models


def test_minmax_fusion_records_weights(store: Store) -> None:
    trace, _ = _pipeline(store, fusion="minmax", weights={"keyword": 0.25}).retrieve("chain stretch")
    fusion = trace.stages[2]
    assert fusion.detail["weights"] == {"keyword": 0.25, "vector": 1.0}
    top = fusion.candidates[0]
    assert top.score == pytest.approx(sum(c.contribution for c in top.sources.values()))


def test_a_question_with_no_known_words_gives_empty_stages(store: Store) -> None:
    trace, packed = _pipeline(store, retrievers=("keyword",)).retrieve("zzzz qqqq")
    assert all(not s.candidates for s in trace.stages)
    assert packed.passages == () and trace.context == ""


def test_rerank_without_a_reranker_is_a_config_error(store: Store) -> None:
    with pytest.raises(ConfigError, match="rerank"):
        open_pipeline(store, PipelineConfig(rerank=True), embedder=HashEmbedder(dim=64))


def test_trace_survives_the_store(store: Store) -> None:
    trace, _ = _pipeline(store, rerank=True).retrieve("chain stretch")
    store.save_trace(trace)
    loaded = store.load_trace(trace.id[:17])
    assert loaded == from_json(to_json(trace))
    assert to_json(loaded) == to_json(trace)


def test_phrasings_fuse_per_retriever_then_across_retrievers(store: Store) -> None:
    trace, _ = _pipeline(store).retrieve("chain stretch", phrasings=["replace a worn chain", "chain stretch"])
    names = [s.name for s in trace.stages]
    assert trace.phrasings == ("chain stretch", "replace a worn chain")  # the repeat is searched once
    assert names == [
        "keyword·q0",
        "keyword·q1",
        "vector·q0",
        "vector·q1",
        "keyword",
        "vector",
        "fusion",
        "context",
    ]
    stages = {s.name: s for s in trace.stages}
    keyword = stages["keyword"]
    best = keyword.candidates[0]
    ranks = {n: c.rank for n, c in best.sources.items()}
    assert set(ranks) <= {"keyword·q0", "keyword·q1"}
    assert best.score == pytest.approx(sum(1 / (60 + r) for r in ranks.values()))
    top = stages["fusion"].candidates[0]
    level_two = {n: c.rank for n, c in top.sources.items()}
    assert set(level_two) == {"keyword", "vector"}  # still one keyword and one vector ranking
    assert top.score == pytest.approx(sum(1 / (60 + r) for r in level_two.values()))


def test_hyde_passage_is_embedded_as_a_document(store: Store) -> None:
    calls: list[tuple[tuple[str, ...], str]] = []

    class Recording(HashEmbedder):
        def embed(self, texts, kind):  # type: ignore[no-untyped-def]
            calls.append((tuple(texts), kind))
            return super().embed(texts, kind)

    pipeline, _ = open_pipeline(
        store, PipelineConfig(), embedder=Recording(dim=64), tokenizer=RegexTokenizer()
    )
    passage = "Chains stretch with wear; replace one at 0.5% elongation."
    calls.clear()
    trace, _ = pipeline.retrieve("when to swap a chain", hypothetical=passage)
    assert ((passage,), "document") in calls and (("when to swap a chain",), "query") in calls
    hyde = next(s for s in trace.stages if s.name == "vector·hyde")
    assert hyde.detail["hypothetical"] == passage
    vector = next(s for s in trace.stages if s.name == "vector")
    assert vector.detail["inputs"] == "vector·q0,vector·hyde"
