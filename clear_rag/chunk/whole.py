"""One chunk per document: for corpora of short passages (BEIR abstracts, say) judged per document."""

from __future__ import annotations

from collections.abc import Mapping

from clear_rag.chunk.base import chunk_id, indexable
from clear_rag.tokens import TokenCounter
from clear_rag.types import Chunk, Document


class WholeDocumentChunker:
    """The whole canonical text, less surrounding whitespace and furniture (``indexable``), as chunk 0;
    a blank document gives none."""

    name = "whole"

    def __init__(self, tokenizer: TokenCounter) -> None:
        self._tokenizer = tokenizer

    def settings(self) -> Mapping[str, object]:
        return {"chunker": self.name, "tokenizer": self._tokenizer.name}

    def chunk(self, doc: Document) -> list[Chunk]:
        doc = indexable(doc)
        stripped = doc.text.strip()
        if not stripped:
            return []
        start = doc.text.index(stripped)
        end = start + len(stripped)
        tokens = self._tokenizer.count(stripped)  # the whole text: the window and the text alike
        return [Chunk(chunk_id(doc.id, 0), doc.id, start, end, stripped, 0, tokens, tokens)]
