from __future__ import annotations

from clear_rag.chunk.base import chunk_id
from clear_rag.chunk.factory import make_chunker
from clear_rag.tokens import RegexTokenizer
from clear_rag.types import Document


def _doc(text: str) -> Document:
    return Document("d", "/d", "h", text, ())


def test_one_trimmed_chunk_per_document() -> None:
    chunker = make_chunker("whole", size=4, tokenizer=RegexTokenizer())  # size does not apply
    (chunk,) = chunker.chunk(_doc("\n  Title\n\nBody text, longer than four tokens.  \n"))
    assert chunk.id == chunk_id("d", 0)
    assert chunk.text == "Title\n\nBody text, longer than four tokens."
    assert (
        _doc("\n  Title\n\nBody text, longer than four tokens.  \n").text[chunk.start : chunk.end]
        == chunk.text
    )
    assert chunk.token_count == len(["Title", "Body", "text", ",", "longer", "than", "four", "tokens", "."])
    assert chunker.settings() == {"chunker": "whole", "tokenizer": "regex-words"}


def test_blank_document_has_no_chunk() -> None:
    assert make_chunker("whole", size=1, tokenizer=RegexTokenizer()).chunk(_doc(" \n\t")) == []
