"""Chunkers by name, as the config and the CLI spell them."""

from __future__ import annotations

from clear_rag.chunk.base import Chunker
from clear_rag.chunk.fixed import FixedTokenChunker
from clear_rag.chunk.structural import StructuralChunker
from clear_rag.chunk.whole import WholeDocumentChunker
from clear_rag.tokens import TokenCounter, default_tokenizer

CHUNKERS: tuple[str, ...] = ("fixed", "structural", "whole")


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
    return StructuralChunker(counter, size=size, overlap_for_splits=overlap)
