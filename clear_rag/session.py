"""The one factory of pipelines, and the one place indexes are brought up to date.

``sync_indexes`` is what ingestion does after storing documents: it brings every index a set of
configs will search up to date, embedding only new chunks. ``open_pipeline`` is what every caller
that asks a question does (``clear-rag ask``, the evaluation runner, the asset graph, the server):
it checks the config against the store (the chunking it names must be the one the store was built
with) and loads the indexes as they are, failing with "run `clear-rag ingest`" when one is behind
or damaged, so that no question ever pays for indexing. Both read the store through one snapshot
(``clear_rag.store.snapshot``), so an index and the documents it is checked against, or built
from, are one generation of the store however an ingest beside them moves on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable

from clear_rag.chunk.factory import chunker_for
from clear_rag.config import ChunkingConfig, PipelineConfig
from clear_rag.errors import ConfigError, StoreError
from clear_rag.index.places import (
    IndexBehindError,
    IndexHealth,
    StoreDocuments,
    health,
    keyword_place,
    load_keyword,
    load_vectors,
    vector_place,
)
from clear_rag.index.sync import SyncReport, keyword_index, vector_index
from clear_rag.providers.base import Embedder, Reranker
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.retrieve.stages import ChunkRows, VectorSearchIndex
from clear_rag.store.snapshot import Snapshot, no_ingest_under_way
from clear_rag.store.sqlite import Store, holds_ingest_lock
from clear_rag.tokens import RegexTokenizer, TokenCounter, default_tokenizer

Progress = Callable[[int, int], None]
_NAMELESS = RegexTokenizer()  # settings do not depend on the tokenizer; this one loads no file


def chunking_settings(chunking: ChunkingConfig) -> dict[str, object]:
    """The chunker settings a store records for documents chunked this way, less the tokenizer (the
    embedder's, not a setting of the config): the overlap a default resolves to is spelled out."""
    chunker = chunker_for(chunking, tokenizer=_NAMELESS)
    return {k: v for k, v in chunker.settings().items() if k != "tokenizer"}


def store_chunking(store: Store) -> ChunkingConfig:
    """The chunking every document of ``store`` was chunked with; an error if none or several."""
    kinds = {json.dumps(_settings(key), sort_keys=True) for key in store.chunkers()}
    if not kinds:
        raise StoreError(
            "holds no documents", path=str(store.directory), fix="Run `clear-rag ingest PATH` first"
        )
    if len(kinds) > 1:
        raise StoreError(
            f"holds documents chunked {len(kinds)} ways ({'; '.join(sorted(kinds))})",
            path=str(store.directory),
            fix="Re-ingest with one chunking (clear-rag ingest PATH --chunker ... --size ...)",
        )
    settings = json.loads(kinds.pop())
    chunking = ChunkingConfig(
        chunker=settings["chunker"],
        size=settings.get("size", 256),
        contextual=settings.get("contextual", False),
    )
    # the chunker's default overlap reads back as "default", so the config hashes as it was written
    if chunking_settings(chunking) != settings:
        chunking = chunking.replace(overlap=settings.get("overlap"))
    return chunking


def check_chunking(store: Store, config: PipelineConfig) -> None:
    """A config that names a chunking the store was not built with is an error, not a silent mismatch."""
    built = store_chunking(store)
    if chunking_settings(built) != chunking_settings(config.chunking):
        have = built.model_dump(exclude_none=True)
        want = config.chunking.model_dump(exclude_none=True)
        raise ConfigError(
            f"asks for chunking {want}, but the store was chunked {have}",
            path=str(store.directory),
            field="chunking",
            fix="Use a store ingested with that chunking (clear-rag ingest PATH --chunker ... --size ... "
            "--store DIR), or leave chunking out of the config to use the store's",
        )


def _settings(key: str) -> dict[str, object]:
    return {k: v for k, v in json.loads(key).items() if k != "tokenizer"}


def sync_indexes(
    store: Store,
    configs: Iterable[PipelineConfig],
    embedder: Embedder | None,
    *,
    progress: Progress | None = None,
    rebuild: bool = False,
) -> list[SyncReport]:
    """Bring every index that ``configs`` search up to date with the store: one BM25 index per
    analyzer they use, and the vectors of ``embedder`` when any of them searches vectors.

    This is the one recovery path: an index that fails its check (a truncated, garbled or shuffled
    file, a lost manifest) is rebuilt from the store, and its report says what was wrong. With
    ``rebuild`` every one is rebuilt (``clear-rag index --rebuild``).
    """
    wanted = list(configs)
    stems = sorted({c.stem for c in wanted if "keyword" in c.retrievers})
    # One snapshot for every index: each manifest then describes the same generation of the store,
    # even while another ingest stores documents.
    with Snapshot(store.directory) as seen:
        reports = [keyword_index(seen, stem=stem, rebuild=rebuild)[1] for stem in stems]
        if embedder is not None and any("vector" in c.retrievers for c in wanted):
            reports.append(vector_index(seen, embedder, progress=progress, rebuild=rebuild)[1])
    store.indexed(seen.generation())
    return reports


def check_indexes(
    store: Store, configs: Iterable[PipelineConfig], embedder: Embedder | None, *, full: bool = False
) -> list[IndexHealth]:
    """The check of every index ``configs`` search, as ``sync_indexes`` would bring them up to date:
    whether each can be opened for a question, and the documents it left out. ``full`` hashes every
    index file, even one whose stat identity is as its manifest recorded it."""
    wanted = list(configs)
    stems = sorted({c.stem for c in wanted if "keyword" in c.retrievers})
    found = [health(keyword_place(store, stem), store, full=full) for stem in stems]
    if embedder is not None and any("vector" in c.retrievers for c in wanted):
        found.append(health(vector_place(store, embedder), store, full=full))
    return found


def open_pipeline(
    store: Store,
    config: PipelineConfig,
    *,
    embedder: Embedder | None = None,
    reranker: Reranker | None = None,
    tokenizer: TokenCounter | None = None,
    wait: bool = True,
) -> Pipeline:
    """A pipeline for ``config`` over ``store``: the chunking checked, the indexes loaded (never built).

    Everything it reads comes from one snapshot of the store (``Snapshot``), the indexes checked
    against the documents in it, and its texts stay that snapshot's generation for as long as it is
    used: an ingest that commits meanwhile is not seen by it, even in part. Indexes that do not
    cover the snapshot while an ingest is under way (it has stored documents and not yet indexed
    them) are its work in progress: with ``wait`` the pipeline is opened once the ingest is done;
    without, ``IndexBehindError`` says so at once (a caller with an older pipeline keeps asking it).

    The reranker is the one ``config.reranker`` names unless one is given (tests give the fake).
    """
    try:
        return _open(store, config, embedder, reranker, tokenizer)
    except IndexBehindError:
        # This thread's own changes are what the indexes lack: waiting for them would never end.
        if not wait or holds_ingest_lock(store.directory):
            raise
    with no_ingest_under_way(store.directory):
        return _open(store, config, embedder, reranker, tokenizer)


def _open(
    store: Store,
    config: PipelineConfig,
    embedder: Embedder | None,
    reranker: Reranker | None,
    tokenizer: TokenCounter | None,
) -> Pipeline:
    seen = Snapshot(store.directory)
    try:
        check_chunking(seen, config)
        keyword = None
        vectors: VectorSearchIndex | None = None
        documents = StoreDocuments(seen)  # read once for both indexes' checks

        if "keyword" in config.retrievers:
            keyword = load_keyword(
                seen,
                stem=config.stem,
                k1=config.bm25_k1,
                b=config.bm25_b,
                idf=config.idf,
                documents=documents,
            )
        if "vector" in config.retrievers:
            if embedder is None:
                raise ConfigError(
                    "searches vectors, which needs an embedder",
                    field="retrievers",
                    value=list(config.retrievers),
                    fix="Choose one with --embedder (minilm, hash, ollama:MODEL)",
                )
            vectors = load_vectors(seen, embedder, documents=documents)
            if config.vector_index != "exact":  # the approximate-index experiment, built in memory
                from clear_rag.index.ann import AnnIndex, settings_for

                vectors = AnnIndex.from_exact(vectors, settings_for(config.vector_index))
        if config.rerank and reranker is None:
            from clear_rag.providers.select import make_reranker

            reranker = make_reranker(config.reranker)
        table = ChunkRows(seen.chunk_rows())
        counted_by = seen.counted_by()
        seen.release()
        return Pipeline(
            config,
            table=table,
            texts=seen,
            tokenizer=tokenizer if tokenizer is not None else default_tokenizer(),
            keyword=keyword,
            vectors=vectors,
            embedder=embedder,
            reranker=reranker,
            counted_by=counted_by,
        )
    except BaseException:
        seen.close()
        raise
