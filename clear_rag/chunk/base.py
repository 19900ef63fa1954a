"""The chunker interface and the chunk id rule every chunker shares."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from clear_rag.types import Chunk, Document


class Chunker(Protocol):
    """Cuts one document into chunks whose spans are exact slices of its canonical text.

    ``settings`` is recorded in the store: when it changes, the next ingest re-chunks every
    document (from the stored text and blocks, without parsing again).
    """

    name: str

    def settings(self) -> Mapping[str, object]: ...

    def chunk(self, doc: Document) -> list[Chunk]: ...


def chunk_id(doc_id: str, position: int) -> str:
    """The id of the chunk at ``position`` in document ``doc_id``.

    Derived, never random: the predecessor gave chunks random UUIDs, so BM25 and RRF ties broke
    differently on every ingest and the same evaluation gave different metrics run to run.
    """
    return f"{doc_id}#{position:04d}"
