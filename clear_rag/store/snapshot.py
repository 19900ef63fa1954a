"""One generation of the store: what a question reads, whatever an ingest commits meanwhile.

SQLite in WAL mode gives a read transaction the database as of its first read, while writers go on
committing. A :class:`Snapshot` is a read-only ``Store`` on a connection of its own that begins in
one such transaction: the generation, documents, chunks and versions read through it all belong
together, and so do the indexes checked against them (``clear_rag.session.open_pipeline``). Once
they are read, :meth:`Snapshot.release` ends the transaction (an open one would keep SQLite from
checkpointing its WAL file); the snapshot's texts stay those of its generation, read from the
versions the writer keeps (``clear_rag.store.versions``).

The predecessor read the chunk table once and each document's text live, in autocommit mode: a
server asked while ``ingest --prune`` ran sliced a document's new text at its old chunks' spans
("chunk ... spans [0, 496) but document ... has 481 characters") or looked up a document already
pruned (issue 29).
"""

from __future__ import annotations

import contextlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from pathlib import Path

from clear_rag.errors import StoreError
from clear_rag.locks import locked
from clear_rag.store import versions
from clear_rag.store.database import read_generation
from clear_rag.store.sqlite import INGEST_LOCK, Store

# Texts a snapshot keeps once read (its generation's, so they never go stale): what a pipeline's
# questions read again, and chunk texts are slices of.
KEPT_TEXTS = 4096


class Snapshot(Store):
    """A read-only store as of one generation. Every read sees that generation until ``release``;
    after it, ``document_text`` still does (and may be called from several threads at once), while
    the other reads see the store as it is now."""

    def __init__(self, directory: str | Path) -> None:
        super().__init__(directory, mode="read")
        self._lock = threading.Lock()
        self._texts: OrderedDict[str, str] = OrderedDict()  # the last texts read, oldest first
        self._db.execute("BEGIN")
        self._generation = read_generation(self._db)  # the first read fixes what the transaction sees
        self._chunkers: list[str] | None = None

    def chunkers(self) -> list[str]:
        """As ``Store.chunkers``, read once while the snapshot's transaction lasts: opening a pipeline
        asks twice (the store's chunking, and which tokenizer counted it), each a scan of every
        document's row (about 0.05 s at 100k documents)."""
        if not self._db.in_transaction:
            return super().chunkers()  # released: the store as it is now
        if self._chunkers is None:
            self._chunkers = super().chunkers()
        return list(self._chunkers)

    def generation(self) -> int:
        return self._generation

    def document_text(self, doc_id: str) -> str:
        found = self.document_texts([doc_id])
        if doc_id not in found:
            raise KeyError(doc_id)
        return found[doc_id]

    def document_texts(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """The generation's texts of ``doc_ids`` by id (an id with none is left out): the ones read
        before from the last ``KEPT_TEXTS`` kept, the others read together (``versions.texts_at``)."""
        wanted = list(dict.fromkeys(doc_ids))
        with self._lock:
            found = {doc_id: self._texts[doc_id] for doc_id in wanted if doc_id in self._texts}
            for doc_id in found:
                self._texts.move_to_end(doc_id)
            missing = [doc_id for doc_id in wanted if doc_id not in found]
            if missing:
                try:
                    read = versions.texts_at(self._db, missing, self._generation)
                except StoreError as err:
                    raise err.at(str(self.directory)) from None
                found.update(read)
                self._texts.update(read)
                while len(self._texts) > KEPT_TEXTS:
                    self._texts.popitem(last=False)
        return found

    def release(self) -> None:
        """End the read transaction: what the caller needed besides texts has been read."""
        with self._lock:
            if self._db.in_transaction:
                self._db.execute("COMMIT")
            self._chunkers = None

    def close(self) -> None:
        with self._lock:
            super().close()

    def __enter__(self) -> Snapshot:
        return self


@contextlib.contextmanager
def no_ingest_under_way(directory: Path) -> Iterator[None]:
    """Wait until no ingest is changing the store in ``directory``, and let none begin its next change
    until the block ends: inside it, what a snapshot reads and the indexes beside it stay as they are.
    (An ingest under way holds the ingest lock shared; this takes it exclusive.)"""
    with locked(directory, INGEST_LOCK):
        yield
