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
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Literal

from clear_rag import environ
from clear_rag import trace as trace_json
from clear_rag.errors import StoreError
from clear_rag.locks import locked
from clear_rag.store import versions
from clear_rag.store.opening import connect, prepare_folder, store_failure, write_refusal
from clear_rag.types import Block, Chunk, Document, Trace

SCHEMA_VERSION = 1
DB_NAME = "clear-rag.db"
DEFAULT_DIR = ".clear-rag"  # the store of a project, in the folder a command runs in
TITLE_CHARS = 80  # a title longer than this is cut, with an ellipsis
STORE_ENV = environ.STORE.name  # or the store this names, as --store does
OpenMode = Literal["auto", "write", "read"]
GENERATION = "generation"  # the meta key counting changes to documents and chunks
INDEXED = "indexed generation"  # the meta key: the generation the indexes were last brought up to
INGEST_LOCK = "ingest"  # .ingest.lock in the store folder: held shared while an ingest changes documents

_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE documents (
    id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    media_type TEXT NOT NULL,
    parser TEXT NOT NULL,
    chunker TEXT NOT NULL,
    size_bytes INTEGER NOT NULL,
    text TEXT NOT NULL,
    ingested_at TEXT NOT NULL
);
CREATE TABLE blocks (
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    kind TEXT NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    level INTEGER NOT NULL,
    meta TEXT NOT NULL,
    PRIMARY KEY (doc_id, position)
);
CREATE TABLE chunks (
    id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
    position INTEGER NOT NULL,
    start INTEGER NOT NULL,
    "end" INTEGER NOT NULL,
    token_count INTEGER NOT NULL
);
CREATE INDEX chunks_by_doc ON chunks (doc_id, position);
CREATE TABLE traces (
    id TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    query TEXT NOT NULL,
    config_hash TEXT NOT NULL,
    body TEXT NOT NULL
);
CREATE INDEX traces_by_time ON traces (created_at);
CREATE TABLE IF NOT EXISTS turns (
    conversation TEXT NOT NULL,
    position INTEGER NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    trace_id TEXT NOT NULL,
    PRIMARY KEY (conversation, position)
);
"""

# Conversations came after schema 1 without changing what it holds: a store made before them gains
# the table on its first turn, and reads as having no conversations until then.
_TURNS = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS turns") :].strip().rstrip(";")


@dataclass(frozen=True, slots=True)
class DocumentRecord:
    """What the store knows about a document without loading its text."""

    id: str
    source: str
    content_hash: str
    media_type: str
    parser: str
    chunker: str
    size_bytes: int


@dataclass(frozen=True, slots=True)
class StoreStats:
    documents: int
    blocks: int
    chunks: int
    chunk_tokens: int
    max_chunk_tokens: int
    db_bytes: int
    by_media_type: dict[str, int]


class Store:
    """One store directory. Use as a context manager, or call ``close()``."""

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
            for statement in _SCHEMA.strip().split(";\n"):
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

    def transaction(self) -> _Transaction:
        """``with store.transaction():`` commits on success and rolls back on any error.

        A store opened read-only refuses here, by name, rather than in SQLite's own words.
        """
        if self.read_only:
            raise StoreError(
                "is read-only, so nothing can be written to it",
                path=str(self.db_path),
                fix="Check the permissions of the store folder and its database, or use another --store",
            )
        return _Transaction(self._db)

    def get_meta(self, key: str) -> str | None:
        try:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        except sqlite3.OperationalError:
            return None  # not a clear-rag database: the version check reports it
        return None if row is None else str(row[0])

    def _set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def generation(self) -> int:
        """How many changes to documents or chunks the store has had (0 for a store made before it
        counted them): two reads that see one generation see the same documents and chunks."""
        return read_generation(self._db)

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
            yield read_generation(self._db)

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
            self._db.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                [(c.id, c.doc_id, c.position, c.start, c.end, c.token_count) for c in chunks],
            )

    def replace_chunks(self, doc_id: str, chunks: list[Chunk], *, chunker: str) -> None:
        """Swap a document's chunks (after a chunker change) without touching its text or blocks (so
        no version of it is kept: a reader of an earlier generation holds its chunks already)."""
        with self._changing():
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            self._db.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?)",
                [(c.id, c.doc_id, c.position, c.start, c.end, c.token_count) for c in chunks],
            )
            self._db.execute("UPDATE documents SET chunker = ? WHERE id = ?", (chunker, doc_id))

    def delete(self, doc_id: str) -> None:
        with self._changing() as generation:
            versions.retire(self._db, doc_id, generation)
            self._db.execute("DELETE FROM documents WHERE id = ?", (doc_id,))

    # -- reading ------------------------------------------------------------------------------

    def record(self, doc_id: str) -> DocumentRecord | None:
        row = self._db.execute(
            "SELECT id, source, content_hash, media_type, parser, chunker, size_bytes "
            "FROM documents WHERE id = ?",
            (doc_id,),
        ).fetchone()
        return None if row is None else DocumentRecord(*row)

    def records(self) -> list[DocumentRecord]:
        rows = self._db.execute(
            "SELECT id, source, content_hash, media_type, parser, chunker, size_bytes "
            "FROM documents ORDER BY id"
        ).fetchall()
        return [DocumentRecord(*row) for row in rows]

    def chunkers(self) -> list[str]:
        """The distinct chunker settings the documents were chunked with (one per chunking), read
        without loading every document's record: a store of 100,000 documents has one or two."""
        rows = self._db.execute("SELECT DISTINCT chunker FROM documents ORDER BY chunker").fetchall()
        return [str(row[0]) for row in rows]

    def document(self, doc_id: str) -> Document:
        row = self._db.execute(
            "SELECT source, content_hash, text, media_type FROM documents WHERE id = ?", (doc_id,)
        ).fetchone()
        if row is None:
            raise KeyError(doc_id)
        blocks = tuple(
            Block(kind, start, end, level, json.loads(meta))
            for kind, start, end, level, meta in self._db.execute(
                'SELECT kind, start, "end", level, meta FROM blocks WHERE doc_id = ? ORDER BY position',
                (doc_id,),
            )
        )
        source, content_hash, text, media_type = row
        return Document(doc_id, source, content_hash, text, blocks, media_type)

    def titles(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """Each known document's title as a person would name it: its first heading's text, else its
        first line that holds any word, cut to TITLE_CHARS; ids the store does not hold are left out.
        Read in SQL (the heading's span sliced there), so no document's whole text is loaded."""
        wanted = list(dict.fromkeys(doc_ids))
        found: dict[str, str] = {}
        for at in range(0, len(wanted), 500):  # under SQLite's bound on host parameters
            batch = wanted[at : at + 500]
            marks = ",".join("?" * len(batch))
            rows = self._db.execute(
                f"""SELECT d.id,
                        (SELECT substr(d.text, b.start + 1, min(b."end" - b.start, {TITLE_CHARS * 2}))
                           FROM blocks b WHERE b.doc_id = d.id AND b.kind = 'heading'
                          ORDER BY b.position LIMIT 1),
                        substr(d.text, 1, 2000)
                   FROM documents d WHERE d.id IN ({marks})""",
                batch,
            )
            for doc_id, heading, head in rows:
                found[str(doc_id)] = _title(heading, head)
        return found

    def document_text(self, doc_id: str) -> str:
        row = self._db.execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()
        if row is None:
            raise KeyError(doc_id)
        return str(row[0])

    def chunks(self, doc_id: str | None = None) -> Iterator[Chunk]:
        """Chunks in (document, position) order, their text sliced from the document's text.

        Each document's text is read once, not once per chunk row: a join would copy a 50 MB text
        into every one of its thousands of rows, which made indexing quadratic in document size.
        """
        ids = (
            [doc_id]
            if doc_id is not None
            else [str(row[0]) for row in self._db.execute("SELECT id FROM documents ORDER BY id")]
        )
        for owner in ids:
            rows = self._db.execute(
                'SELECT id, position, start, "end", token_count FROM chunks '
                "WHERE doc_id = ? ORDER BY position",
                (owner,),
            ).fetchall()
            if not rows:
                continue
            text = self.document_text(owner)
            for chunk_id, position, start, end, tokens in rows:
                yield Chunk(chunk_id, owner, start, end, text[start:end], position, tokens)

    # -- traces -------------------------------------------------------------------------------

    def save_trace(self, trace: Trace, *, config_hash: str = "") -> None:
        with self.transaction():
            self._db.execute(
                "INSERT OR REPLACE INTO traces VALUES (?, ?, ?, ?, ?)",
                (trace.id, trace.created_at, trace.query, config_hash, trace_json.to_json(trace)),
            )

    def load_trace(self, trace_id: str) -> Trace:
        """The stored trace ``trace_id``; a unique prefix of the id is enough."""
        rows = self._db.execute("SELECT body FROM traces WHERE id = ?", (trace_id,)).fetchall()
        if not rows:
            escaped = trace_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = self._db.execute(
                "SELECT body FROM traces WHERE id LIKE ? ESCAPE '\\' LIMIT 2", (escaped + "%",)
            ).fetchall()
        if len(rows) != 1:
            what = "matches no stored trace" if not rows else "matches more than one trace"
            raise StoreError(
                what,
                path=str(self.db_path),
                field="trace id",
                value=trace_id,
                fix="Run `clear-rag replay --list` to see stored trace ids",
            )
        return trace_json.from_json(str(rows[0][0]))

    def add_turn(self, conversation: str, question: str, answer: str, trace_id: str) -> None:
        """Append one question and its answer to a conversation (created by its first turn)."""
        with self.transaction():
            self._db.execute(_TURNS)
            self._db.execute(
                "INSERT INTO turns SELECT ?, coalesce(max(position), -1) + 1, ?, ?, ? FROM turns "
                "WHERE conversation = ?",
                (conversation, question, answer, trace_id, conversation),
            )

    def turns(self, conversation: str) -> list[tuple[str, str, str]]:
        """A conversation's turns in order, as (question, answer, trace id); none if it is unknown."""
        try:
            rows = self._db.execute(
                "SELECT question, answer, trace_id FROM turns WHERE conversation = ? ORDER BY position",
                (conversation,),
            ).fetchall()
        except sqlite3.OperationalError:
            return []  # a store from before conversations, which has had none
        return [(str(q), str(a), str(t)) for q, a, t in rows]

    def traces(self, limit: int = 20) -> list[tuple[str, str, str]]:
        """The newest traces as (id, created_at, query)."""
        rows = self._db.execute(
            "SELECT id, created_at, query FROM traces ORDER BY created_at DESC, id LIMIT ?", (limit,)
        ).fetchall()
        return [(str(a), str(b), str(c)) for a, b, c in rows]

    def chunk_spans(self) -> list[tuple[str, str, int, int]]:
        """Every chunk as (chunk id, document id, start, end), without reading any text."""
        rows = self._db.execute('SELECT id, doc_id, start, "end" FROM chunks ORDER BY doc_id, position')
        return [(str(a), str(b), int(c), int(d)) for a, b, c, d in rows]

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


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


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


def read_generation(db: sqlite3.Connection) -> int:
    """The store's generation as ``db`` sees it (``Store.generation``)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (GENERATION,)).fetchone()
    return 0 if row is None else int(row[0])


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def _title(heading: str | None, head: str) -> str:
    """A heading's text, else the first line of ``head`` that holds a letter or digit, on one line."""
    for text in (heading or "", *head.splitlines()):
        line = " ".join(text.split()).strip(" #")
        if any(ch.isalnum() for ch in line):
            return line if len(line) <= TITLE_CHARS else line[: TITLE_CHARS - 1].rstrip() + "…"
    return ""
