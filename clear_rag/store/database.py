"""The open database under a ``Store``: its transactions and its meta table.

``Store`` is put together from parts, each in a module of its own (reading documents and chunks,
``clear_rag.store.reading``; traces and conversations, ``clear_rag.store.traces``); this is what they
all read and write through. ``Store.__init__`` (``clear_rag.store.sqlite``) opens the connection.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import TracebackType

from clear_rag.errors import StoreError

GENERATION = "generation"  # the meta key counting changes to documents and chunks


class Database:
    """The connection of one store directory and what every part of ``Store`` does with it."""

    directory: Path
    db_path: Path
    read_only: bool
    _db: sqlite3.Connection

    def transaction(self) -> Transaction:
        """``with store.transaction():`` commits on success and rolls back on any error.

        A store opened read-only refuses here, by name, rather than in SQLite's own words.
        """
        if self.read_only:
            raise StoreError(
                "is read-only, so nothing can be written to it",
                path=str(self.db_path),
                fix="Check the permissions of the store folder and its database, or use another --store",
            )
        return Transaction(self._db)

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


class Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self._db = db

    def __enter__(self) -> None:
        self._db.execute("BEGIN IMMEDIATE")

    def __exit__(
        self, kind: type[BaseException] | None, err: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._db.execute("COMMIT" if kind is None else "ROLLBACK")


def read_generation(db: sqlite3.Connection) -> int:
    """The store's generation as ``db`` sees it (``Store.generation``)."""
    row = db.execute("SELECT value FROM meta WHERE key = ?", (GENERATION,)).fetchone()
    return 0 if row is None else int(row[0])
