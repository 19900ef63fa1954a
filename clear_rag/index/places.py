"""Where each index lives beside its store, and opening one for a question after its check.

An index directory is named by what built it (``bm25``, ``bm25-porter``, ``vectors-<embedder>``); its
manifest says which documents, at which version, it covers (``clear_rag.index.files``). Opening one
checks its files against the manifest and its ids against the chunks the manifest lists, so a
truncated, garbled, swapped or shuffled file is found before it answers a question with the wrong
documents. A question never indexes: an index behind its store is an error that says to run ingest
(``IndexBehindError``, which ``open_pipeline`` waits out while an ingest is under way), and a damaged
one an error naming the file and the command that rebuilds it.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Generic, Literal, Protocol, TypeVar

from clear_rag.errors import StoreError
from clear_rag.index import bm25, vectors
from clear_rag.index.bm25 import BM25Index, IdfName
from clear_rag.index.files import DamagedIndexError, Manifest, check_files, read_manifest
from clear_rag.index.vectors import VectorIndex
from clear_rag.locks import locked
from clear_rag.providers.base import Embedder
from clear_rag.store.sqlite import Store

INDEX_DIR = "index"


class _Index(Protocol):
    @property
    def ids(self) -> tuple[str, ...]: ...

    def remove(self, ids: Iterable[str]) -> Any: ...

    def save(self, directory: str | Path) -> None: ...


IndexT = TypeVar("IndexT", bound=_Index)


@dataclass(frozen=True, slots=True)
class Place(Generic[IndexT]):
    """Where one index lives and what it is: its name in messages, its settings, its files."""

    label: str  # "keyword", "keyword (porter)", "vector (hash-embedder-256)"
    directory: Path
    settings: dict[str, Any]
    files: tuple[str, ...]
    ids_file: str  # the file holding its ids, named when they disagree with the manifest
    load: Callable[[Path], IndexT]


class IndexBehindError(StoreError):
    """An index that does not cover the documents of the store as read: absent, or built for other
    versions of them. While an ingest is under way that is its work in progress, to be waited for."""


@dataclass(frozen=True, slots=True)
class IndexHealth:
    """One index as its check finds it (``clear-rag status``, ``clear-rag index``)."""

    label: str
    state: Literal["ok", "absent", "behind", "damaged"]
    chunks: int
    documents: int  # documents it holds, less those left out
    missing: dict[str, str]
    problem: StoreError | None  # unless ok: the error a question over this index ends in


def document_versions(store: Store) -> dict[str, str]:
    """Each stored document's version: a hash of its content hash, the parser that read it (backend
    and version, ``pdf/layout@5``) and its chunker settings.

    The parser is part of it because ingest parses a file again when its parser's version changes,
    though its bytes did not: the predecessor hashed only the bytes and the chunker, so after a parser
    upgrade the indexes kept the old parse's chunks under the new chunks' ids (ids come from positions)
    and answered with other spans than the store's. That is how the 10k suite's layout rows were
    scored on issue 31's parser: labels in the new text, keyword and vector hits from the old.
    """
    return StoreDocuments(store).versions


class StoreDocuments:
    """The store's documents as the indexes' checks read them, once for all of them: each one's
    version (``document_versions``), and one digest of everything the versions are made of.

    A manifest records the digest of the documents it was written for (``write_manifest``'s
    ``store_digest``); an index whose recorded digest is the store's now holds every document at its
    version, without hashing each document apart and comparing the two maps (about 0.3 s of a cold
    open at 100k documents). Any other digest, or none (a manifest written before digests), is
    checked document by document, as before: the digest only ever spares that check.
    """

    __slots__ = ("_sources", "_versions", "digest")

    def __init__(self, store: Store) -> None:
        self._sources = sorted(store.version_sources())  # by id: the digest is of the set
        self._versions: dict[str, str] | None = None
        self.digest = _digest(self._sources)

    @property
    def versions(self) -> dict[str, str]:
        if self._versions is None:
            sha256 = hashlib.sha256
            self._versions = {doc: sha256(source.encode()).hexdigest()[:16] for doc, source in self._sources}
        return self._versions


def _digest(sources: list[tuple[str, str]]) -> str | None:
    """SHA-256 of every (id, source) pair, their fields joined by NUL: one pass in C where
    ``json.dumps`` took 0.6 s at 100k documents. A field holding a NUL could make two stores alike,
    so then there is no digest (``None``), and every check goes document by document."""
    joined = "\0".join(itertools.chain.from_iterable(sources))
    if joined.count("\0") != max(2 * len(sources) - 1, 0):
        return None
    return hashlib.sha256(joined.encode()).hexdigest()


def open_index(place: Place[IndexT], *, full: bool = False) -> tuple[IndexT, Manifest] | None:
    """The index at ``place`` after its check, with its manifest; ``None`` if there is none for these
    settings; :class:`DamagedIndexError` if a file does not match the manifest or the ids in the
    files are not the chunks the manifest lists (a shuffled or swapped id file). A file whose stat
    identity is the one its manifest recorded is not hashed, unless ``full`` (``check_files``)."""
    with locked(place.directory, "commit", shared=True):
        manifest = read_manifest(place.directory, place.label, place.files)
        if manifest is None or manifest.settings != place.settings:
            return None
        check_files(place.directory, manifest, place.files, place.label, full=full)
        try:
            index = place.load(place.directory)
        except StoreError as err:
            raise DamagedIndexError(place.label, place.directory, place.ids_file, err.what) from err
    listed = manifest.chunk_ids()
    if len(index.ids) != len(listed) or not listed.issuperset(index.ids):
        problem = f"its {len(index.ids)} ids are not the {len(listed)} chunks the manifest lists"
        raise DamagedIndexError(place.label, place.directory, place.ids_file, problem)
    return index, manifest


def keyword_place(store: Store, stem: bool) -> Place[BM25Index]:
    directory = store.directory / INDEX_DIR / ("bm25-porter" if stem else "bm25")
    # "empty documents": an index built before they were counted is rebuilt once (no embedding)
    settings = {"analyzer": "porter unicode61" if stem else "unicode61", "empty documents": "counted"}
    label = "keyword (porter)" if stem else "keyword"
    return Place(label, directory, settings, bm25.FILES, bm25.META_FILE, BM25Index.load)


def vector_place(store: Store, embedder: Embedder) -> Place[VectorIndex]:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{embedder.name}@{embedder.version}")
    settings = {"embedder": embedder.name, "version": embedder.version, "dim": embedder.dim}
    directory = store.directory / INDEX_DIR / f"vectors-{slug}"
    label = f"vector ({embedder.name})"
    return Place(label, directory, settings, vectors.FILES, vectors.IDS_FILE, VectorIndex.load)


def existing_places(store: Store) -> list[Place[Any]]:
    """Every index directory beside the store, whatever built it (``clear-rag status``). Settings
    come from each manifest, so none is ever "for other settings"; a vector index's embedder is
    named from its manifest, or from its folder when the manifest cannot be read."""
    found: list[Place[Any]] = []
    root = store.directory / INDEX_DIR
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        if directory.name in ("bm25", "bm25-porter"):
            place: Place[Any] = keyword_place(store, directory.name == "bm25-porter")
        elif directory.name.startswith("vectors-"):
            place = Place("vector", directory, {}, vectors.FILES, vectors.IDS_FILE, VectorIndex.load)
        else:
            continue
        try:
            manifest = read_manifest(directory, place.label, place.files)
        except DamagedIndexError:
            manifest = None
        if manifest is not None:
            place = replace(place, settings=manifest.settings)
        if place.label == "vector":
            name = place.settings.get("embedder") or directory.name.removeprefix("vectors-")
            place = replace(place, label=f"vector ({name})")
        found.append(place)
    return found


def health(place: Place[Any], store: Store, *, full: bool = False) -> IndexHealth:
    """What the check of one index finds, with the error a question over it would end in; ``full``
    hashes every file whatever its stat identity says (``clear-rag index --full``)."""
    try:
        opened = open_index(place, full=full)
    except DamagedIndexError as err:
        return IndexHealth(place.label, "damaged", 0, 0, {}, err)
    if opened is None:
        return IndexHealth(place.label, "absent", 0, 0, {}, _absent(place, store))
    index, manifest = opened
    missing = manifest.missing()
    documents = len(manifest.coverage) - len(missing)
    behind = _behind(place, manifest, store)
    state: Literal["ok", "behind"] = "ok" if behind is None else "behind"
    return IndexHealth(place.label, state, len(index.ids), documents, missing, behind)


def _absent(place: Place[Any], store: Store) -> IndexBehindError:
    return IndexBehindError(f"has no {place.label} index", path=str(store.directory), fix=_INGEST)


_INGEST = "Run `clear-rag ingest PATH` (it brings the indexes up to date), then ask again"


def _behind(
    place: Place[Any], manifest: Manifest, store: Store, documents: StoreDocuments | None = None
) -> IndexBehindError | None:
    """How far the index lags the store (whose documents may be given, read once for all its
    indexes), as an error; ``None`` when it is current. A document left out at its current version
    is not behind: the index says why it lacks it, and questions go on."""
    documents = StoreDocuments(store) if documents is None else documents
    if documents.digest is not None and manifest.store_digest == documents.digest:  # for these documents
        return None
    covered, versions = manifest.versions(), documents.versions
    if covered == versions:
        return None
    stale = sum(1 for doc, version in versions.items() if covered.get(doc) != version)
    removed = len(covered.keys() - versions.keys())
    return IndexBehindError(
        f"has a {place.label} index that is behind the store ({stale} documents new or changed, "
        f"{removed} removed since it was built)",
        path=str(store.directory),
        fix=_INGEST,
    )


def _load_current(place: Place[IndexT], store: Store, documents: StoreDocuments | None) -> IndexT:
    opened = open_index(place)
    if opened is None:
        raise _absent(place, store)
    behind = _behind(place, opened[1], store, documents)
    if behind is not None:
        raise behind
    return opened[0]


def load_keyword(
    store: Store,
    *,
    stem: bool = False,
    k1: float = 1.2,
    b: float = 0.75,
    idf: IdfName = "lucene",
    documents: StoreDocuments | None = None,
) -> BM25Index:
    """The store's BM25 index for one analyzer, as ingestion left it; an error if it is behind or
    damaged. ``documents``: the store's, when the caller has read them for several indexes."""
    return _load_current(keyword_place(store, stem), store, documents).with_params(k1=k1, b=b, idf=idf)


def load_vectors(store: Store, embedder: Embedder, *, documents: StoreDocuments | None = None) -> VectorIndex:
    """The store's vector index for one embedder, as ingestion left it; an error if it is behind or
    damaged. ``documents``: the store's, when the caller has read them for several indexes."""
    return _load_current(vector_place(store, embedder), store, documents)
