"""Chunkers by name, as the config and the CLI spell them."""

from __future__ import annotations

from collections.abc import Mapping

from clear_rag.chunk.base import Chunker
from clear_rag.chunk.fixed import FixedTokenChunker
from clear_rag.chunk.structural import SemanticChunker, StructuralChunker
from clear_rag.chunk.whole import WholeDocumentChunker
from clear_rag.config import ChunkingConfig
from clear_rag.tokens import TokenCounter, default_tokenizer
from clear_rag.types import Chunk, Document

CHUNKERS: tuple[str, ...] = ("fixed", "structural", "semantic", "whole")


class Contextual:
    """Another chunker's chunks, unchanged, with ``contextual`` in its settings: the indexes then add
    each chunk with a document and section prefix (``clear_rag.index.context``). The flag lives in the
    settings so that the store records it and turning it on or off re-indexes every document."""

    def __init__(self, inner: Chunker) -> None:
        self.inner = inner
        self.name = inner.name

    def settings(self) -> Mapping[str, object]:
        return {**self.inner.settings(), "contextual": True}

    def chunk(self, doc: Document) -> list[Chunk]:
        return self.inner.chunk(doc)


def chunker_for(chunking: ChunkingConfig, tokenizer: TokenCounter | None = None) -> Chunker:
    """The chunker a config's ``chunking`` table names: the one way every entry point builds it."""
    chunker = make_chunker(
        chunking.chunker, size=chunking.size, overlap=chunking.overlap, tokenizer=tokenizer
    )
    return Contextual(chunker) if chunking.contextual else chunker


def make_chunker(
    name: str, *, size: int, overlap: int | None = None, tokenizer: TokenCounter | None = None
) -> Chunker:
    """The chunker called ``name``, cutting windows of ``size`` tokens.

    ``overlap`` is the fixed chunker's window overlap and the structural chunker's overlap when it
    splits an oversize block; ``None`` means one eighth of ``size``. ``whole`` ignores both.
    ``tokenizer`` defaults to the default embedder's, so sizes are in the tokens that embedder
    truncates at.
    """
    if name not in CHUNKERS:
        raise ValueError(f"chunker={name!r} is unknown; expected one of: {', '.join(CHUNKERS)}")
    counter = tokenizer if tokenizer is not None else default_tokenizer()
    if name == "fixed":
        return FixedTokenChunker(counter, size=size, overlap=overlap)
    if name == "whole":  # size and overlap do not apply: one chunk per document
        return WholeDocumentChunker(counter)
    if name == "semantic":
        return SemanticChunker(counter, size=size, overlap_for_splits=overlap)
    return StructuralChunker(counter, size=size, overlap_for_splits=overlap)
