"""The whole retrieval path on the fake providers, over a real store and real indexes."""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from clear_rag.errors import ConfigError, StoreError
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import HashEmbedder
from clear_rag.retrieve.pipeline import Retrieval
from clear_rag.session import open_pipeline
from clear_rag.store import Store
from clear_rag.trace import found_by
from clear_rag.types import StageResult, Trace
from tests.conftest import toy_config, toy_pipeline


def _retrieve(store: Store, question: str, **changes: object) -> Retrieval:
    return toy_pipeline(store, **changes).retrieve(question)  # type: ignore[arg-type]


def test_hybrid_stages_in_order_with_rrf_contributions(toy_store: Store) -> None:
    retrieval = _retrieve(toy_store, "when do disc brake pads need replacing")
    assert [s.name for s in retrieval.stages] == ["keyword", "vector", "fusion", "context"]
    keyword, vector, fusion, context = retrieval.stages
    best = fusion.candidates[0]
    assert best.doc_id == "docs/a.md"
    ranks = {name: c.rank for name, c in best.sources.items()}
    assert best.score == pytest.approx(sum(1 / (60 + r) for r in ranks.values()))
    assert keyword.candidates[ranks["keyword"] - 1].chunk_id == best.chunk_id
    assert vector.candidates[ranks["vector"] - 1].chunk_id == best.chunk_id
    # each first-stage candidate names its own search only; fusion names its inputs, nothing deeper
    assert all(set(c.sources) == {"keyword"} for c in keyword.candidates)
    assert all(not c.parts for c in best.sources.values())
    assert context.detail["input"] == "fusion"
    assert context.detail["tokens"] <= context.detail["budget_tokens"]
    assert retrieval.packed.passages[0].doc_id == "docs/a.md"
    assert retrieval.ranked == fusion.candidates


def test_same_question_twice_gives_the_same_stages_apart_from_timings(toy_store: Store) -> None:
    def plain(retrieval: Retrieval) -> list[tuple[str, object, object]]:
        return [(s.name, s.candidates, dict(s.detail)) for s in retrieval.stages]

    pipeline = toy_pipeline(toy_store)
    first, second = pipeline.retrieve("chain stretch"), pipeline.retrieve("chain stretch")
    assert plain(first) == plain(second)
    assert plain(first) == plain(
        _retrieve(toy_store, "chain stretch")
    )  # a fresh pipeline, as after a restart


def test_rerank_records_the_logit_and_the_input_rank_only(toy_store: Store) -> None:
    retrieval = _retrieve(toy_store, "tyre pressure psi", rerank=True, shortlist=3)
    fusion, rerank = retrieval.stages[2], retrieval.stages[3]
    assert rerank.name == "rerank" and rerank.detail["input"] == "fusion"
    assert rerank.detail["display"] == "sigmoid"
    assert len(rerank.candidates) == len(fusion.candidates)  # nothing dropped
    assert rerank.detail["reranked"] == min(3, len(fusion.candidates))
    scores = [c.score for c in rerank.candidates]
    assert scores == sorted(scores, reverse=True)
    assert rerank.candidates[0].doc_id == "docs/b.txt"
    input_rank = {c.chunk_id: n for n, c in enumerate(fusion.candidates, start=1)}
    for cand in rerank.candidates:
        assert set(cand.sources) == {"fusion"}  # not the earlier stages' contributions
        (source,) = cand.sources.values()
        assert source.rank == input_rank[cand.chunk_id] and source.contribution == 0.0
    assert retrieval.ranked == rerank.candidates


def test_rerank_fused_by_rrf_keeps_both_ranks_and_the_logit(toy_store: Store) -> None:
    """rerank_fusion = "rrf": the same shortlist, each candidate scored by its two RRF terms, the
    reranker's with its logit; its scores are shown as they are, not through a sigmoid."""
    plain = _retrieve(toy_store, "tyre pressure psi", rerank=True, shortlist=3).stages[3]
    fused = _retrieve(toy_store, "tyre pressure psi", rerank=True, shortlist=3, rerank_fusion="rrf").stages[3]
    assert (fused.detail["method"], fused.detail["k"]) == ("rrf", 60) and "display" not in fused.detail
    assert {c.chunk_id for c in fused.candidates} == {c.chunk_id for c in plain.candidates}
    logit = {c.chunk_id: (n, c.score) for n, c in enumerate(plain.candidates, start=1)}
    for cand in fused.candidates:
        assert set(cand.sources) == {"fusion", "cross-encoder"}
        assert (cand.sources["cross-encoder"].rank, cand.sources["cross-encoder"].score) == logit[
            cand.chunk_id
        ]
        assert cand.score == pytest.approx(sum(1 / (60 + s.rank) for s in cand.sources.values()))


@pytest.mark.parametrize("rerank_fusion", ["replace", "rrf"])
def test_rerank_keeps_the_candidates_past_its_shortlist_and_says_how_many_it_scored(
    toy_store: Store, rerank_fusion: str
) -> None:
    """Shortlist 2 of fusion's 3: the third keeps its fusion rank, and the rerank stage and the context
    built on it both say that only their first 2 were re-scored."""
    retrieval = _retrieve(
        toy_store, "tyre pressure psi", rerank=True, shortlist=2, top_k=5, rerank_fusion=rerank_fusion
    )
    fusion, rerank, context = retrieval.stages[2:]
    assert len(fusion.candidates) == 3  # the fixture this test needs: one candidate past the shortlist
    assert {c.chunk_id for c in rerank.candidates[:2]} == {c.chunk_id for c in fusion.candidates[:2]}
    assert rerank.candidates[2].chunk_id == fusion.candidates[2].chunk_id
    assert rerank.candidates[2].sources["fusion"].rank == 3
    assert rerank.detail["reranked"] == 2
    assert [rerank.rescored(rank) for rank in (1, 2, 3)] == [True, True, False]
    assert [c.chunk_id for c in context.candidates] == [c.chunk_id for c in rerank.candidates]
    assert context.detail["reranked"] == 2
    if rerank_fusion == "rrf":
        assert rerank.candidates[2].score == pytest.approx(1 / (60 + 3))
        assert "reranked" in context.detail and "display" not in context.detail


def test_single_retriever_has_no_fusion_stage(toy_store: Store) -> None:
    pipeline = toy_pipeline(toy_store, retrievers=("keyword",))
    retrieval = pipeline.retrieve("chain")
    assert [s.name for s in retrieval.stages] == ["keyword", "context"]
    assert retrieval.stages[1].detail["input"] == "keyword"
    assert "embedder" not in pipeline.models


def test_minmax_fusion_records_weights(toy_store: Store) -> None:
    retrieval = _retrieve(toy_store, "chain stretch", fusion="minmax", weights={"keyword": 0.25})
    fusion = retrieval.stages[2]
    assert fusion.detail["weights"] == {"keyword": 0.25, "vector": 1.0}
    top = fusion.candidates[0]
    assert top.score == pytest.approx(sum(c.contribution for c in top.sources.values()))


def test_a_question_with_no_known_words_gives_empty_stages(toy_store: Store) -> None:
    retrieval = _retrieve(toy_store, "zzzz qqqq", retrievers=("keyword",))
    assert all(not s.candidates for s in retrieval.stages)
    assert retrieval.packed.passages == ()


def test_rerank_with_a_reranker_that_is_not_here_is_a_model_error(toy_store: Store) -> None:
    from clear_rag.errors import ModelError

    with pytest.raises(ModelError, match="ms-marco-minilm-l6"):
        open_pipeline(toy_store, toy_config(rerank=True), embedder=HashEmbedder(dim=64))


def test_phrasings_fuse_per_retriever_then_across_retrievers_keeping_both_levels(toy_store: Store) -> None:
    retrieval = toy_pipeline(toy_store).retrieve(
        "chain stretch", phrasings=["replace a worn chain", "chain stretch"]
    )
    names = [s.name for s in retrieval.stages]
    assert names == [
        "keyword·q0",
        "keyword·q1",
        "vector·q0",
        "vector·q1",
        "keyword",
        "vector",
        "fusion",
        "context",
    ]  # the repeated phrasing is searched once
    stages = {s.name: s for s in retrieval.stages}
    assert stages["keyword·q1"].detail == {
        "retriever": "keyword",
        "query": "replace a worn chain",
        "phrasing": 1,
    }
    assert all(set(c.sources) == {"keyword·q1"} for c in stages["keyword·q1"].candidates)
    best = stages["keyword"].candidates[0]
    ranks = {n: c.rank for n, c in best.sources.items()}
    assert set(ranks) <= {"keyword·q0", "keyword·q1"}
    assert best.score == pytest.approx(sum(1 / (60 + r) for r in ranks.values()))
    top = stages["fusion"].candidates[0]
    assert set(top.sources) == {"keyword", "vector"}  # still one keyword and one vector ranking
    assert top.score == pytest.approx(sum(1 / (60 + c.rank) for c in top.sources.values()))
    # ...and under each, the per-phrasing RRF terms of the first level
    for retriever, contribution in top.sources.items():
        level_one = stages[retriever].candidates[contribution.rank - 1]
        assert contribution.parts == level_one.sources
        assert contribution.score == pytest.approx(
            sum(1 / (60 + p.rank) for p in contribution.parts.values())
        )
    trace = Trace("t", "chain stretch", (), retrieval.stages)
    assert set(found_by(trace, top.chunk_id)) <= {"keyword·q0", "keyword·q1", "vector·q0", "vector·q1"}


def test_hyde_passage_is_embedded_as_a_document(toy_store: Store) -> None:
    calls: list[tuple[tuple[str, ...], str]] = []

    class Recording(HashEmbedder):
        def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
            calls.append((tuple(texts), kind))
            return super().embed(texts, kind)

    pipeline = toy_pipeline(toy_store, embedder=Recording(dim=64))
    passage = "Chains stretch with wear; replace one at 0.5% elongation."
    retrieval = pipeline.retrieve("when to swap a chain", hypothetical=passage)
    assert ((passage,), "document") in calls and (("when to swap a chain",), "query") in calls
    hyde = next(s for s in retrieval.stages if s.name == "vector·hyde")
    assert hyde.detail["hypothetical"] == passage
    vector = next(s for s in retrieval.stages if s.name == "vector")
    assert vector.detail["inputs"] == "vector·q0,vector·hyde"


class SlowEmbedder(HashEmbedder):
    """Embeds a query only once ``released`` is set: vector search cannot finish before that."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.released = threading.Event()

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind == "query":
            assert self.released.wait(timeout=60), "the test never released the embedder"
        return super().embed(texts, kind)


def test_stages_are_reported_as_they_finish_keyword_before_a_slow_vector_search(toy_store: Store) -> None:
    embedder = SlowEmbedder()
    pipeline = toy_pipeline(toy_store, embedder=embedder, rerank=True)
    reported: list[str] = []

    def on_stage(stage: StageResult) -> None:
        reported.append(stage.name)
        if stage.name == "keyword":
            # keyword search was reported while vector search is still waiting on its embedding
            assert "vector" not in reported
            embedder.released.set()

    retrieval = pipeline.retrieve("chain stretch", on_stage=on_stage)
    assert reported == ["keyword", "vector", "fusion", "rerank", "context"]
    assert [s.name for s in retrieval.stages] == reported


def test_a_retrievers_phrasings_fuse_as_soon_as_its_own_searches_are_in(toy_store: Store) -> None:
    embedder = SlowEmbedder()
    pipeline = toy_pipeline(toy_store, embedder=embedder)
    reported: list[str] = []

    def on_stage(stage: StageResult) -> None:
        reported.append(stage.name)
        if stage.name == "keyword":  # the fused keyword ranking, before any vector search ended
            assert not any(name.startswith("vector") for name in reported)
            embedder.released.set()

    retrieval = pipeline.retrieve("chain stretch", phrasings=["worn chain"], on_stage=on_stage)
    assert set(reported[:3]) == {"keyword·q0", "keyword·q1", "keyword"} and reported[2] == "keyword"
    assert reported[-2:] == ["fusion", "context"]
    assert [s.name for s in retrieval.stages][:4] == ["keyword·q0", "keyword·q1", "vector·q0", "vector·q1"]


def test_a_stage_callback_that_raises_stops_the_question(toy_store: Store) -> None:
    def stop(stage: StageResult) -> None:
        raise RuntimeError("client went away")

    with pytest.raises(RuntimeError, match="went away"):
        toy_pipeline(toy_store).retrieve("chain stretch", on_stage=stop)


def test_opening_never_indexes_an_index_behind_its_store_is_an_error(
    toy_store: Store, corpus: object
) -> None:
    from clear_rag.chunk.factory import make_chunker
    from clear_rag.ingest import ingest
    from clear_rag.tokens import RegexTokenizer

    (toy_store.root / "docs" / "new.txt").write_text("Saddles need a level top.", encoding="utf-8")
    ingest(
        toy_store, [toy_store.root / "docs"], make_chunker("structural", size=32, tokenizer=RegexTokenizer())
    )
    with pytest.raises(StoreError, match=r"behind the store \(1 documents new or changed.*clear-rag ingest"):
        toy_pipeline(toy_store)


def test_a_config_naming_another_chunking_than_the_stores_is_an_error(toy_store: Store) -> None:
    with pytest.raises(ConfigError, match=r"chunking.*asks for chunking.*'size': 512.*store was chunked"):
        open_pipeline(toy_store, toy_config().replace(chunking=toy_config().chunking.replace(size=512)))


@pytest.mark.parametrize(
    ("changes", "phrasings", "hyde"),
    [
        ({}, [], False),
        ({"retrievers": ["keyword"]}, [], False),
        ({"rerank": True}, ["replace a worn chain", "chain stretch"], True),
        ({"retrievers": ["vector"], "rerank": True}, ["worn chain"], True),
        ({"fusion": "minmax"}, ["worn chain", "worn chain"], False),
    ],
)
def test_the_plan_names_every_stage_retrieve_reports_with_its_inputs(
    toy_store: Store, changes: dict[str, object], phrasings: list[str], hyde: bool
) -> None:
    """What a page draws before the stages arrive is what arrives: the same names, each built from
    the same stages, whatever the retrievers, phrasings (a repeated one searched once) and HyDE."""
    pipeline = toy_pipeline(toy_store, **changes)  # type: ignore[arg-type]
    hypothetical = "Chains stretch with wear." if hyde else None
    plan = pipeline.plan("chain stretch", phrasings=phrasings, hypothetical=hypothetical)
    stages = pipeline.retrieve("chain stretch", phrasings=phrasings, hypothetical=hypothetical).stages
    assert sorted(p["name"] for p in plan) == sorted(s.name for s in stages)
    planned = {p["name"]: p for p in plan}
    for stage in stages:
        detail = stage.detail
        inputs = detail.get("inputs", detail.get("input", ""))
        assert planned[stage.name]["inputs"] == [i for i in inputs.split(",") if i], stage.name
        if not inputs:  # a first-stage search names its retriever, as its detail does
            assert planned[stage.name]["retriever"] == detail["retriever"]
    # a stage is planned after every stage it is built from
    order = [p["name"] for p in plan]
    assert all(order.index(i) < order.index(p["name"]) for p in plan for i in p["inputs"])
