"""Keeping the indexes beside the store in step with it, one document at a time.

Each index directory holds a manifest: for every document it covers, the version it indexed (content
hash and chunker settings) and the chunk ids it added. Bringing an index up to date (``keyword_index``,
``vector_index``: what ingestion does) compares that with the store's document records (no text is
read) and touches only documents that were added, changed or removed. Loading one for a question
(``load_keyword``, ``load_vectors``) never indexes anything: an index behind its store is an error
that says to run ingest, so a question never pays for tokenising or embedding a corpus. The
predecessor rebuilt its index on every launch, and then in every query.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from clear_rag.errors import StoreError
from clear_rag.index.bm25 import BM25Index, IdfName
from clear_rag.index.vectors import VectorIndex
from clear_rag.providers.base import Embedder
from clear_rag.store.sqlite import Store
from clear_rag.types import Chunk

MANIFEST = "manifest.json"
INDEX_DIR = "index"


class _Index(Protocol):
    def remove(self, ids: Iterable[str]) -> Any: ...

    def save(self, directory: str | Path) -> None: ...


@dataclass(frozen=True, slots=True)
class SyncReport:
    """What bringing one index up to date did."""

    index: str
    documents_updated: int
    documents_removed: int
    chunks_added: int
    chunks_removed: int
    elapsed_ms: float


def document_versions(store: Store) -> dict[str, str]:
    """Each stored document's version: a hash of its content hash and its chunker settings."""
    return {
        r.id: hashlib.sha256(f"{r.content_hash}\n{r.chunker}".encode()).hexdigest()[:16]
        for r in store.records()
    }


def _read_manifest(directory: Path) -> dict[str, Any]:
    path = directory / MANIFEST
    if not path.exists():
        return {"documents": {}}
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def sync(
    name: str,
    index: _Index,
    directory: Path,
    store: Store,
    add: Callable[[Sequence[Chunk]], None],
    *,
    settings: dict[str, Any],
    empty_units: bool = False,
) -> SyncReport:
    """Bring ``index`` (saved in ``directory``) up to date with ``store``; save it if anything changed.

    With ``empty_units``, a document that has no chunk (an empty text: chunkers cut nothing from it)
    is indexed as one empty unit (``empty_unit``), which no query matches but which counts in BM25's
    document count N and average length, as SQLite FTS5 counts a row with no tokens. The predecessor
    left such documents out, so N on Cranfield's 1,400 documents (two of them empty) was 1,398.
    """
    started = time.perf_counter()
    manifest = _read_manifest(directory)
    if manifest.get("settings", settings) != settings:
        manifest = {"documents": {}}  # the caller made a fresh index for the new settings
    covered: dict[str, dict[str, Any]] = manifest["documents"]
    versions = document_versions(store)
    stale = sorted(doc for doc, version in versions.items() if covered.get(doc, {}).get("version") != version)
    removed = sorted(set(covered) - set(versions))
    old_ids = [cid for doc in stale + removed for cid in covered.get(doc, {}).get("chunks", [])]
    fresh = [chunk for doc in stale for chunk in store.chunks(doc)]
    if empty_units:
        chunked = {chunk.doc_id for chunk in fresh}
        fresh += [empty_unit(doc) for doc in stale if doc not in chunked]
    if old_ids:
        index.remove(old_ids)
    if fresh:
        add(fresh)
    if stale or removed or not (directory / MANIFEST).exists():
        for doc in removed:
            del covered[doc]
        by_doc: dict[str, list[str]] = {doc: [] for doc in stale}
        for chunk in fresh:
            by_doc[chunk.doc_id].append(chunk.id)
        for doc in stale:
            covered[doc] = {"version": versions[doc], "chunks": by_doc[doc]}
        directory.mkdir(parents=True, exist_ok=True)
        index.save(directory)
        body = json.dumps({"settings": settings, "documents": covered}, sort_keys=True)
        temporary = directory / (MANIFEST + ".tmp")
        temporary.write_text(body, encoding="utf-8")
        temporary.replace(directory / MANIFEST)  # the manifest last: a crash before it re-syncs
    elapsed = (time.perf_counter() - started) * 1000
    return SyncReport(name, len(stale), len(removed), len(fresh), len(old_ids), elapsed)


def empty_unit(doc_id: str) -> Chunk:
    """The stand-in of a document without chunks in a keyword index: no text, so no query matches it."""
    return Chunk(f"{doc_id}#empty", doc_id, 0, 0, "", -1, 0)


def _behind(directory: Path, store: Store, settings: dict[str, Any]) -> tuple[int, int] | None:
    """How many stored documents the index lacks or holds in an old version, and how many it holds
    that the store no longer has; ``None`` when the index does not exist for these settings."""
    if not (directory / MANIFEST).exists():
        return None
    manifest = _read_manifest(directory)
    if manifest.get("settings") != settings:
        return None
    covered = manifest["documents"]
    versions = document_versions(store)
    stale = sum(1 for doc, version in versions.items() if covered.get(doc, {}).get("version") != version)
    return stale, len(set(covered) - set(versions))


def _check_current(name: str, directory: Path, store: Store, settings: dict[str, Any]) -> None:
    behind = _behind(directory, store, settings)
    fix = "Run `clear-rag ingest PATH` (it brings the indexes up to date), then ask again"
    if behind is None:
        raise StoreError(f"has no {name} index", path=str(store.directory), fix=fix)
    stale, removed = behind
    if stale or removed:
        raise StoreError(
            f"has a {name} index that is behind the store ({stale} documents new or changed, "
            f"{removed} removed since it was built)",
            path=str(store.directory),
            fix=fix,
        )


def _keyword_place(store: Store, stem: bool) -> tuple[Path, dict[str, Any]]:
    directory = store.directory / INDEX_DIR / ("bm25-porter" if stem else "bm25")
    # "empty documents": an index built before they were counted is rebuilt once (no embedding)
    return directory, {"analyzer": "porter unicode61" if stem else "unicode61", "empty documents": "counted"}


def _vector_place(store: Store, embedder: Embedder) -> tuple[Path, dict[str, Any]]:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{embedder.name}@{embedder.version}")
    settings = {"embedder": embedder.name, "version": embedder.version, "dim": embedder.dim}
    return store.directory / INDEX_DIR / f"vectors-{slug}", settings


def load_keyword(
    store: Store, *, stem: bool = False, k1: float = 1.2, b: float = 0.75, idf: IdfName = "lucene"
) -> BM25Index:
    """The store's BM25 index for one analyzer, as ingestion left it; an error if it is behind."""
    directory, settings = _keyword_place(store, stem)
    _check_current("keyword (porter)" if stem else "keyword", directory, store, settings)
    return BM25Index.load(directory).with_params(k1=k1, b=b, idf=idf)


def load_vectors(store: Store, embedder: Embedder) -> VectorIndex:
    """The store's vector index for one embedder, as ingestion left it; an error if it is behind."""
    directory, settings = _vector_place(store, embedder)
    _check_current(f"vector ({embedder.name})", directory, store, settings)
    return VectorIndex.load(directory)


def keyword_index(
    store: Store, *, stem: bool = False, k1: float = 1.2, b: float = 0.75, idf: IdfName = "lucene"
) -> tuple[BM25Index, SyncReport]:
    """The store's BM25 index for one analyzer, brought up to date. ``k1``, ``b`` and ``idf`` only
    weight the stored postings, so changing them re-scores without re-tokenising."""
    directory, settings = _keyword_place(store, stem)
    loaded = (directory / MANIFEST).exists() and _read_manifest(directory).get("settings") == settings
    index = BM25Index.load(directory) if loaded else BM25Index(k1=k1, b=b, idf=idf, stem=stem)
    index = index.with_params(k1=k1, b=b, idf=idf)

    def add(chunks: Sequence[Chunk]) -> None:
        index.add([c.id for c in chunks], [c.text for c in chunks])

    return index, sync("keyword", index, directory, store, add, settings=settings, empty_units=True)


def vector_index(
    store: Store,
    embedder: Embedder,
    *,
    batch: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[VectorIndex, SyncReport]:
    """The store's vector index for one embedder, brought up to date (embedding only new chunks)."""
    directory, settings = _vector_place(store, embedder)
    loaded = (directory / MANIFEST).exists() and _read_manifest(directory).get("settings") == settings
    index = VectorIndex.load(directory) if loaded else VectorIndex(embedder.dim)

    def add(chunks: Sequence[Chunk]) -> None:
        if progress is not None:
            progress(0, len(chunks))  # shown from the start, not after the first batch
        for begin in range(0, len(chunks), batch):
            part = chunks[begin : begin + batch]
            index.add([c.id for c in part], embedder.embed([c.text for c in part], kind="document"))
            if progress is not None:
                progress(begin + len(part), len(chunks))

    return index, sync("vector", index, directory, store, add, settings=settings)
