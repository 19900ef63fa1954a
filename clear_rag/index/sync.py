"""Keeping the indexes beside the store in step with it, one document at a time.

Each index directory holds a manifest: for every document it covers, the version it indexed (content
hash and chunker settings) and the chunk ids it added, or why it left the document out; and the size
and SHA-256 of each data file (``clear_rag.index.files``). Bringing an index up to date
(``keyword_index``, ``vector_index``: what ingestion does) compares that with the store's document
records (no text is read) and touches only documents that were added, changed, removed or left out
last time. Chunks are read and indexed a batch at a time, so memory follows the batch, not the
corpus: the predecessor listed every chunk of every changed document at once.

A document that cannot be indexed (its embedding is a zero or non-finite vector, or the embedder
fails on its texts) is left out of that index and named, and the rest goes on; the predecessor let
one zero vector fail every later ingest of the store. An index that fails its check on open
(truncated, garbled, shuffled or missing files) is rebuilt from the store by the next sync, which
says so.

Where each index lives and how one is opened for a question are in ``clear_rag.index.places``.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Generic

from clear_rag.index.adders import Adder, KeywordAdder, VectorAdder
from clear_rag.index.bm25 import BM25Index, IdfName
from clear_rag.index.context import Unit, units
from clear_rag.index.files import (
    FORMAT,
    DamagedIndexError,
    remove_leftovers,
    restamp,
    unstamped,
    write_manifest,
)
from clear_rag.index.places import IndexT, Place, StoreDocuments, keyword_place, open_index, vector_place
from clear_rag.index.vectors import VectorIndex
from clear_rag.locks import locked
from clear_rag.providers.base import Embedder
from clear_rag.store.sqlite import Store
from clear_rag.types import Chunk

# Chunks per BM25Index.add: every add re-scores the whole index once, so batches are large; the
# texts of one batch (a few MB) are what a keyword sync holds.
KEYWORD_BATCH = 8192


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What bringing one index up to date did."""

    index: str
    documents_updated: int
    documents_removed: int
    chunks_added: int
    chunks_removed: int
    elapsed_ms: float
    missing: dict[str, str] = field(default_factory=dict)  # documents left out this time, and why
    damage: str = ""  # what was wrong with the index on disk, when it was rebuilt for that
    rebuilt: bool = False  # built again from the store (damaged, or asked to)


def empty_unit(doc_id: str) -> Chunk:
    """The stand-in of a document without chunks in a keyword index: no text, so no query matches it."""
    return Chunk(f"{doc_id}#empty", doc_id, 0, 0, "", -1, 0)


def sync(
    place: Place[IndexT],
    store: Store,
    add: Adder[IndexT],
    *,
    fresh: Callable[[], IndexT],
    batch: int,
    empty_units: bool = False,
    rebuild: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[IndexT, SyncReport]:
    """Bring the index at ``place`` up to date with ``store``; save it if anything changed.

    An index that is absent, damaged or (with ``rebuild``) unwanted starts again from ``fresh()``.
    With ``empty_units``, a document that has no chunk (an empty text: chunkers cut nothing from it)
    is indexed as one empty unit (``empty_unit``), which no query matches but which counts in BM25's
    document count N and average length, as SQLite FTS5 counts a row with no tokens. The predecessor
    left such documents out, so N on Cranfield's 1,400 documents (two of them empty) was 1,398.
    """
    started = time.perf_counter()
    place.directory.mkdir(parents=True, exist_ok=True)
    with locked(place.directory, "sync"):
        remove_leftovers(place.directory)
        damage = ""
        try:
            opened = open_index(place)
        except DamagedIndexError as err:
            opened, damage = None, err.reason
        found = StoreDocuments(store)
        versions = found.versions
        if opened is None or rebuild:
            index, documents, unsaved, stamp = fresh(), {}, True, False
        else:
            index, manifest = opened
            documents, unsaved = dict(manifest.documents), manifest.files is None
            # else every open hashes its files, parses an object per document (before format 3) or
            # compares every document's version (a manifest without the digest of its documents)
            stamp = (
                manifest.format < FORMAT
                or manifest.store_digest != found.digest
                or unstamped(place.directory, manifest, place.files)
            )
        stale = sorted(doc for doc, version in versions.items() if _to_index(documents.get(doc), version))
        removed = sorted(set(documents) - set(versions))
        old_ids = [cid for doc in stale + removed for cid in documents.get(doc, {}).get("chunks", [])]
        if old_ids:
            index.remove(old_ids)
        for doc in removed:
            del documents[doc]
        filler = _Filler(index, add, batch, progress, _chunk_total(store, stale) if progress else 0)
        for doc in stale:
            filler.document(doc, units(store, doc), empty_units=empty_units)
        filler.finish()
        for doc in stale:
            entry: dict[str, Any] = {"version": versions[doc], "chunks": filler.added.get(doc, [])}
            documents[doc] = entry | ({"missing": filler.missing[doc]} if doc in filler.missing else {})
        if stale or removed or unsaved:
            with locked(place.directory, "commit"):
                index.save(place.directory)
                # last; ``documents`` now holds every stored document at its version: ``found``'s digest
                write_manifest(
                    place.directory, place.settings, documents, place.files, store_digest=found.digest
                )
        elif stamp:  # only the manifest changes: it records the identities of the files it checks
            with locked(place.directory, "commit"):
                restamp(place.directory, manifest, place.files, found.digest)
    elapsed = (time.perf_counter() - started) * 1000
    added = sum(len(ids) for ids in filler.added.values())
    report = SyncReport(
        place.label, len(stale), len(removed), added, len(old_ids), elapsed,
        filler.missing, damage, rebuilt=bool(damage) or rebuild,
    )  # fmt: skip
    return index, report


def _to_index(entry: dict[str, Any] | None, version: str) -> bool:
    """A document is (re)indexed when the index lacks it, holds an old version, or left it out:
    a document left out is retried by every sync until it goes in."""
    return entry is None or entry["version"] != version or "missing" in entry


def _chunk_total(store: Store, docs: list[str]) -> int:
    """How many chunks ``docs`` have, from the chunk table alone (no text), for a progress bar."""
    wanted = set(docs)
    counts = Counter(doc for _, doc, _, _ in store.chunk_spans() if doc in wanted)
    return sum(counts.values())


class _Filler(Generic[IndexT]):
    """Feeds an index a batch of chunks at a time, document by document, in the store's order (so
    the ids come out in the order one ``add`` of everything gave), and keeps what each document
    added and which documents the index left out."""

    def __init__(
        self,
        index: IndexT,
        add: Adder[IndexT],
        batch: int,
        progress: Callable[[int, int], None] | None,
        total: int,
    ) -> None:
        self.index, self.add, self.batch, self.progress, self.total = index, add, batch, progress, total
        self.added: dict[str, list[str]] = {}
        self.missing: dict[str, str] = {}
        self.pending: list[Unit] = []
        self.empty: list[str] = []  # ids only; their units go in last, where one add put them
        self.done = 0
        if progress is not None:
            progress(0, total)  # shown from the start, not after the first batch

    def document(self, doc: str, chunks: Iterable[Unit], *, empty_units: bool) -> None:
        seen = False
        for chunk in chunks:
            seen = True
            if doc in self.missing:  # left out already: its other chunks need no embedding
                self._advance(1)
                continue
            self.pending.append(chunk)
            if len(self.pending) >= self.batch:
                self._flush()
        if not seen and empty_units:
            self.empty.append(doc)

    def finish(self) -> None:
        self._flush()
        for begin in range(0, len(self.empty), self.batch):
            self.pending = [empty_unit(doc) for doc in self.empty[begin : begin + self.batch]]
            self._flush(counted=False)

    def _flush(self, *, counted: bool = True) -> None:
        if not self.pending:
            return
        left_out = self.add(self.index, self.pending)
        for chunk in self.pending:
            if chunk.doc_id not in left_out:
                self.added.setdefault(chunk.doc_id, []).append(chunk.id)
        for doc, reason in left_out.items():
            self.missing[doc] = reason
            self.index.remove(self.added.pop(doc, []))  # what it added in earlier batches
        if counted:
            self._advance(len(self.pending))
        self.pending = []

    def _advance(self, chunks: int) -> None:
        self.done += chunks
        if self.progress is not None:
            self.progress(self.done, self.total)


# -- bringing each index up to date ----------------------------------------------------------------


def keyword_index(
    store: Store,
    *,
    stem: bool = False,
    k1: float = 1.2,
    b: float = 0.75,
    idf: IdfName = "lucene",
    rebuild: bool = False,
) -> tuple[BM25Index, SyncReport]:
    """The store's BM25 index for one analyzer, brought up to date. ``k1``, ``b`` and ``idf`` only
    weight the stored postings, so changing them re-scores without re-tokenising."""
    place = keyword_place(store, stem)
    opened = place.load
    place = replace(place, load=lambda folder: opened(folder).with_params(k1=k1, b=b, idf=idf))
    return sync(
        place,
        store,
        KeywordAdder(),
        fresh=lambda: BM25Index(k1=k1, b=b, idf=idf, stem=stem),
        batch=KEYWORD_BATCH,
        empty_units=True,
        rebuild=rebuild,
    )


def vector_index(
    store: Store,
    embedder: Embedder,
    *,
    batch: int = 64,
    progress: Callable[[int, int], None] | None = None,
    rebuild: bool = False,
) -> tuple[VectorIndex, SyncReport]:
    """The store's vector index for one embedder, brought up to date (embedding only new chunks,
    ``batch`` texts per call)."""
    place = vector_place(store, embedder)
    return sync(
        place,
        store,
        VectorAdder(embedder, batch),
        fresh=lambda: VectorIndex(embedder.dim),
        batch=batch,
        rebuild=rebuild,
        progress=progress,
    )


def report_lines(report: SyncReport) -> list[str]:
    """What ingest says of one index: what changed (or that it was rebuilt, and why), then each
    document it left out. One line each; the CLI and ``clear-rag index`` print them."""
    r = report
    if r.damage:
        head = f"index {r.index}: damaged ({r.damage}); rebuilt from the store: {r.chunks_added} chunks"
    elif r.rebuilt:
        head = f"index {r.index}: rebuilt from the store: {r.chunks_added} chunks"
    elif r.documents_updated or r.documents_removed:
        head = (
            f"index {r.index}: {r.documents_updated} documents re-indexed, {r.documents_removed} "
            f"dropped; {r.chunks_added} chunks in, {r.chunks_removed} out ({r.elapsed_ms:.0f} ms)"
        )
    else:
        head = f"index {r.index}: up to date"
    return [head, *missing_lines(r.index, r.missing)]


def missing_lines(label: str, missing: dict[str, str]) -> list[str]:
    return [f"missing from index {label}: {doc}: {reason}" for doc, reason in sorted(missing.items())]
