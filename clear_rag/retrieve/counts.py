"""Each chunk's own token count for the context stage: read from the store, never tokenised per question.

Ingest counts every chunk's text once with the chunker's tokenizer (``Chunk.text_tokens``) and the
pipeline's chunk table carries the counts (``ChunkRef.tokens``). They are that tokenizer's counts, so
they stand only for the same tokenizer, told by name, as the chunker settings record it (the name is
what makes ingest re-chunk a store when the tokenizer changes). Where they do not stand (the context
is counted in a chat model's own tokenizer, or the store was written before counts were kept, or its
documents were chunked with several tokenizers), a chunk is counted the first time a question packs
it and kept for every later question of the pipeline: once per chunk and tokenizer, never per question.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from clear_rag.retrieve.stages import ChunkRef
from clear_rag.tokens import TokenCount


class ChunkTokens:
    """Chunks' own token counts in any tokenizer's tokens, for ``assemble(chunk_tokens=...)``.

    ``counted_by`` names the tokenizer whose counts the table holds (None: no counts stand for any
    tokenizer); ``chunk_text`` gives a chunk's text by id, for the chunks counted here.
    """

    def __init__(
        self, table: Mapping[str, ChunkRef], chunk_text: Callable[[str], str], counted_by: str | None
    ) -> None:
        self._table = table
        self._chunk_text = chunk_text
        self.counted_by = counted_by
        self._counted: dict[str, dict[str, int]] = {}  # tokenizer name -> chunk id -> count
        self._lock = threading.Lock()

    def counter(self, tokenizer: TokenCount) -> Callable[[str], int]:
        """A chunk's own token count in ``tokenizer``'s tokens, by chunk id."""
        stored = tokenizer.name == self.counted_by
        with self._lock:
            kept = self._counted.setdefault(tokenizer.name, {})

        def count(chunk_id: str) -> int:
            if stored:
                tokens = self._table[chunk_id].tokens
                if tokens is not None:
                    return tokens
            found = kept.get(chunk_id)
            if found is None:
                found = kept[chunk_id] = tokenizer.count(self._chunk_text(chunk_id))
            return found

        return count
