"""Documents, blocks and chunks in one SQLite database (WAL), with a schema version.

A store is a directory: the database lives in it, and the indexes are written beside it. Opening a
store reads nothing but its settings; nothing is rebuilt at start-up (the predecessor re-chunked and
re-indexed its whole corpus on every launch, so start-up time grew with the corpus).

Chunk text is not stored: it is the slice of its document's text over the chunk's span, which keeps
the one invariant ``document.text[start:end] == chunk.text`` true by construction.

Every change to documents or chunks counts up the store's generation (``meta``) in its transaction,
and keeps the text it replaces or deletes for readers of earlier generations
(``clear_rag.store.versions``), so a pipeline that read one generation's chunks goes on reading that
generation's texts while an ingest commits (``clear_rag.store.snapshot``). The first such change of a
``Store`` takes the ingest lock, held until its indexes are brought up to date: a reader that finds
the indexes behind the documents knows an ingest is under way and waits for it rather than fail.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Literal

from clear_rag import environ
from clear_rag.errors import StoreError
from clear_rag.locks import locked
from clear_rag.store import versions
from clear_rag.store.database import GENERATION, read_generation
from clear_rag.store.opening import connect, prepare_folder, store_failure, write_refusal
from clear_rag.store.reading import Reading
from clear_rag.store.schema import ADD_TEXT_TOKENS, CHUNK_COLUMNS, SCHEMA, SCHEMA_VERSION, has_text_tokens
from clear_rag.store.traces import TraceLog
from clear_rag.types import Chunk, Document

DB_NAME = "clear-rag.db"
DEFAULT_DIR = ".clear-rag"  # the store of a project, in the folder a command runs in
STORE_ENV = environ.STORE.name  # or the store this names, as --store does
OpenMode = Literal["auto", "write", "read"]
INDEXED = "indexed generation"  # the meta key: the generation the indexes were last brought up to
INGEST_LOCK = "ingest"  # .ingest.lock in the store folder: held shared while an ingest changes documents


@dataclass(frozen=True, slots=True)
class StoreStats:
    documents: int
    blocks: int
    chunks: int
    chunk_tokens: int
    max_chunk_tokens: int
    db_bytes: int
    by_media_type: dict[str, int]


class Store(Reading, TraceLog):
    """One store directory. Use as a context manager, or call ``close()``.

    Its reads of documents and chunks are ``clear_rag.store.reading``'s, its traces and conversations
    ``clear_rag.store.traces``'s; opening, closing and every change to documents and chunks are here."""

    def __init__(
        self, directory: str | Path, *, root: str | Path | None = None, mode: OpenMode = "auto"
    ) -> None:
        """Open (or, unless ``mode`` is ``"read"``, create) the store in ``directory``.

        ``mode`` says what the caller needs. ``"write"`` (ingest) refuses a store it cannot write
        before any work is done; ``"read"`` never writes a byte; ``"auto"`` writes where it may and
        otherwise opens read-only, so ``status`` still reads a store on a read-only disk, and a
        write is then refused with ``StoreError``. Every way opening fails (a file where the folder
        should be, a file that is not a database, a damaged one, no permission) is a ``StoreError``
        naming the path; the predecessor let most of them out as ``sqlite3`` tracebacks.
        """
        if str(directory) == "":
            raise StoreError(
                "names no folder (an empty path would put the store in the current folder)",
                field="--store",
                value="",
                fix=f"Name the store folder, e.g. --store {DEFAULT_DIR}",
            )
        self.directory = Path(directory)
        self.db_path = self.directory / DB_NAME
        fresh = prepare_folder(self.directory, self.db_path, create=mode != "read")
        refusal = write_refusal(self.directory, self.db_path, fresh)
        if refusal is not None and (mode == "write" or fresh):
            raise refusal
        self.read_only = mode == "read" or refusal is not None
        self._ingesting: contextlib.ExitStack | None = None  # the ingest lock, while this store holds it
        try:
            self._db = connect(self.db_path, read_only=self.read_only)
        except sqlite3.DatabaseError as err:
            raise store_failure(err, self.db_path) from err
        try:
            if fresh:
                self._create(Path(root) if root is not None else Path.cwd())
            self._check_version()
            self.counts_kept = has_text_tokens(self._db)
            self.root = Path(self.get_meta("root") or Path.cwd())
        except sqlite3.DatabaseError as err:
            self._db.close()
            raise store_failure(err, self.db_path) from err
        except BaseException:
            self._db.close()
            raise

    def _create(self, root: Path) -> None:
        with self.transaction():
            # executescript() would COMMIT first and break the transaction, so run statements singly.
            for statement in SCHEMA.strip().split(";\n"):
                self._db.execute(statement)
            self._set_meta("schema_version", str(SCHEMA_VERSION))
            self._set_meta("root", str(root.resolve()))
            self._set_meta("created_at", _now())

    def _check_version(self) -> None:
        tables = {row[0] for row in self._db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "meta" not in tables:
            raise StoreError(
                "is an SQLite database but not a clear-rag store (it has no meta table)",
                path=str(self.db_path),
                fix="Move it aside, or choose another folder with --store / CLEAR_RAG_STORE",
            )
        found = self.get_meta("schema_version")
        if found != str(SCHEMA_VERSION):
            raise StoreError(
                "was written by another version of clear-rag",
                path=str(self.db_path),
                field="schema_version",
                value=found,
                fix=f"This version reads schema {SCHEMA_VERSION}: ingest into a new --store directory",
            )

    # -- plumbing -----------------------------------------------------------------------------

    def close(self) -> None:
        self.release_ingest_lock()
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # -- generations and the ingest lock --------------------------------------------------------

    def indexed(self, generation: int) -> None:
        """Say that the indexes now cover ``generation`` (``sync_indexes`` calls it): the texts kept for
        readers of generations before the previous such one are dropped, and readers waiting for this
        store's ingest go on."""
        if not self.read_only:
            with self.transaction():
                previous = int(self.get_meta(INDEXED) or 0)
                if generation > previous:  # an ingest that changed nothing leaves every version kept
                    self._db.execute(versions.RETIRED)
                    versions.forget(self._db, previous)
                    self._set_meta(INDEXED, str(generation))
        self.release_ingest_lock()

    def release_ingest_lock(self) -> None:
        """Say that no more changes of this store's are on their way to the indexes (``indexed``, or
        an ingest that updates no index): readers waiting for the ingest go on."""
        if self._ingesting is not None:
            self._ingesting.close()
            self._ingesting = None

    @contextlib.contextmanager
    def _changing(self) -> Iterator[int]:
        """The transaction of a change to documents or chunks, given the generation it makes: the
        ingest lock is taken first (and kept)."""
        transaction = self.transaction()  # a read-only store refuses before any lock is taken
        if self._ingesting is None:
            held = contextlib.ExitStack()
            held.enter_context(locked(self.directory, INGEST_LOCK, shared=True))
            holder = (str(self.directory.resolve()), threading.get_ident())
            _count_holder(holder, 1)
            held.callback(_count_holder, holder, -1)
            self._ingesting = held
        with transaction:
            self._db.execute(
                "INSERT INTO meta (key, value) VALUES (?, '1') "
                "ON CONFLICT (key) DO UPDATE SET value = CAST(value AS INTEGER) + 1",
                (GENERATION,),
            )
            self._db.execute(versions.RETIRED)  # a store made before versions gains the table here
            if not self.counts_kept and not has_text_tokens(self._db):
                self._db.execute(ADD_TEXT_TOKENS)  # and one made before chunks' own token counts, theirs
            yield read_generation(self._db)
        self.counts_kept = True  # committed (a rolled-back change takes the column back with it)

    # -- writing ------------------------------------------------------------------------------

    def put(self, doc: Document, chunks: list[Chunk], *, parser: str, chunker: str, size_bytes: int) -> None:
        """Insert or replace one document with its blocks and chunks, in one transaction."""
        for chunk in chunks:
            if chunk.doc_id != doc.id or doc.text[chunk.start : chunk.end] != chunk.text:
                raise ValueError(f"chunk {chunk.id!r} is not an exact slice of document {doc.id!r}")
        with self._changing() as generation:
            versions.retire(self._db, doc.id, generation)
            self._db.execute("DELETE FROM documents WHERE id = ?", (doc.id,))
            self._db.execute(
                "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    doc.id,
                    doc.source,
                    doc.content_hash,
                    doc.media_type,
                    parser,
                    chunker,
                    size_bytes,
                    doc.text,
                    _now(),
                ),
            )
            self._db.executemany(
                "INSERT INTO blocks VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    (doc.id, i, b.kind, b.start, b.end, b.level, json.dumps(dict(b.meta), sort_keys=True))
                    for i, b in enumerate(doc.blocks)
                ],
            )
            self._db.executemany(_INSERT_CHUNK, [_chunk_row(c) for c in chunks])

    def replace_chunks(self, doc_id: str, chunks: list[Chunk], *, chunker: str) -> None:
        """Swap a document's chunks (after a chunker change) without touching its text or blocks (so
        no version of it is kept: a reader of an earlier generation holds its chunks already)."""
        with self._changing():
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            self._db.executemany(_INSERT_CHUNK, [_chunk_row(c) for c in chunks])
            self._db.execute("UPDATE documents SET chunker = ? WHERE id = ?", (chunker, doc_id))

    def delete(self, doc_id: str) -> None:
        with self._changing() as generation:
            versions.retire(self._db, doc_id, generation)
            self._db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    def stats(self) -> StoreStats:
        one = self._db.execute
        docs, blocks = (
            one("SELECT count(*) FROM documents").fetchone()[0],
            one("SELECT count(*) FROM blocks").fetchone()[0],
        )
        chunks, tokens, max_tokens = one(
            "SELECT count(*), coalesce(sum(token_count), 0), coalesce(max(token_count), 0) FROM chunks"
        ).fetchone()
        by_type = dict(one("SELECT media_type, count(*) FROM documents GROUP BY media_type ORDER BY 1"))
        size = sum(p.stat().st_size for p in self.directory.glob(f"{DB_NAME}*") if p.is_file())
        return StoreStats(docs, blocks, chunks, tokens, max_tokens, size, by_type)


_INSERT_CHUNK = f"INSERT INTO chunks ({CHUNK_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)"


def _chunk_row(c: Chunk) -> tuple[str, str, int, int, int, int, int | None]:
    return (c.id, c.doc_id, c.position, c.start, c.end, c.token_count, c.text_tokens)


# The ingest locks this process holds, by (store folder, thread that took it).
_HOLDERS: Counter[tuple[str, int]] = Counter()
_HOLDERS_LOCK = threading.Lock()


def _count_holder(holder: tuple[str, int], step: int) -> None:
    with _HOLDERS_LOCK:
        _HOLDERS[holder] += step


def holds_ingest_lock(directory: Path) -> bool:
    """Whether this thread holds the ingest lock of the store in ``directory`` (through any ``Store``
    of it): a reader that waited for that ingest would wait for itself."""
    with _HOLDERS_LOCK:
        return _HOLDERS[(str(directory.resolve()), threading.get_ident())] > 0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")
