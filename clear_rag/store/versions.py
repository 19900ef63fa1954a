"""Earlier versions of documents' texts, kept for readers of an earlier generation of the store.

A pipeline reads the chunk table of one generation of the store (``clear_rag.store.snapshot``) and
then documents' texts for as long as it answers questions. Keeping its read transaction open that
long would keep them consistent, but SQLite cannot checkpoint the WAL file past the oldest open read:
under a server that always has a question in flight the WAL grew with every trace, to 60 MB over the
1,200 questions of ``tests/reliability/test_snapshot.py`` against 4.7 MB without such reads.

So the writer keeps what readers need instead: a change that replaces or deletes a document first
copies its text here, marked with the generation that ended it (``retire``), and a reader of
generation G reads the version that the first change after G retired, or the document's text if no
change since G touched it (``text_at``), in one statement. Versions are forgotten at the second sync
of the indexes after they were retired (``forget``): a pipeline opened before the first of the two
has been replaced by then (the server opens a new one once the indexes change). One that is still
asked is told so, rather than given a later text than its chunks were cut from.
"""

from __future__ import annotations

import sqlite3

from clear_rag.errors import StoreError

FORGOTTEN = "versions forgotten"  # the meta key: versions ended at or before this generation are gone
RETIRED = """CREATE TABLE IF NOT EXISTS retired (
    id TEXT NOT NULL,
    until INTEGER NOT NULL,
    text TEXT NOT NULL,
    PRIMARY KEY (id, until)
)"""


def retire(db: sqlite3.Connection, doc_id: str, generation: int) -> None:
    """Keep the text of ``doc_id`` (if stored) as the version ``generation`` ends; inside its change's
    transaction, before the document is replaced or deleted."""
    db.execute(
        "INSERT OR REPLACE INTO retired (id, until, text) SELECT id, ?, text FROM documents WHERE id = ?",
        (generation, doc_id),
    )


def text_at(db: sqlite3.Connection, doc_id: str, generation: int) -> str | None:
    """The text ``doc_id`` had at ``generation``, or None where it had none; a ``StoreError`` where
    that version may have been forgotten. A store no change has touched since it gained versions has
    no ``retired`` table yet, and its texts are those of every generation."""
    try:
        forgotten, text = db.execute(
            "SELECT (SELECT value FROM meta WHERE key = ?3), (SELECT text FROM ("
            "SELECT text, until FROM retired WHERE id = ?1 AND until > ?2 "
            "UNION ALL SELECT text, NULL FROM documents WHERE id = ?1) "
            "ORDER BY until IS NULL, until LIMIT 1)",
            (doc_id, generation, FORGOTTEN),
        ).fetchone()
    except sqlite3.OperationalError as err:
        if "no such table" not in str(err):
            raise
        forgotten, text = None, db.execute("SELECT text FROM documents WHERE id = ?", (doc_id,)).fetchone()
        text = None if text is None else text[0]
    if forgotten is not None and int(forgotten) > generation:
        raise StoreError(
            f"no longer keeps the texts of generation {generation} of its documents, which this question "
            "reads: two ingests were indexed since its pipeline was opened",
            fix="Ask again: a new question reads the store as it is now",
        )
    return None if text is None else str(text)


def forget(db: sqlite3.Connection, ended_by: int) -> None:
    """Drop the versions that a change up to generation ``ended_by`` retired (in a write transaction)."""
    db.execute("DELETE FROM retired WHERE until <= ?", (ended_by,))
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (FORGOTTEN, str(ended_by)))
