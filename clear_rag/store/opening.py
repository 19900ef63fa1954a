"""Opening a store's database: every way it can fail becomes a ``StoreError`` naming the path.

The predecessor opened the database with a bare ``sqlite3.connect`` and let a file where the folder
should be, a file that is not a database, a damaged one or a read-only disk out as tracebacks, even
for ``status``. Here the folder is checked first, write access is checked before any work, and a
read-only store is opened read-only (``immutable`` where WAL's shared-memory file cannot be made).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from clear_rag.errors import StoreError

_SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite database file
_WHERE = "choose another folder with --store / CLEAR_RAG_STORE"


def prepare_folder(directory: Path, db_path: Path, *, create: bool) -> bool:
    """Check the store folder (creating it when ``create``); whether its database is still to make.

    A zero-byte database counts as not made yet: SQLite reads it as empty, and the schema goes in.
    """
    if directory.exists() and not directory.is_dir():
        fix = (
            f"Pass the folder that holds it, --store {directory.parent}"
            if directory.name == db_path.name
            else "Pass a folder to --store / CLEAR_RAG_STORE; it is created if missing"
        )
        raise StoreError("is a file, not a store folder", path=str(directory), fix=fix)
    if not create:
        if not db_path.is_file():
            raise StoreError(
                "holds no store",
                path=str(directory),
                fix="Run `clear-rag ingest PATH` first, or pass --store / CLEAR_RAG_STORE",
            )
        return False
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return not db_path.exists() or db_path.stat().st_size == 0
    except OSError as err:
        raise StoreError(
            f"cannot be created ({err.strerror or type(err).__name__})",
            path=str(directory),
            fix=f"Check the path and its permissions, or {_WHERE}",
        ) from err


def write_refusal(directory: Path, db_path: Path, fresh: bool) -> StoreError | None:
    """Why this process cannot write the store, or None. Under WAL a writer needs the database and
    the folder (for the ``-wal`` and ``-shm`` files) writable; checked with the effective ids, so a
    process without permission is told before any work rather than at its first commit."""
    effective = os.access in os.supports_effective_ids
    for path in (directory,) if fresh else (db_path, directory):
        if not os.access(path, os.W_OK, effective_ids=effective):
            return StoreError(
                "is read-only (this process may not write it)",
                path=str(path),
                fix=f"Ingest needs a store it can write: check its permissions, or {_WHERE}",
            )
    return None


def connect(db_path: Path, *, read_only: bool) -> sqlite3.Connection:
    """A connection: read-write in WAL mode, or read-only without writing anything.

    Read-only under WAL still needs the ``-shm`` file, which a read-only folder cannot hold; then
    the database is opened ``immutable``, which is safe because no one can write it either, unless
    a ``-wal`` file still holds commits the database has not taken in: those would be missed.
    """
    if not read_only:
        db = sqlite3.connect(db_path, isolation_level=None, check_same_thread=False)
        db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is the documented safe level under WAL: a power cut can lose the last commits but
        # never corrupts the database, and each document's commit skips an fsync.
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute("PRAGMA foreign_keys=ON")
        return db
    uri = "file:" + quote(os.fsencode(db_path.absolute())) + "?mode=ro"
    db = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    try:
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.OperationalError:
        db.close()
    wal = db_path.with_name(db_path.name + "-wal")
    if wal.exists() and wal.stat().st_size > 0:
        raise StoreError(
            f"is read-only and its last changes are still in {wal.name}, which cannot be read without "
            "write access to the folder",
            path=str(db_path),
            fix="Open it once with write access (any clear-rag command) to fold them in",
        )
    return sqlite3.connect(uri + "&immutable=1", uri=True, isolation_level=None, check_same_thread=False)


def store_failure(err: sqlite3.Error, db_path: Path) -> StoreError:
    """A database error that concerns the whole store, said of its file with what to do about it."""
    reason = str(err)
    try:
        with db_path.open("rb") as handle:
            head = handle.read(len(_SQLITE_MAGIC))
    except OSError:
        head = _SQLITE_MAGIC  # cannot look: say what SQLite said
    if head and head != _SQLITE_MAGIC:
        return StoreError(
            "is not a clear-rag database (not an SQLite file at all)",
            path=str(db_path),
            fix=f"Move it aside, or {_WHERE}",
        )
    if "readonly" in reason or "read-only" in reason:
        return StoreError(
            f"is read-only ({reason})",
            path=str(db_path),
            fix=f"Check its permissions and its folder's, or {_WHERE}",
        )
    if isinstance(err, sqlite3.DatabaseError) and ("malformed" in reason or "not a database" in reason):
        return StoreError(
            f"is damaged ({reason})",
            path=str(db_path),
            fix="Restore it from a backup, or move it aside and ingest again to rebuild the store",
        )
    return StoreError(
        f"cannot be used ({reason})",
        path=str(db_path),
        fix=f"Check the disk and the file's permissions, or {_WHERE}",
    )
