"""Furniture (running headers and footers, page numbers) never reaches a chunk, whatever the chunker.

A PDF parser places furniture blocks after all body blocks; every chunker cuts only the body
before the first of them (``chunk.base.indexable``), so the chunks of a document with furniture
are exactly the chunks of its body alone.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.chunk.base import Chunker, indexable
from clear_rag.chunk.factory import CHUNKERS, make_chunker
from clear_rag.tokens import RegexTokenizer
from clear_rag.types import Block, BlockKind, Document

HEADER = "ACME Corp | 2024 Form 10-K"


def _document(body: list[str], furniture: list[str]) -> Document:
    """Body paragraphs, then furniture lines, joined by blank lines as the parsers assemble them."""
    parts = [*body, *furniture]
    blocks: list[Block] = []
    offset = 0
    for index, part in enumerate(parts):
        kind: BlockKind = "paragraph" if index < len(body) else "furniture"
        blocks.append(Block(kind, offset, offset + len(part)))
        offset += len(part) + 2
    return Document("d", "d.pdf", "0" * 64, "\n\n".join(parts), tuple(blocks), "application/pdf")


@pytest.mark.parametrize("name", CHUNKERS)
def test_no_chunk_holds_furniture_text(name: str) -> None:
    doc = _document(["Revenue grew in every segment.", "Margins fell."], [HEADER, "12", HEADER, "13"])
    chunks = make_chunker(name, size=4, overlap=1, tokenizer=RegexTokenizer()).chunk(doc)
    assert chunks
    assert all(HEADER not in chunk.text and "12" not in chunk.text for chunk in chunks)
    assert all(doc.text[chunk.start : chunk.end] == chunk.text for chunk in chunks)
    assert "Margins fell." in " ".join(chunk.text for chunk in chunks)


def test_indexable_is_the_body_prefix_and_leaves_a_document_without_furniture_alone() -> None:
    doc = _document(["One.", "Two."], ["7"])
    body = indexable(doc)
    assert body.text == "One.\n\nTwo.\n\n"
    assert [block.kind for block in body.blocks] == ["paragraph", "paragraph"]
    plain = _document(["One."], [])
    assert indexable(plain) is plain


def test_a_document_of_furniture_only_gives_no_chunks() -> None:
    doc = _document([], [HEADER, "1"])
    for name in CHUNKERS:
        assert make_chunker(name, size=8, tokenizer=RegexTokenizer()).chunk(doc) == []


words = st.text(alphabet="abcdefghij", min_size=1, max_size=6)
paragraphs = st.lists(words, min_size=1, max_size=8).map(" ".join)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.lists(paragraphs, max_size=8),
    furniture=st.lists(paragraphs, min_size=1, max_size=4),
    name=st.sampled_from(CHUNKERS),
    size=st.integers(1, 30),
)
def test_chunks_with_furniture_are_the_chunks_of_the_body_alone(
    body: list[str], furniture: list[str], name: str, size: int
) -> None:
    chunker: Chunker = make_chunker(name, size=size, overlap=0, tokenizer=RegexTokenizer())
    with_furniture = _document(body, furniture)
    alone = _document(body, [])
    assert chunker.chunk(with_furniture) == chunker.chunk(alone)
