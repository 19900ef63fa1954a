"""The context stage on counts stored at ingest, over real stores (issue 32): the counts are each
chunk's own, a question tokenises no chunk whose count the store holds for its tokenizer, another
tokenizer's counts are never borrowed, and a store written before counts were kept (a real SQLite
file of that layout) still answers, counting each chunk once per pipeline."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clear_rag.chunk.factory import chunker_for
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.ingest import ingest
from clear_rag.providers.fake import HashEmbedder
from clear_rag.retrieve.assemble import Assembled, assemble
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.session import open_pipeline, sync_indexes
from clear_rag.store import Store
from clear_rag.store.sqlite import DB_NAME
from clear_rag.tokens import RegexTokenizer
from tests.retrieve.conftest import Recording

FIXED = ChunkingConfig(chunker="fixed", size=5, overlap=2)  # many overlapping chunks per document
WHOLE = ChunkingConfig(chunker="whole")  # one chunk per document: no passage ever merges two
QUESTIONS = [
    "when do disc brake pads need replacing",
    "how hard should road tyres be pumped",
    "chain stretch limit",
    "gravel tyres rotor",
]
# The chunks table as a store made before chunks' own counts were kept laid it out.
OLD_CHUNK_COLUMNS = ["id", "doc_id", "position", "start", "end", "token_count"]


def _store(folder: Path, corpus: Path, chunking: ChunkingConfig) -> Store:
    store = Store(folder, root=folder.parent)
    ingest(store, [corpus], chunker_for(chunking, tokenizer=RegexTokenizer()))
    sync_indexes(store, [PipelineConfig(chunking=chunking)], HashEmbedder(dim=64))
    return store


@pytest.fixture
def fixed_store(tmp_path: Path, corpus: Path) -> Iterator[Store]:
    store = _store(tmp_path / "fixed", corpus, FIXED)
    yield store
    store.close()


def _pipeline(store: Store, chunking: ChunkingConfig, **changes: Any) -> Pipeline:
    config = PipelineConfig(chunking=chunking, top_k=8, **changes)
    return open_pipeline(store, config, embedder=HashEmbedder(dim=64), tokenizer=RegexTokenizer())


def _counted_afresh(pipeline: Pipeline, question: str) -> Assembled:
    """What the context was before issue 32: every passage tokenised on the question's own time."""
    before = pipeline.retrieve(question).stages[-2]
    top = list(before.candidates[: pipeline.config.top_k])
    return assemble(
        top,
        doc_text=pipeline.document_text,
        budget_tokens=pipeline.config.budget_tokens,
        tokenizer=RegexTokenizer(),
    )


def test_ingest_stores_each_chunks_own_count_and_its_tokenizer(fixed_store: Store) -> None:
    tokenizer = RegexTokenizer()
    chunks = list(fixed_store.chunks())
    assert len(chunks) > len({c.doc_id for c in chunks})  # several chunks a document
    assert all(c.text_tokens == tokenizer.count(c.text) for c in chunks)
    rows = {cid: tokens for cid, _, _, _, tokens in fixed_store.chunk_rows()}
    assert rows == {c.id: c.text_tokens for c in chunks}
    assert fixed_store.counted_by() == tokenizer.name


@pytest.mark.parametrize("budget", [3, 9, 20, 1500])
def test_a_question_packs_as_counting_afresh_would_and_tokenises_only_merged_passages(
    fixed_store: Store, budget: int
) -> None:
    pipeline = _pipeline(fixed_store, FIXED, budget_tokens=budget)
    for question in QUESTIONS:
        recording = Recording(RegexTokenizer())
        retrieval = pipeline.retrieve(question, tokenizer=recording)
        assert retrieval.packed == _counted_afresh(pipeline, question)
        merged = [p.text for p in retrieval.packed.passages if len(p.chunk_ids) > 1]
        singles = [p.text for p in retrieval.packed.passages if len(p.chunk_ids) == 1]
        assert set(merged) <= set(recording.counted)  # what is packed merged was counted here
        assert not set(singles) & set(recording.counted) - set(merged)  # one chunk alone never was
    pipeline.close()


class Characters:
    """A tokenizer whose tokens are characters: counts no stored count could be mistaken for."""

    name = "characters"

    def count(self, text: str) -> int:
        return len(text)


def test_another_tokenizers_counts_are_never_borrowed(fixed_store: Store) -> None:
    """A context counted in a chat model's own tokenizer: the stored counts are the chunker's."""
    characters = Characters()
    pipeline = _pipeline(fixed_store, FIXED)
    for question in QUESTIONS:
        packed = pipeline.retrieve(question, tokenizer=characters).packed
        assert packed.passages
        assert [p.token_count for p in packed.passages] == [len(p.text) for p in packed.passages]
    pipeline.close()


def _drop_counts(store: Store) -> None:
    """Make ``store`` a store of the layout before counts were kept, as such a file is on disk."""
    db = sqlite3.connect(store.db_path)
    db.execute("ALTER TABLE chunks DROP COLUMN text_tokens")
    db.commit()
    assert [row[1] for row in db.execute("PRAGMA table_info(chunks)")] == OLD_CHUNK_COLUMNS
    db.close()


def test_a_store_written_before_counts_answers_the_same_counting_each_chunk_once(
    tmp_path: Path, corpus: Path
) -> None:
    store = _store(tmp_path / "whole", corpus, WHOLE)
    pipeline = _pipeline(store, WHOLE)
    stored = [pipeline.retrieve(q).packed for q in QUESTIONS]
    pipeline.close()
    store.close()
    _drop_counts(Store(tmp_path / "whole"))

    with Store(tmp_path / "whole", mode="read") as old:
        assert {tokens for *_, tokens in old.chunk_rows()} == {None}
        assert {c.text_tokens for c in old.chunks()} == {None}
        pipeline = _pipeline(old, WHOLE)
        recording = Recording(RegexTokenizer())
        first = [pipeline.retrieve(q, tokenizer=recording).packed for q in QUESTIONS]
        assert first == stored
        # each chunk packed was counted once, the first time a question met it
        packed = {cid for a in first for p in a.passages for cid in p.chunk_ids}
        assert packed and len(recording.counted) == len(set(recording.counted)) >= len(packed)
        recording.counted.clear()
        assert [pipeline.retrieve(q, tokenizer=recording).packed for q in QUESTIONS] == stored
        assert recording.counted == []
        pipeline.close()
    with sqlite3.connect(tmp_path / "whole" / DB_NAME) as db:  # reading wrote nothing
        assert [row[1] for row in db.execute("PRAGMA table_info(chunks)")] == OLD_CHUNK_COLUMNS


def test_the_first_change_to_an_old_store_adds_the_counts_column(tmp_path: Path, corpus: Path) -> None:
    store = _store(tmp_path / "whole", corpus, WHOLE)
    store.close()
    _drop_counts(Store(tmp_path / "whole"))
    (corpus / "d.txt").write_text("Tubeless tyres seal small punctures by themselves.\n", encoding="utf-8")

    with Store(tmp_path / "whole") as old:
        assert not old.counts_kept  # opening changes nothing
        ingest(old, [corpus], chunker_for(WHOLE, tokenizer=RegexTokenizer()))
        rows = {cid: tokens for cid, _, _, _, tokens in old.chunk_rows()}
        texts = {c.id: c.text for c in old.chunks()}
    new = [cid for cid in rows if cid.startswith("docs/d.txt")]
    assert new and all(rows[cid] == RegexTokenizer().count(texts[cid]) for cid in new)
    assert all(rows[cid] is None for cid in rows if cid not in new)  # the old rows stay uncounted
