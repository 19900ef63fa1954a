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
from collections.abc import Sequence

from clear_rag.errors import StoreError

# Ids a statement of texts_at names, twice each: under SQLite's oldest bound of 999 host parameters.
BATCH = 400
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
    """The text ``doc_id`` had at ``generation``, or None where it had none (see :func:`texts_at`)."""
    return texts_at(db, [doc_id], generation).get(doc_id)


def texts_at(db: sqlite3.Connection, doc_ids: Sequence[str], generation: int) -> dict[str, str]:
    """The text each of ``doc_ids`` had at ``generation``, by id (one with none is left out), in one
    statement per ``BATCH`` ids (a question's context reads ten or so documents: one statement, not
    ten); a ``StoreError`` where a version may have been forgotten. A store no change has touched
    since it gained versions has no ``retired`` table yet, and its texts are those of every generation.

    The texts are read before the mark of what was forgotten: a ``forget`` committed between the two
    reads is then seen by the second, and the question is told, never given a later text."""
    wanted = list(dict.fromkeys(doc_ids))
    found: dict[str, str] = {}
    for at in range(0, len(wanted), BATCH):
        batch = wanted[at : at + BATCH]
        marks = ",".join("?" * len(batch))
        try:
            rows = db.execute(
                f"SELECT id, text, until FROM retired WHERE id IN ({marks}) AND until > ? "
                f"UNION ALL SELECT id, text, NULL FROM documents WHERE id IN ({marks})",
                (*batch, generation, *batch),
            ).fetchall()
        except sqlite3.OperationalError as err:
            if "no such table" not in str(err):
                raise
            rows = db.execute(f"SELECT id, text, NULL FROM documents WHERE id IN ({marks})", batch).fetchall()
        # The version the first change after the generation retired, else the document's own text.
        first: dict[str, tuple[float, str]] = {}
        for doc_id, text, until in rows:
            order = float("inf") if until is None else float(until)
            if doc_id not in first or order < first[doc_id][0]:
                first[doc_id] = (order, text)
        found.update({str(doc_id): str(text) for doc_id, (_, text) in first.items()})
    forgotten = db.execute("SELECT value FROM meta WHERE key = ?", (FORGOTTEN,)).fetchone()
    if forgotten is not None and int(forgotten[0]) > generation:
        raise StoreError(
            f"no longer keeps the texts of generation {generation} of its documents, which this question "
            "reads: two ingests were indexed since its pipeline was opened",
            fix="Ask again: a new question reads the store as it is now",
        )
    return found


def forget(db: sqlite3.Connection, ended_by: int) -> None:
    """Drop the versions that a change up to generation ``ended_by`` retired (in a write transaction)."""
    db.execute("DELETE FROM retired WHERE until <= ?", (ended_by,))
    db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (FORGOTTEN, str(ended_by)))
