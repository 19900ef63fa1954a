"""Indexes beside the store follow it document by document, and opening them rebuilds nothing."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from clear_rag.chunk.base import Chunker
from clear_rag.errors import ModelError
from clear_rag.index import sync as sync_module
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.files import DamagedIndexError
from clear_rag.index.places import (
    existing_places,
    health,
    keyword_place,
    load_keyword,
    load_vectors,
    vector_place,
)
from clear_rag.index.sync import SyncReport, keyword_index, report_lines, vector_index
from clear_rag.index.vectors import VectorIndex
from clear_rag.ingest import ingest
from clear_rag.parse import registry
from clear_rag.parse.base import Parsed
from clear_rag.parse.text import TextParser
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store import Store
from clear_rag.types import Chunk, Document
from tests.index.layouts import older, rewrite_older


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


class RevisedText(TextParser):
    """The next version of the text parser: it reads the same bytes into another text (a paragraph
    more in front), so the document's chunks and their positions change and its file does not."""

    version = "2"

    def parse(self, data: bytes, *, source: str) -> Parsed:
        return super().parse(b"Presta valves need a narrow pump head.\n\n" + data, source=source)


def test_a_new_parser_version_reindexes_what_it_read_again(
    store: Store, corpus: Path, chunker: Chunker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 31's 10k regression: ingest parsed the PDFs again under the layout parser's new version
    (same bytes, same chunker), the indexes kept the old parse's chunks under the new chunks' ids, and
    the layout rows were scored on labels in one text and hits from another."""
    keyword_index(store)
    vector_index(store, HashEmbedder(dim=64))
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    registry.register("text", "plain", RevisedText)
    ingest(store, [corpus], chunker)
    record = store.record("docs/b.txt")
    assert record is not None and record.parser == "text/plain@2"  # read again, bytes unchanged
    place = keyword_place(store, False)
    assert health(place, store).state == "behind"
    index, report = keyword_index(store)
    vectors, vreport = vector_index(store, HashEmbedder(dim=64))
    assert report.documents_updated == vreport.documents_updated == 1
    stored = {c.id: c.text for c in store.chunks()}
    assert set(index.ids) == set(vectors.ids) == set(stored)
    hits = [i for i, _ in index.search("presta valves", 5)]
    assert hits and all("Presta valves" in stored[i] for i in hits)
    assert health(place, store).state == "ok"


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


# -- streaming: a batch at a time, the same index as one add of everything ----------------------------


def _put(store: Store, doc_id: str, text: str, chunk_texts: list[str]) -> None:
    """A document stored directly, with the chunks given (none for a document chunkers cut nothing
    from), so a test controls exactly what each document holds."""
    chunks, start = [], 0
    for position, piece in enumerate(chunk_texts):
        start = text.index(piece, start)
        chunks.append(
            Chunk(f"{doc_id}#{position:04d}", doc_id, start, start + len(piece), piece, position, 1)
        )
        start += len(piece)
    document = Document(doc_id, doc_id, hashlib.sha256(text.encode()).hexdigest(), text, ())
    store.put(document, chunks, parser="test", chunker='{"chunker": "test"}', size_bytes=len(text))


@pytest.fixture
def many(tmp_path: Path) -> Iterator[Store]:
    """Seven documents of one to four chunks, one of them without chunks, in an order where a small
    batch cuts through documents."""
    opened = Store(tmp_path / "many", root=tmp_path)
    words = [
        "brakes pads",
        "tyre pressure",
        "chain stretch",
        "gear cable",
        "rotor bleed",
        "saddle",
        "fork oil",
    ]
    for n in range(7):
        pieces = [f"{words[(n + i) % 7]} part{i}" for i in range(n % 4 + 1)] if n != 3 else []
        _put(opened, f"d{n}", " ".join(pieces) if pieces else "   ", pieces)
    yield opened
    opened.close()


def test_a_sync_in_small_batches_builds_the_index_one_add_of_everything_builds(
    many: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sync_module, "KEYWORD_BATCH", 2)
    keyword, _ = keyword_index(many)
    vectors, _ = vector_index(many, HashEmbedder(dim=64), batch=2)
    chunks = list(many.chunks())
    whole = BM25Index()
    whole.add([c.id for c in chunks] + ["d3#empty"], [c.text for c in chunks] + [""])  # the old order
    assert keyword.ids == whole.ids
    for query in ("brakes", "chain stretch part1", "fork"):
        assert keyword.search(query, 20) == whole.search(query, 20)
    all_vectors = VectorIndex(64)
    all_vectors.add([c.id for c in chunks], HashEmbedder(dim=64).embed([c.text for c in chunks], "document"))
    assert vectors.ids == all_vectors.ids
    assert np.array_equal(vectors.matrix, all_vectors.matrix)


def test_a_sync_holds_one_batch_of_chunks_at_a_time(many: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    """The predecessor listed every chunk of every changed document before indexing any."""
    asked: list[str | None] = []
    real = Store.chunks

    def chunks(self: Store, doc_id: str | None = None) -> Iterator[Chunk]:
        asked.append(doc_id)
        return real(self, doc_id)

    sizes: list[int] = []
    embedder = CountingEmbedder()
    monkeypatch.setattr(Store, "chunks", chunks)
    vector_index(many, embedder, batch=3, progress=lambda done, total: sizes.append(done))
    assert asked == [f"d{n}" for n in range(7)]  # document by document, never the whole store
    assert max(n for n, _ in embedder.calls) <= 3
    assert sizes[0] == 0 and sizes[-1] == many.stats().chunks


# -- containment: one document that cannot be indexed is left out, and said so ----------------------


@pytest.fixture
def with_dots(tmp_path: Path, corpus: Path, chunker: Chunker) -> Iterator[Store]:
    (corpus / "dots.txt").write_text("!!! ... ???\n", encoding="utf-8")
    opened = Store(tmp_path / "s", root=tmp_path)
    ingest(opened, [corpus], chunker)
    yield opened
    opened.close()


def test_a_zero_vector_leaves_its_document_out_and_the_rest_in(with_dots: Store) -> None:
    vectors, report = vector_index(with_dots, HashEmbedder(dim=64))
    assert report.missing == {"docs/dots.txt": "its embedding is a zero vector"}
    spans = {cid: doc for cid, doc, _, _ in with_dots.chunk_spans()}
    assert set(vectors.ids) == {cid for cid, doc in spans.items() if doc != "docs/dots.txt"}
    loaded = load_vectors(with_dots, HashEmbedder(dim=64))  # not "behind": the index says why
    assert loaded.ids == vectors.ids
    place = vector_place(with_dots, HashEmbedder(dim=64))
    checked = health(place, with_dots)
    assert (checked.state, checked.missing) == ("ok", report.missing)
    assert checked.documents == 3 and checked.chunks == len(vectors)


def test_a_document_left_out_is_retried_and_goes_in_once_it_can(
    with_dots: Store, corpus: Path, chunker: Chunker
) -> None:
    vector_index(with_dots, HashEmbedder(dim=64))
    _, again = vector_index(with_dots, HashEmbedder(dim=64))
    assert (again.documents_updated, again.missing) == (
        1,
        {"docs/dots.txt": "its embedding is a zero vector"},
    )
    (corpus / "dots.txt").write_text("Words at last.\n", encoding="utf-8")
    ingest(with_dots, [corpus], chunker)
    vectors, fixed = vector_index(with_dots, HashEmbedder(dim=64))
    assert fixed.missing == {} and "docs/dots.txt#0000" in vectors
    assert health(vector_place(with_dots, HashEmbedder(dim=64)), with_dots).missing == {}


def test_an_embedder_that_cannot_reach_its_server_changes_nothing(store: Store) -> None:
    class Down(HashEmbedder):
        def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
            raise ModelError("no server answers there", fix="Start it")

    with pytest.raises(ModelError, match="no server answers"):
        vector_index(store, Down(dim=64))
    assert health(vector_place(store, Down(dim=64)), store).state == "absent"


# -- damaged files: detected on open, rebuilt by the next sync ---------------------------------------


def _vector_dir(store: Store) -> Path:
    return vector_place(store, HashEmbedder(dim=64)).directory


def test_a_damaged_index_is_named_on_load_and_rebuilt_by_the_next_sync(store: Store) -> None:
    built, _ = vector_index(store, HashEmbedder(dim=64))
    path = _vector_dir(store) / "vectors.npy"
    size = path.stat().st_size
    path.write_bytes(path.read_bytes()[:200])
    with pytest.raises(DamagedIndexError) as caught:
        load_vectors(store, HashEmbedder(dim=64))
    assert caught.value.path == str(path)
    assert "clear-rag index --rebuild" in str(caught.value)
    rebuilt, report = vector_index(store, HashEmbedder(dim=64))
    assert report.damage == f"vectors.npy: shorter than written: 200 of {size} bytes" and report.rebuilt
    assert report.chunks_added == len(built)
    assert rebuilt.ids == built.ids
    assert load_vectors(store, HashEmbedder(dim=64)).ids == built.ids


def test_a_shuffled_id_file_is_caught_by_its_checksum(store: Store) -> None:
    """Shuffled ids passed every check of the predecessor and returned the wrong documents."""
    vector_index(store, HashEmbedder(dim=64))
    ids_path = _vector_dir(store) / "ids.json"
    ids = json.loads(ids_path.read_text(encoding="utf-8"))
    ids_path.write_text(json.dumps(ids[1:] + ids[:1]), encoding="utf-8")
    with pytest.raises(
        DamagedIndexError, match=r"ids\.json: the vector \(hash-embedder-64\) index is damaged"
    ):
        load_vectors(store, HashEmbedder(dim=64))


def test_ids_that_are_not_the_manifests_chunks_are_damage_even_without_checksums(store: Store) -> None:
    keyword_index(store)
    folder = store.directory / "index" / "bm25"
    manifest = older(json.loads((folder / "manifest.json").read_text(encoding="utf-8")), 1)  # no checksums
    first = sorted(manifest["documents"])[0]
    manifest["documents"][first]["chunks"].append("ghost#0000")
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    total = store.stats().chunks
    with pytest.raises(DamagedIndexError, match=rf"its {total} ids are not the {total + 1} chunks"):
        load_keyword(store)


def test_an_index_from_before_checksums_gets_them_without_being_rebuilt(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    keyword_index(store)
    path = store.directory / "index" / "bm25" / "manifest.json"
    rewrite_older(path.parent, 1)
    assert load_keyword(store).search("brakes", 1)  # still opens, checked by its ids alone

    def refuse(*args: object) -> None:
        raise AssertionError("re-tokenised an index that only lacked checksums")

    monkeypatch.setattr(BM25Index, "add", refuse)
    _, report = keyword_index(store)
    assert (report.documents_updated, report.rebuilt) == (0, False)
    assert "files" in json.loads(path.read_text(encoding="utf-8"))


def test_files_written_without_their_manifest_are_rebuilt(store: Store) -> None:
    """What a writer killed between its data files and its manifest leaves: new files, old manifest."""
    keyword_index(store)
    folder = store.directory / "index" / "bm25"
    other = BM25Index()
    other.add(["x#0000"], ["half of another sync"])
    other.save(folder)
    _, report = keyword_index(store)
    assert report.damage.startswith("bm25_indptr.npy: ")  # the first file that differs
    assert set(load_keyword(store).ids) == {cid for cid, *_ in store.chunk_spans()}


def test_rebuild_builds_again_from_the_store(store: Store) -> None:
    built, _ = keyword_index(store)
    again, report = keyword_index(store, rebuild=True)
    assert report.rebuilt and not report.damage
    assert (report.documents_updated, report.chunks_added) == (3, len(built))
    assert again.ids == built.ids
    assert report_lines(report) == [f"index keyword: rebuilt from the store: {len(built)} chunks"]


def test_leftover_temporary_files_are_cleared_by_the_next_sync(store: Store) -> None:
    keyword_index(store)
    folder = store.directory / "index" / "bm25"
    (folder / ".bm25.json.k1ll3d.tmp").write_text("half", encoding="utf-8")
    keyword_index(store)
    assert not list(folder.glob("*.tmp")) and not list(folder.glob(".*.tmp"))


def test_every_index_beside_the_store_is_listed_with_its_state(store: Store) -> None:
    keyword_index(store)
    keyword_index(store, stem=True)
    vector_index(store, HashEmbedder(dim=64))
    (store.directory / "index" / "bm25-porter" / "manifest.json").write_text("[]", encoding="utf-8")
    found = {place.label: health(place, store) for place in existing_places(store)}
    assert sorted(found) == ["keyword", "keyword (porter)", "vector (hash-embedder-64)"]
    assert found["keyword"].state == found["vector (hash-embedder-64)"].state == "ok"
    assert found["keyword (porter)"].state == "damaged"
    problem = found["keyword (porter)"].problem
    assert isinstance(problem, DamagedIndexError) and problem.reason == "manifest.json: not an index manifest"


def test_report_lines_name_damage_and_each_document_left_out() -> None:
    report = SyncReport(
        "vector (e)",
        2,
        0,
        5,
        0,
        1.0,
        {"docs/x.txt": "its embedding is a zero vector"},
        "ids.json: file missing",
        True,
    )
    assert report_lines(report) == [
        "index vector (e): damaged (ids.json: file missing); rebuilt from the store: 5 chunks",
        "missing from index vector (e): docs/x.txt: its embedding is a zero vector",
    ]
