"""A store as training material: its chunks as passages, its BM25 as the miner, its digest as a version.

``corpus_pairs`` is what ``clear-rag train reranker --corpus STORE`` and the shipped reranker's extra
corpora both go through: the pairs of ``clear_rag.train.pairs`` built over one store, cached in a JSON
file keyed by the store's digest and the settings, so a second run with an unchanged store mines
nothing. ``ingest_folder`` makes a keyword-only store of a folder of documents (no embedding: the
construction needs no vectors) for the corpora the mixed reranker trains on (``EXTRA_CORPORA``), and
``corpus_groups`` turns several stores' pairs into one list of training groups.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from clear_rag.chunk.factory import chunker_for
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import InputError
from clear_rag.index.places import load_keyword
from clear_rag.ingest import ingest
from clear_rag.session import sync_indexes
from clear_rag.store.sqlite import DB_NAME, Store
from clear_rag.train.mining import Group
from clear_rag.train.pairs import (
    Pairs,
    PairSettings,
    Passage,
    Search,
    build_pairs,
    load_pairs,
    namespaced,
    save_pairs,
)

Log = Callable[[str], None]
KEYWORD = PipelineConfig(retrievers=("keyword",))  # the miner: the store's unstemmed BM25
CHUNKING = ChunkingConfig(chunker="structural", size=256)  # the stores made of the shipped model's corpora


def open_corpus(directory: Path) -> Store:
    """An existing store, opened to read its chunks (``InputError`` naming the folder when there is none)."""
    if not (directory / DB_NAME).is_file():
        raise InputError(
            "holds no clear-rag store",
            path=str(directory),
            fix="Name a folder that `clear-rag ingest --store DIR` made (the default store is .clear-rag)",
        )
    return Store(directory)


def passages(store: Store) -> list[Passage]:
    """Every chunk of the store as a passage, in chunk-id order."""
    return sorted((Passage(c.id, c.doc_id, c.text) for c in store.chunks()), key=lambda p: p.id)


def store_digest(store: Store) -> str:
    """SHA-256 over each document's id and content hash and the store's chunkers: equal stores, equal
    digests, and any changed, added or removed document changes it."""
    lines = sorted(f"{r.id}\t{r.content_hash}" for r in store.records())
    lines += [f"chunker\t{c}" for c in sorted(store.chunkers())]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def keyword_search(store: Store) -> Search:
    """The store's BM25 (brought up to date first, as ``ingest`` leaves it) as a chunk-id ranking."""
    sync_indexes(store, [KEYWORD], None)
    index = load_keyword(store)

    def search(query: str, k: int) -> list[str]:
        return [chunk_id for chunk_id, _ in index.search(query, k)]

    return search


def corpus_pairs(directory: Path, settings: PairSettings, cache: Path, log: Log) -> tuple[Pairs, str]:
    """The pairs of the store in ``directory`` and the store's digest; read from ``cache`` when it was
    built from this store with these settings, else built now and written there."""
    store = open_corpus(directory)
    try:
        digest = store_digest(store)
        record = {"store": digest, **asdict(settings)}
        if cache.is_file():
            pairs, recorded = load_pairs(cache)
            if recorded == record:
                log(f"pairs of {directory}: {len(pairs.groups)} from {cache}")
                return pairs, digest
        log(f"building pairs from {directory} ...")
        pairs = build_pairs(passages(store), keyword_search(store), settings)
    finally:
        store.close()
    save_pairs(cache, pairs, record)
    log(f"pairs of {directory}: {len(pairs.groups)} queries, {len(pairs.held_out)} documents held out")
    return pairs, digest


def ingest_folder(folder: Path, directory: Path, log: Log) -> Path:
    """A keyword-only store of every document under ``folder`` (structural chunks of 256 tokens), brought
    up to date: unchanged files cost a hash. Returns the store's directory."""
    if not folder.is_dir():
        raise InputError("is not a folder of documents", path=str(folder), fix="Install or name the corpus")
    with Store(directory, root=folder, mode="write") as store:
        report = ingest(store, [folder], chunker_for(CHUNKING), prune=True)
        sync_indexes(store, [KEYWORD], None)
        added = sum(1 for o in report.outcomes if o.action == "added")
        log(f"{folder} -> {directory}: {len(report.outcomes)} files, {added} added")
    return directory


# The documentation the mixed reranker reads besides SciFact's claims: two Debian packages (neither
# is test material of any suite here), ingested into keyword-only stores and cut into pairs by
# clear_rag.train.pairs. Their stores' digests are in the cache key, so another version retrains.
EXTRA_CORPORA: dict[str, tuple[Path, str]] = {
    "postgresql-doc": (Path("/usr/share/doc/postgresql-doc-15/html"), "postgresql-doc-15"),
    "python-doc": (Path("/usr/share/doc/python3.11/html/_sources"), "python3-doc"),
}
TRAINING_CACHE = Path(".clear-rag") / "training"  # corpus stores and their pairs: made again from inputs


@dataclass(frozen=True, slots=True)
class Corpus:
    """A store whose own text trains the model (``clear_rag.train.pairs``), under a name for its ids."""

    name: str
    store: Path


def extra_corpus(name: str, cache: Path = TRAINING_CACHE, log: Log = print) -> Corpus:
    """One of ``EXTRA_CORPORA`` as a store under ``cache/stores``, ingested (or brought up to date)."""
    if name not in EXTRA_CORPORA:
        raise InputError(
            f"names no training corpus ({', '.join(EXTRA_CORPORA)} are known)",
            field="corpus",
            value=name,
            fix="Name one of those, or a store folder made by `clear-rag ingest`",
        )
    folder, package = EXTRA_CORPORA[name]
    if not folder.is_dir():
        raise InputError(
            "is not installed",
            path=str(folder),
            fix=f"Install Debian's {package} (apt-get install {package}), which the mixed reranker reads",
        )
    return Corpus(name, ingest_folder(folder, cache / "stores" / name, log))


def corpus_groups(
    corpora: Sequence[Corpus], pairs: PairSettings, cache: Path, log: Log
) -> tuple[list[Group], dict[str, str], dict[str, str]]:
    """Every corpus's pairs as training groups (ids prefixed by the corpus's name), their texts, and
    each corpus's store digest (what the cache key records)."""
    groups: list[Group] = []
    texts: dict[str, str] = {}
    digests: dict[str, str] = {}
    for corpus in corpora:
        built, digests[corpus.name] = corpus_pairs(
            corpus.store, pairs, cache / f"pairs-{corpus.name}.json", log
        )
        named = namespaced(built, corpus.name)
        groups += named.groups
        texts.update(named.texts)
    return groups, texts, digests


def corpus_digests(corpora: Sequence[Corpus]) -> dict[str, str]:
    found = {}
    for corpus in corpora:
        store = open_corpus(corpus.store)
        try:
            found[corpus.name] = store_digest(store)
        finally:
            store.close()
    return found
