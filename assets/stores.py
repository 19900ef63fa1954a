"""Stores and indexes, one partition per chunking the suite's rows use.

- ``<suite>/store``: the parsed corpus chunked into the store for one chunking (``fill_store``);
- ``<suite>/keyword_index``: its BM25 postings for the analyzers the keyword rows use;
- ``<suite>/vector_index``: its chunk vectors for the configured embedder.

The library does the incremental work (unchanged documents are skipped by content hash, an index
touches only the documents whose version moved). What these assets add is a data version computed
from content (the stored documents' versions, the embedder), so re-materializing an unchanged store
gives the same version and nothing downstream is requested.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import asdict
from pathlib import Path
from typing import Any

from dagster import (
    AllPartitionMapping,
    AssetDep,
    AssetIn,
    AssetsDefinition,
    DataVersion,
    MaterializeResult,
    asset,
)

from assets import checks
from assets.layout import AUTOMATION, Layout, digest, partition_key
from assets.resources import EmbedderResource, PathsResource
from clear_rag.eval.stores import fill_store, store_dir
from clear_rag.index.sync import keyword_index, vector_index
from clear_rag.ingest import ParsedFile
from clear_rag.providers.base import describe
from clear_rag.store.sqlite import Store

GROUP = "stores"


def store_version(store: Store) -> str:
    """What the store holds, as one digest: each document's id, content hash, parser and chunker."""
    return digest(*sorted(f"{r.id} {r.content_hash} {r.parser} {r.chunker}" for r in store.records()))


def store_assets(layout: Layout) -> list[AssetsDefinition]:
    settings: dict[str, Any] = {
        "key": layout.key("store"),
        "partitions_def": layout.stores(),
        # The file set is part of the code version: a file added or deleted (then a reload) changes
        # which corpus partitions exist, which no data version can say.
        "code_version": layout.code_version("store", *layout.files),
        "automation_condition": AUTOMATION,
        "check_specs": checks.store_specs(layout.key("store")),
        "group_name": GROUP,
        "description": "The suite's corpus chunked for one chunking; unchanged documents skipped.",
    }
    # The golden set only for the check that its quotes resolve in the stored texts: an edited
    # golden file re-runs the check, while the store itself skips every unchanged document.
    golden = AssetDep(layout.key("golden"))

    def fill(paths: PathsResource, parsed: Mapping[str, ParsedFile] | None) -> MaterializeResult:  # type: ignore[type-arg]
        suite = layout.current()
        started = time.perf_counter()
        chunking = layout.chunkings[partition_key()]
        opened, report = fill_store(suite, chunking, Path(paths.store_root), parsed)
        with opened:
            seconds = time.perf_counter() - started
            stats = opened.stats()
            return MaterializeResult(
                data_version=DataVersion(store_version(opened)),
                metadata={
                    "directory": str(opened.directory),
                    "documents": stats.documents,
                    "chunks": stats.chunks,
                    **{action: report.count(action) for action in ("added", "updated", "unchanged")},
                    "rechunked": report.count("rechunked"),
                    "pruned": report.count("pruned"),
                    "seconds": round(seconds, 3),
                },
                check_results=[checks.golden_resolves(suite, opened), checks.spans_hold(opened)],
            )

    if layout.suite.beir is not None:
        # A BEIR corpus has no parse step: the store reads its JSON lines.
        corpus = AssetDep(layout.key("corpus"), partition_mapping=AllPartitionMapping())

        @asset(deps=[corpus, golden], **settings)  # type: ignore[untyped-decorator]  # settings: Any
        def beir_store(paths: PathsResource) -> MaterializeResult:  # type: ignore[type-arg]
            return fill(paths, None)

        store = beir_store
    else:
        parsed_in = AssetIn(layout.key("parsed"), partition_mapping=layout.parses_to_stores())

        @asset(ins={"parsed": parsed_in}, deps=[golden], **settings)  # type: ignore[untyped-decorator]
        def corpus_store(parsed: Any, paths: PathsResource) -> MaterializeResult:  # type: ignore[type-arg]
            # The IO manager hands over {file@backend: parsed file} for this chunking's backends,
            # except that a lone file comes bare.
            files = parsed.values() if isinstance(parsed, dict) else [parsed]
            return fill(paths, {f.document.id: f for f in files})

        store = corpus_store

    @asset(
        key=layout.key("keyword_index"),
        partitions_def=layout.stores("keyword"),
        deps=[AssetDep(layout.key("store"), partition_mapping=layout.same_chunking("keyword"))],
        code_version=layout.code_version("keyword_index"),
        automation_condition=AUTOMATION,
        group_name=GROUP,
        description="BM25 postings beside the store, per analyzer the keyword rows use.",
    )
    def keyword(paths: PathsResource) -> MaterializeResult:  # type: ignore[type-arg]
        chunking = layout.chunkings[partition_key()]
        stems = layout.analyzers(partition_key())
        with Store(store_dir(layout.suite, chunking, Path(paths.store_root))) as opened:
            reports = [keyword_index(opened, stem=stem)[1] for stem in stems]
            version = digest(store_version(opened), *map(str, stems))
        return MaterializeResult(
            data_version=DataVersion(version),
            metadata={
                "analyzers": ["porter" if s else "unicode61" for s in stems],
                "documents_updated": sum(r.documents_updated for r in reports),
                "chunks_added": sum(r.chunks_added for r in reports),
                "ms": round(sum(r.elapsed_ms for r in reports), 1),
            },
        )

    @asset(
        key=layout.key("vector_index"),
        partitions_def=layout.stores("vector"),
        deps=[AssetDep(layout.key("store"), partition_mapping=layout.same_chunking("vector"))],
        # The embedder is part of the code version: switching models re-embeds (into its own index).
        code_version=layout.code_version("vector_index", layout.embedder),
        automation_condition=AUTOMATION,
        group_name=GROUP,
        description="Chunk vectors beside the store for the configured embedder; only new chunks embedded.",
    )
    def vectors(paths: PathsResource, embedder: EmbedderResource) -> MaterializeResult:  # type: ignore[type-arg]
        model = embedder.get()
        chunking = layout.chunkings[partition_key()]
        with Store(store_dir(layout.suite, chunking, Path(paths.store_root))) as opened:
            _, report = vector_index(opened, model)
            version = digest(store_version(opened), describe(model))
        return MaterializeResult(
            data_version=DataVersion(version),
            metadata={"embedder": describe(model), **asdict(report)},
        )

    return [store, keyword, vectors]
