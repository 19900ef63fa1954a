"""A suite's stores: one per chunking of its corpus, named by the corpus so suites over the same
corpus share it, filled by the ingest step and brought up to date with the indexes its rows search;
and what a result says of them (the corpus digest, the labels resolved in their text, the stores its
traces live in).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from clear_rag.chunk.factory import chunker_for
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import ConfigError
from clear_rag.eval import beir
from clear_rag.eval.labels import Labels, labels_in
from clear_rag.eval.suite import Suite
from clear_rag.hashing import file_sha256
from clear_rag.index.sync import SyncReport
from clear_rag.ingest import IngestReport, ParsedFile, ingest, ingest_documents
from clear_rag.providers.base import Embedder
from clear_rag.retrieve.stages import ChunkRef
from clear_rag.session import sync_indexes
from clear_rag.store.sqlite import DB_NAME, Store

STORES = "ablate"  # the suites' stores live under the store directory (.clear-rag/ablate by default)

Progress = Callable[[int, int], None]


def stores_root(store: Path) -> Path:
    """Where a suite's stores go for the store directory ``store`` (``--store``, ``$CLEAR_RAG_STORE``)."""
    return store / STORES


def store_dir(suite: Suite, chunking: ChunkingConfig, root: Path) -> Path:
    """The store for one chunking of the suite's corpus.

    Named by the corpus, not the suite, so that suites over the same corpus and chunking (tech and
    tech-expansion, say) share one store and its embeddings are computed once.
    """
    key = PipelineConfig(chunking=chunking).to_dict()["chunking"]
    for added in ("parsers", "contextual"):  # at their defaults: the names stores had before them
        if not key[added]:
            del key[added]
    digest = hashlib.sha256(repr(sorted(key.items())).encode()).hexdigest()[:10]
    source = suite.beir or suite.corpus or Path(suite.name)
    corpus = re.sub(r"[^A-Za-z0-9]+", "-", source.name).strip("-") or suite.name
    return root / f"{corpus}-{chunking.chunker}-{digest}"


def fill_store(
    suite: Suite, chunking: ChunkingConfig, root: Path, parsed: Mapping[str, ParsedFile] | None = None
) -> tuple[Store, IngestReport]:
    """The store for one chunking of the suite's corpus, brought up to date with the corpus.

    A corpus suite's files are ingested (unchanged files skipped by hash, vanished ones pruned); a
    BEIR suite's ``corpus.jsonl`` lines are, each document skipped by its content hash. ``parsed``
    holds corpus files parsed already (the asset graph parses each file once for every chunking).
    """
    chunker = chunker_for(chunking)
    if suite.beir is not None:
        store = Store(store_dir(suite, chunking, root), root=suite.beir)
        dataset = beir.load(suite.beir, split=suite.split)
        report = ingest_documents(store, beir.documents(dataset), chunker, parser=beir.PARSER)
    else:
        store = Store(store_dir(suite, chunking, root), root=Path.cwd())
        report = ingest(
            store,
            [suite.corpus or Path()],
            chunker,
            backends=dict(chunking.parsers),
            prune=True,
            parsed=parsed,
        )
    failed = [o.message for o in report.outcomes if o.action == "failed"]
    if failed:
        store.close()
        raise ConfigError(
            "has corpus files that failed to ingest",
            path=str(suite.path),
            value=failed,
            fix="Fix or remove them",
        )
    return store, report


def prepare(
    suite: Suite,
    chunking: ChunkingConfig,
    root: Path,
    embedder: Embedder | None,
    *,
    progress: Progress | None = None,
) -> tuple[Store, list[SyncReport]]:
    """The ingest step of a suite for one chunking: the store filled, and the indexes its rows with
    that chunking search brought up to date (only new chunks embedded)."""
    store, _ = fill_store(suite, chunking, root)
    rows = [r.config for r in suite.rows if r.config.chunking == chunking]
    return store, sync_indexes(store, rows, embedder, progress=progress)


def corpus_sha256(suite: Suite, store: Store) -> str:
    """Which corpus a result measured: ``corpus.jsonl``'s digest for BEIR, else one digest of every
    stored document's id and content hash."""
    if suite.beir is not None:
        return file_sha256(suite.beir / beir.CORPUS)
    records = store.records()
    return hashlib.sha256("".join(f"{r.id}:{r.content_hash}\n" for r in records).encode()).hexdigest()


def suite_labels(suite: Suite, store: Store) -> Labels:
    return labels_in(suite, {r.id: store.document_text(r.id) for r in store.records()})


def chunks_by_doc(store: Store) -> dict[str, list[ChunkRef]]:
    """Every chunk span of the store, by document: what span nDCG's ideal is computed from."""
    found: dict[str, list[ChunkRef]] = {}
    for _, doc_id, start, end in store.chunk_spans():
        found.setdefault(doc_id, []).append(ChunkRef(doc_id, start, end))
    return found


def missing_stores(document: Mapping[str, Any], suite: Suite, root: Path) -> list[str]:
    """The stores a result's traces live in that are not here (a fresh clone has none of them)."""
    by_name = {r.name: r for r in suite.rows}
    wanted = {
        str(store_dir(suite, by_name[row["name"]].config.chunking, root))
        for row in document["rows"]
        if row["name"] in by_name
    }
    return sorted(path for path in wanted if not (Path(path) / DB_NAME).exists())
