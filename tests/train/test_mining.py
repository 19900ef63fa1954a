"""Hard-negative mining: judged documents never come back as negatives, and the draw is seeded."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path

import pytest

from clear_rag.chunk.factory import chunker_for
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.ingest import ingest_documents
from clear_rag.providers.fake import HashEmbedder
from clear_rag.retrieve.pipeline import final_ranking
from clear_rag.session import open_pipeline, sync_indexes
from clear_rag.store.sqlite import Store
from clear_rag.train.mining import Group, load_groups, mine, save_groups
from clear_rag.types import Block, Document

# Twelve abstracts sharing words, so every claim's hybrid ranking holds several near misses.
TEXTS = {
    f"d{i}": f"{topic} {detail}"
    for i, (topic, detail) in enumerate(
        (t, d)
        for t in ("vitamin d bone density", "insulin glucose uptake", "tumour cell growth")
        for d in ("in mice", "in older adults", "after surgery", "in a cohort")
    )
}
CLAIMS = {"c1": "vitamin d raises bone density", "c2": "insulin lowers glucose", "c3": "no judged doc"}
POSITIVES = {"c1": {"d0": 1.0, "d1": 1.0}, "c2": {"d4": 1.0}, "c3": {"d9": 0.0}}  # a 0 grade is unjudged


def documents() -> Iterator[Document]:
    for doc_id, text in TEXTS.items():
        digest = hashlib.sha256(text.encode()).hexdigest()
        yield Document(doc_id, doc_id, digest, text, (Block("paragraph", 0, len(text)),))


@pytest.fixture
def retrieve(tmp_path: Path) -> Iterator[object]:
    """The mining retriever's shape on the toy corpus: BM25 + hash-embedder vectors, fused min-max."""
    config = PipelineConfig(fusion="minmax", chunking=ChunkingConfig(chunker="whole"))
    embedder = HashEmbedder()
    with Store(tmp_path / "store") as store:
        ingest_documents(store, documents(), chunker_for(config.chunking), parser="toy@1")
        sync_indexes(store, [config], embedder)
        pipeline = open_pipeline(store, config, embedder=embedder)
        yield lambda claim: [c.doc_id for c in final_ranking(pipeline.retrieve(claim).stages)]


def test_negatives_exclude_every_judged_document(retrieve: object) -> None:
    groups = mine(retrieve, CLAIMS, POSITIVES, negatives=3, pool=8, seed=1)  # type: ignore[arg-type]
    assert [g.query_id for g in groups] == ["c1", "c2"]  # c3 has no grade above 0
    for group in groups:
        judged = {d for d, grade in POSITIVES[group.query_id].items() if grade > 0}
        assert set(group.positives) == judged
        assert len(group.negatives) == 3 and not judged & set(group.negatives)
        assert len(set(group.negatives)) == 3


def test_negatives_come_from_the_top_of_the_ranking_in_rank_order(retrieve: object) -> None:
    pool = 5
    for group in mine(retrieve, CLAIMS, POSITIVES, negatives=2, pool=pool, seed=3):  # type: ignore[arg-type]
        ranked = retrieve(group.query)  # type: ignore[operator]
        allowed = [d for d in ranked[:pool] if d not in group.positives]
        assert set(group.negatives) <= set(allowed)
        assert list(group.negatives) == sorted(group.negatives, key=allowed.index)


def test_the_draw_is_seeded(retrieve: object) -> None:
    first = mine(retrieve, CLAIMS, POSITIVES, negatives=3, pool=10, seed=7)  # type: ignore[arg-type]
    again = mine(retrieve, CLAIMS, POSITIVES, negatives=3, pool=10, seed=7)  # type: ignore[arg-type]
    assert first == again
    seeds = {mine(retrieve, CLAIMS, POSITIVES, negatives=3, pool=10, seed=s)[0].negatives for s in range(8)}  # type: ignore[arg-type]
    assert len(seeds) > 1  # the seed is used: 8 seeds over C(8,3) = 56 draws do not all agree


def test_one_claim_does_not_move_another_claims_draw(retrieve: object) -> None:
    both = mine(retrieve, CLAIMS, POSITIVES, negatives=3, pool=10, seed=5)  # type: ignore[arg-type]
    alone = mine(retrieve, {"c2": CLAIMS["c2"]}, POSITIVES, negatives=3, pool=10, seed=5)  # type: ignore[arg-type]
    assert alone == [g for g in both if g.query_id == "c2"]


def test_a_short_pool_gives_what_there_is() -> None:
    groups = mine(lambda q: ["p", "n1", "n1", "n2"], {"q": "x"}, {"q": {"p": 1}}, negatives=3, pool=4)
    assert groups == [Group("q", "x", ("p",), ("n1", "n2"))]


def test_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="negatives=0"):
        mine(lambda q: [], {}, {}, negatives=0)
    with pytest.raises(ValueError, match="pool=2"):
        mine(lambda q: [], {}, {}, negatives=3, pool=2)


def test_groups_round_trip_through_their_file(tmp_path: Path) -> None:
    groups = [Group("q", "claim", ("a", "b"), ("c",))]
    save_groups(tmp_path / "g.json", groups, {"seed": 1})
    assert load_groups(tmp_path / "g.json") == (groups, {"seed": 1})
