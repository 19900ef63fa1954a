"""Parsed documents: each corpus file parsed once per parser backend, for every store (chunking) that
reads it with that backend.

- ``<suite>/parsed``: one partition per corpus file and backend (``pdf/aapl.pdf@layout``,
  ``pdf/aapl.pdf@flat`` where a row parses PDFs with ``flat``, ``notes.md@markdown-it``), the
  document that backend produced (text, typed blocks with spans, warnings), kept by Dagster's IO
  manager; data version = the parser backend and version and the file's content hash, so a file whose
  bytes did not change parses to the same version and requests nothing downstream.

A BEIR corpus is one JSON-lines file whose lines are documents already; it has no parse step.
"""

from __future__ import annotations

from pathlib import Path

from dagster import (
    AssetDep,
    AssetsDefinition,
    DataVersion,
    MaterializeResult,
    PythonObjectDagsterType,
    asset,
)

from assets.layout import AUTOMATION, Layout, partition_key
from clear_rag.ingest import ParsedFile, document_id, parse_file
from clear_rag.parse.registry import file_type_of

GROUP = "parsed"
PARSED = PythonObjectDagsterType(ParsedFile, name="ParsedFile", description="`clear_rag.ingest.ParsedFile`")


def parsed_assets(layout: Layout) -> list[AssetsDefinition]:
    if layout.suite.beir is not None:
        return []

    @asset(
        key=layout.key("parsed"),
        partitions_def=layout.parsed,
        deps=[AssetDep(layout.key("corpus"), partition_mapping=layout.file_to_parses())],
        code_version=layout.code_version("parsed"),
        automation_condition=AUTOMATION,
        dagster_type=PARSED,
        group_name=GROUP,
        description="One corpus file parsed by one parser backend: text and typed blocks.",
    )
    def parsed() -> MaterializeResult:  # type: ignore[type-arg]
        file_key, _, backend = partition_key().rpartition("@")
        path = layout.corpus_path(file_key)
        # Ids relative to the working directory, as the stores (and `clear-rag ablate`) give them.
        result = parse_file(path, document_id(path, Path.cwd()), {file_type_of(path): backend})
        doc = result.document
        return MaterializeResult(
            value=result,
            data_version=DataVersion(f"{result.parser} {doc.content_hash[:16]}"),
            metadata={
                "parser": result.parser,
                "media_type": doc.media_type,
                "bytes": result.size_bytes,
                "characters": len(doc.text),
                "blocks": len(doc.blocks),
                "warnings": list(result.warnings),
            },
        )

    return [parsed]
