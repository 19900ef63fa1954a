"""Ingestion: files found (``walk``), parsed, chunked and stored where something changed
(``files``). Bringing the indexes up to date after it is ``clear_rag.session.sync_indexes``, which
questions share.

What the rest of clear-rag uses is named here, so callers import ``clear_rag.ingest``; the modules are
where each part is written (and where a test patches one).
"""

from clear_rag.ingest.files import (
    FileOutcome,
    IngestReport,
    ParsedFile,
    chunker_key,
    discover,
    document_id,
    ingest,
    ingest_documents,
    parse_file,
    parser_key,
)
from clear_rag.ingest.walk import Discovery, shown, walk_paths

__all__ = [
    "Discovery",
    "FileOutcome",
    "IngestReport",
    "ParsedFile",
    "chunker_key",
    "discover",
    "document_id",
    "ingest",
    "ingest_documents",
    "parse_file",
    "parser_key",
    "shown",
    "walk_paths",
]
