"""The tables of a store's database (``clear_rag.store.sqlite``), and the version of their layout
that a store checks when it opens."""

from __future__ import annotations

import sqlite3

SCHEMA_VERSION = 1

SCHEMA = """
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
    token_count INTEGER NOT NULL,
    text_tokens INTEGER
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
TURNS = SCHEMA[SCHEMA.index("CREATE TABLE IF NOT EXISTS turns") :].strip().rstrip(";")

# Chunks' own token counts (``Chunk.text_tokens``) came after schema 1 too: a store made before them
# gains the column (NULL in its rows) at its first change, and until then reads as holding no counts,
# which a question then counts once (``clear_rag.retrieve.counts``).
TEXT_TOKENS = "text_tokens"
ADD_TEXT_TOKENS = f"ALTER TABLE chunks ADD COLUMN {TEXT_TOKENS} INTEGER"
CHUNK_COLUMNS = f'id, doc_id, position, start, "end", token_count, {TEXT_TOKENS}'


def has_text_tokens(db: sqlite3.Connection) -> bool:
    """Whether the chunks table has the column of chunks' own token counts."""
    return any(row[1] == TEXT_TOKENS for row in db.execute("PRAGMA table_info(chunks)"))
