from __future__ import annotations

import re
import sqlite3
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import StoreError
from clear_rag.store import SCHEMA_VERSION, Snapshot, Store, versions
from clear_rag.store.snapshot import no_ingest_under_way
from clear_rag.store.sqlite import holds_ingest_lock
from clear_rag.types import Block, Chunk, Document, Trace


def _doc(text: str = "alpha beta. gamma delta.") -> tuple[Document, list[Chunk]]:
    doc = Document("d.txt", "/x/d.txt", "h1", text, (Block("paragraph", 0, len(text)),))
    return doc, [
        Chunk("d.txt#0000", "d.txt", 0, 11, text[0:11], 0, 3),
        Chunk("d.txt#0001", "d.txt", 12, 24, text[12:24], 1, 3),
    ]


def test_round_trip_keeps_spans_exact(tmp_path: Path) -> None:
    doc, chunks = _doc()
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="text/plain@1", chunker="{}", size_bytes=24)
        assert store.document("d.txt") == doc
        assert list(store.chunks()) == chunks
        assert store.stats().chunks == 2
    with Store(tmp_path / "s") as again:  # reopened: nothing rebuilt, everything there
        assert list(again.chunks("d.txt")) == chunks


def test_uses_wal_and_records_schema_version(tmp_path: Path) -> None:
    with Store(tmp_path / "s") as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)
    db = sqlite3.connect(tmp_path / "s" / "clear-rag.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_other_schema_version_is_refused_with_a_fix(tmp_path: Path) -> None:
    Store(tmp_path / "s").close()
    db = sqlite3.connect(tmp_path / "s" / "clear-rag.db")
    db.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match=r"schema_version='0'.*new --store"):
        Store(tmp_path / "s")


def test_failed_put_rolls_back_and_keeps_the_old_version(tmp_path: Path) -> None:
    doc, chunks = _doc()
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        newer = Document("d.txt", "/x/d.txt", "h2", doc.text, doc.blocks)
        duplicate_ids = [chunks[0], chunks[0]]  # violates the primary key half-way through the write
        with pytest.raises(sqlite3.IntegrityError):
            store.put(newer, duplicate_ids, parser="p", chunker="c", size_bytes=24)
        record = store.record("d.txt")
        assert record is not None
        assert record.content_hash == "h1"
        assert list(store.chunks()) == chunks


def test_put_refuses_a_chunk_that_is_not_a_slice(tmp_path: Path) -> None:
    doc, _ = _doc()
    bad = Chunk("d.txt#0000", "d.txt", 0, 5, "ALPHA", 0, 1)
    with Store(tmp_path / "s") as store, pytest.raises(ValueError, match="exact slice"):
        store.put(doc, [bad], parser="p", chunker="c", size_bytes=1)


def test_delete_cascades_to_blocks_and_chunks(tmp_path: Path) -> None:
    doc, chunks = _doc()
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        store.delete("d.txt")
        stats = store.stats()
        assert (stats.documents, stats.blocks, stats.chunks) == (0, 0, 0)


def test_read_mode_never_creates_a_store(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"holds no store"):
        Store(tmp_path / "none", mode="read")
    assert not (tmp_path / "none").exists()


def test_an_empty_path_or_a_file_is_not_a_store_folder(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"--store='': names no folder"):
        Store("")
    (tmp_path / "notes.txt").write_text("keep", encoding="utf-8")
    with pytest.raises(StoreError, match=r"notes\.txt: is a file, not a store folder"):
        Store(tmp_path / "notes.txt")
    Store(tmp_path / "s").close()
    with pytest.raises(StoreError, match=r"Pass the folder that holds it, --store .*s$"):
        Store(tmp_path / "s" / "clear-rag.db")


def test_a_zero_byte_database_is_a_store_not_made_yet(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "clear-rag.db").write_bytes(b"")
    with Store(tmp_path / "s") as store:
        assert store.get_meta("schema_version") == str(SCHEMA_VERSION)


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (b"my shopping list\n", "is not a clear-rag database (not an SQLite file at all)"),
        (b"SQLite format 3\x00" + b"\xff" * 4080, "is damaged"),
    ],
)
def test_a_database_that_cannot_be_read_is_named(tmp_path: Path, content: bytes, said: str) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "clear-rag.db").write_bytes(content)
    with pytest.raises(StoreError, match=rf"clear-rag\.db: {re.escape(said)}"):
        Store(tmp_path / "s")
    assert (tmp_path / "s" / "clear-rag.db").read_bytes() == content


def test_a_store_opened_for_reading_refuses_writes_by_name(tmp_path: Path) -> None:
    doc, chunks = _doc()
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
    with Store(tmp_path / "s", mode="read") as reader:
        assert reader.read_only and reader.document("d.txt") == doc
        with pytest.raises(StoreError, match=r"clear-rag\.db: is read-only, so nothing can be written"):
            reader.delete("d.txt")
    with Store(tmp_path / "s") as again:
        assert again.record("d.txt") is not None


def test_chunkers_are_the_distinct_settings_of_the_records(tmp_path: Path) -> None:
    with Store(tmp_path / "s") as store:
        assert store.chunkers() == []
        for n, chunker in enumerate(['{"size": 64}', '{"size": 32}', '{"size": 64}']):
            doc = Document(f"d{n}.txt", f"/x/d{n}.txt", f"h{n}", "text", (Block("paragraph", 0, 4),))
            store.put(doc, [], parser="text/plain@1", chunker=chunker, size_bytes=4)
        assert store.chunkers() == sorted({r.chunker for r in store.records()})


def test_titles_are_the_first_heading_else_the_first_line_with_words(tmp_path: Path) -> None:
    from clear_rag.store.reading import TITLE_CHARS

    long_line = "word " * 40
    docs = {
        "a.md": ("intro line\n\n# Brake pads\n\ntext", (Block("heading", 12, 24, level=1),)),
        "b.txt": ("\n  ---  \n  Chain   wear\nmore", ()),
        "c.txt": (long_line, ()),
        "d.txt": ("... --- ...", ()),
    }
    with Store(tmp_path / "s") as store:
        for doc_id, (text, blocks) in docs.items():
            doc = Document(doc_id, doc_id, "h" + doc_id, text, blocks)
            chunk = Chunk(f"{doc_id}#0", doc_id, 0, len(text), text, 0, 1)
            store.put(doc, [chunk], parser="p", chunker="{}", size_bytes=len(text))
        got = store.titles(["a.md", "b.txt", "c.txt", "d.txt", "gone.md", "a.md"])
    assert got["a.md"] == docs["a.md"][0][12:24].strip("# ") == "Brake pads"
    assert got["b.txt"] == "Chain wear"  # the first line holding a word, its spaces folded
    assert len(got["c.txt"]) == TITLE_CHARS and got["c.txt"].endswith("…")
    assert long_line.startswith(got["c.txt"][:-1])
    assert got["d.txt"] == ""  # no line holds a word
    assert "gone.md" not in got


# -- generations, snapshots and the ingest lock ------------------------------------------------------


def _save_trace(store: Store, trace_id: str) -> None:
    store.save_trace(Trace(trace_id, "q", (), (), created_at="2026-01-01T00:00:00"))


def test_the_generation_counts_changes_to_documents_and_chunks_only(tmp_path: Path) -> None:
    doc, chunks = _doc()
    with Store(tmp_path / "s") as store:
        assert store.generation() == 0
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        store.replace_chunks("d.txt", chunks[:1], chunker="c2")
        _save_trace(store, "t1")  # a trace changes no document: a snapshot of before still holds
        assert store.generation() == 2
        store.delete("d.txt")
        assert store.generation() == 3
        with pytest.raises(sqlite3.IntegrityError):  # a change that fails is no change
            store.put(doc, [chunks[0], chunks[0]], parser="p", chunker="c", size_bytes=24)
        assert store.generation() == 3


def test_a_snapshot_reads_the_store_as_it_was_whatever_commits_meanwhile(tmp_path: Path) -> None:
    doc, chunks = _doc()
    shorter = Document("d.txt", "/x/d.txt", "h2", "alpha beta.", doc.blocks[:0])
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        with Snapshot(tmp_path / "s") as seen:
            store.put(shorter, chunks[:1], parser="p", chunker="c", size_bytes=11)
            assert seen.generation() == 1 and store.generation() == 2
            assert seen.document_text("d.txt") == doc.text
            assert seen.chunk_spans() == [(c.id, c.doc_id, c.start, c.end) for c in chunks]
            store.delete("d.txt")
            assert seen.document("d.txt") == doc
        with Snapshot(tmp_path / "s") as now:
            assert now.generation() == 3 and now.chunk_spans() == []
            with pytest.raises(StoreError, match="read-only"):
                now.delete("d.txt")


def test_a_snapshots_chunkers_are_its_generations_until_it_is_released(tmp_path: Path) -> None:
    """A snapshot reads its chunkers once for the pipeline it opens; another chunking an ingest
    commits meanwhile is not among them, and once released it reads the store as it is now."""
    doc, chunks = _doc()
    other = Document("e.txt", "/x/e.txt", "h3", "epsilon.", ())
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        with Snapshot(tmp_path / "s") as seen:
            assert seen.chunkers() == ["c"]
            store.put(other, [], parser="p", chunker="d", size_bytes=8)
            assert seen.chunkers() == ["c"] and store.chunkers() == ["c", "d"]
            seen.release()
            assert seen.chunkers() == ["c", "d"]


def test_a_released_snapshot_reads_its_generations_texts_and_holds_no_read(tmp_path: Path) -> None:
    """After ``release`` the WAL file can be checkpointed to nothing (no read is open), and the texts
    are still the snapshot's, from the versions kept of what was replaced or deleted since."""
    doc, chunks = _doc()
    other = Document("e.txt", "/x/e.txt", "h3", "epsilon.", ())
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        store.put(other, [], parser="p", chunker="c", size_bytes=8)
        with Snapshot(tmp_path / "s") as seen:
            assert checkpoint(tmp_path / "s") == 1  # busy: the snapshot's read holds the WAL
            seen.release()
            assert checkpoint(tmp_path / "s") == 0
            store.put(
                Document("d.txt", "/x/d.txt", "h2", "alpha.", ()), [], parser="p", chunker="c", size_bytes=6
            )
            store.put(
                Document("d.txt", "/x/d.txt", "h4", "alpha beta.", ()),
                [],
                parser="p",
                chunker="c",
                size_bytes=11,
            )
            store.delete("e.txt")
            assert seen.document_text("d.txt") == doc.text  # the first version retired after it
            assert seen.document_text("e.txt") == "epsilon."
            with pytest.raises(KeyError):
                seen.document_text("never.txt")
            with Snapshot(tmp_path / "s") as now:
                assert now.document_text("d.txt") == "alpha beta."
                with pytest.raises(KeyError):
                    now.document_text("e.txt")


def test_kept_versions_are_forgotten_at_the_second_indexing_after_them(tmp_path: Path) -> None:
    """A text the snapshot read before the versions were forgotten it keeps (it is its generation's);
    one it never read it can no longer give, and says so."""
    doc, chunks = _doc()
    other = Document("e.txt", "/x/e.txt", "h3", "epsilon.", ())
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        store.put(other, [], parser="p", chunker="c", size_bytes=8)
        with Snapshot(tmp_path / "s") as seen:
            seen.release()
            store.delete("d.txt")
            store.delete("e.txt")
            store.indexed(store.generation())  # the indexes catch up: a reader of before may still ask
            store.indexed(store.generation())  # an ingest that changed nothing: still kept
            assert seen.document_text("d.txt") == doc.text
            store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
            store.put(other, [], parser="p", chunker="c", size_bytes=8)
            store.indexed(store.generation())  # the next ingest's: every reader has moved on
            assert seen.document_text("d.txt") == doc.text  # read before: kept
            with pytest.raises(StoreError, match=r"no longer keeps the texts of generation 2 .*Ask again"):
                seen.document_text("e.txt")  # stored again since, but not as of generation 2


def checkpoint(store: Path) -> int:
    """Checkpoint the store's WAL file into the database and truncate it; 1 when a read held it."""
    db = sqlite3.connect(store / "clear-rag.db", timeout=0)  # busy at once, not after 5 s of retries
    try:
        return int(db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0])
    finally:
        db.close()


def test_a_change_to_documents_holds_the_ingest_lock_until_released(tmp_path: Path) -> None:
    doc, chunks = _doc()
    order: list[str] = []
    with Store(tmp_path / "s") as store:
        _save_trace(store, "t1")
        assert not holds_ingest_lock(tmp_path / "s")  # traces are not an ingest
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
        assert holds_ingest_lock(tmp_path / "s")

        def reader() -> None:
            assert not holds_ingest_lock(tmp_path / "s")  # held by the thread that changed documents
            with no_ingest_under_way(tmp_path / "s"):
                order.append("read")

        thread = threading.Thread(target=reader)
        thread.start()
        order.append("released")  # before the release: the reader cannot be in until after it
        store.release_ingest_lock()
        thread.join(5)
        assert not holds_ingest_lock(tmp_path / "s")
    assert order == ["released", "read"]


def test_closing_a_store_releases_its_ingest_lock(tmp_path: Path) -> None:
    doc, chunks = _doc()
    with Store(tmp_path / "s") as store:
        store.put(doc, chunks, parser="p", chunker="c", size_bytes=24)
    assert not holds_ingest_lock(tmp_path / "s")
    with no_ingest_under_way(tmp_path / "s"):  # nothing to wait for
        pass


@settings(max_examples=40, deadline=None)
@given(
    steps=st.lists(
        st.tuples(
            st.sampled_from(["put", "delete", "snapshot"]), st.integers(0, 4), st.text("ab .", max_size=8)
        ),
        max_size=14,
    ),
    batch=st.integers(1, 5),
)
def test_a_snapshots_texts_read_together_are_its_generations(
    steps: list[tuple[str, int, str]], batch: int
) -> None:
    """Documents put, replaced and deleted in any order, with snapshots taken between: every released
    snapshot reads its generation's documents at once (and an id never stored) as a model of the
    store kept beside it says, and one at a time the same. ``batch`` ids a statement."""
    with tempfile.TemporaryDirectory() as folder, pytest.MonkeyPatch.context() as patch:
        patch.setattr(versions, "BATCH", batch)
        store = Store(Path(folder) / "s")
        now: dict[str, str] = {}
        seen: list[tuple[Snapshot, dict[str, str]]] = []
        try:
            for action, n, text in steps:
                doc_id = f"d{n}.txt"
                if action == "put":
                    body = f"{text} {len(seen)}."
                    store.put(
                        Document(doc_id, f"/x/{doc_id}", body, body, ()),
                        [],
                        parser="p",
                        chunker="c",
                        size_bytes=1,
                    )
                    now[doc_id] = body
                elif action == "delete" and doc_id in now:
                    store.delete(doc_id)
                    del now[doc_id]
                elif action == "snapshot":
                    snapshot = Snapshot(Path(folder) / "s")
                    snapshot.release()
                    seen.append((snapshot, dict(now)))
            for snapshot, then in seen:
                # What a pipeline asks: documents of its generation (one stored only later is not in
                # its chunk table), and here one never stored.
                asked = [*then, "never.txt"]
                assert snapshot.document_texts(asked) == then
                for doc_id in asked:
                    if doc_id in then:
                        assert snapshot.document_text(doc_id) == then[doc_id]
                    else:
                        with pytest.raises(KeyError):
                            snapshot.document_text(doc_id)
        finally:
            for snapshot, _ in seen:
                snapshot.close()
            store.close()
