"""The chunker interface and the chunk id rule every chunker shares."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
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


def indexable(doc: Document) -> Document:
    """The part of ``doc`` that chunks are cut from: its text before the first ``furniture`` block.

    Running headers, footers and page numbers say nothing a question asks about, and in a chunk
    they would match every query that names the company or the form. A parser puts them after all
    body blocks, so the body is a prefix of the canonical text and every span cut from it is a span
    of the whole document. A document without furniture is returned as it is.
    """
    starts = [block.start for block in doc.blocks if block.kind == "furniture"]
    if not starts:
        return doc
    end = min(starts)
    body = tuple(block for block in doc.blocks if block.kind != "furniture" and block.end <= end)
    return replace(doc, text=doc.text[:end], blocks=body)
