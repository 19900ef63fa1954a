"""Indexes beside the store follow it document by document, and opening them rebuilds nothing."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from clear_rag.chunk.base import Chunker
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.sync import keyword_index, vector_index
from clear_rag.ingest import ingest
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store import Store


class CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__(dim=64)
        self.calls: list[tuple[int, str]] = []

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        self.calls.append((len(texts), kind))
        return super().embed(texts, kind)


@pytest.fixture
def store(tmp_path: Path, corpus: Path, chunker: Chunker) -> Store:
    opened = Store(tmp_path / "s", root=tmp_path)
    ingest(opened, [corpus], chunker)
    return opened


def test_first_sync_indexes_everything_then_nothing(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    chunks = store.stats().chunks
    index, first = keyword_index(store)
    assert (first.documents_updated, first.chunks_added) == (3, chunks)
    assert len(index) == chunks

    def refuse(*args: object) -> None:
        raise AssertionError("re-tokenised on open")

    monkeypatch.setattr(BM25Index, "add", refuse)
    again, second = keyword_index(store)
    assert (second.documents_updated, second.chunks_added, second.chunks_removed) == (0, 0, 0)
    assert again.search("brakes", 3) == index.search("brakes", 3)


def test_a_changed_document_is_the_only_one_reindexed(store: Store, corpus: Path, chunker: Chunker) -> None:
    keyword_index(store)
    embedder = CountingEmbedder()
    vector_index(store, embedder)
    (corpus / "b.txt").write_text("Tubeless sealant lasts about six months.\n", encoding="utf-8")
    ingest(store, [corpus], chunker)
    index, report = keyword_index(store)
    assert (report.documents_updated, report.chunks_added) == (1, 1)
    assert index.search("tubeless sealant", 1)[0][0] == "docs/b.txt#0000"
    assert index.search("psi", 5) == []  # the old text is gone from the index
    embedder.calls.clear()
    vectors, vreport = vector_index(store, embedder)
    assert embedder.calls == [(1, "document")]
    assert vreport.chunks_added == 1
    assert len(vectors) == store.stats().chunks


def test_pruned_documents_leave_the_indexes(store: Store, corpus: Path, chunker: Chunker) -> None:
    keyword_index(store)
    vector_index(store, HashEmbedder(dim=64))
    (corpus / "a.md").unlink()
    ingest(store, [corpus], chunker, prune=True)
    index, report = keyword_index(store)
    vectors, vreport = vector_index(store, HashEmbedder(dim=64))
    assert report.documents_removed == vreport.documents_removed == 1
    assert not any(i.startswith("docs/a.md") for i in index.ids)
    assert not any(i.startswith("docs/a.md") for i in vectors.ids)
    assert index.search("brakes", 5) == []


def test_incremental_index_equals_one_built_from_scratch(
    store: Store, corpus: Path, chunker: Chunker, tmp_path: Path
) -> None:
    keyword_index(store)
    (corpus / "b.txt").write_text("Chains and brakes wear together.\n", encoding="utf-8")
    ingest(store, [corpus], chunker)
    incremental, _ = keyword_index(store)
    fresh = BM25Index()
    chunks = list(store.chunks())
    fresh.add([c.id for c in chunks], [c.text for c in chunks])
    for query in ("brakes", "chain stretch", "tyre pressure psi", "wear together"):
        got, want = incremental.search(query, 10), fresh.search(query, 10)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want])


def test_each_analyzer_and_embedder_has_its_own_index(store: Store) -> None:
    keyword_index(store)
    stemmed, report = keyword_index(store, stem=True)
    assert report.documents_updated == 3
    assert stemmed.search("brake", 1)[0][0].startswith("docs/a.md")
    index_dirs = sorted(p.name for p in (store.directory / "index").iterdir())
    assert index_dirs == ["bm25", "bm25-porter"]
