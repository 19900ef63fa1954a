"""Advisory file locks between processes (and threads): the one way clear-rag makes a writer and a
reader take turns on the files of a store.

The index folders use two (``.sync.lock``, ``.commit.lock``: ``clear_rag.index.files``); the store
folder one, ``.ingest.lock``, held shared by every ingest from its first change to a document until
its indexes are up to date (``clear_rag.store``).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

try:  # POSIX; elsewhere the files are written unlocked, as before
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def locked(directory: Path, which: str, *, shared: bool = False) -> Iterator[None]:
    """Hold ``directory/.{which}.lock`` (shared or exclusive) for the block. The kernel drops the lock
    when its process dies, so a killed ``ingest`` never leaves a store locked. Two holders conflict
    whether they are two processes or two threads of one (each opens the file for itself). Without
    a folder to put the lock in (an index that does not exist yet, as a reader finds it) or the
    right to create it (a read-only store), the block runs unlocked: there is then no writer to
    wait for."""
    if fcntl is None:
        yield
        return
    path = directory / f".{which}.lock"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:
        try:
            fd = os.open(path, os.O_RDONLY)  # flock needs no write access to the file
        except OSError:
            yield
            return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
