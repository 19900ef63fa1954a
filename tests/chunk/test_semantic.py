"""Semantic chunking (heading-bounded packing): the structural chunker's guarantees, and no chunk that
runs from one section into the next."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clear_rag.chunk.structural import SemanticChunker, StructuralChunker
from clear_rag.tokens import RegexTokenizer, TokenCounter
from clear_rag.types import Block, Document
from tests.chunk.test_chunk_properties import PROPERTY, TOKENIZERS, check_chunks, chunk_twice, documents


@TOKENIZERS
@PROPERTY
@given(doc=documents(with_blocks=True), size=st.integers(1, 60))
def test_no_chunk_holds_text_on_both_sides_of_a_heading(
    tokenizer: TokenCounter, doc: Document, size: int
) -> None:
    chunks = chunk_twice(SemanticChunker(tokenizer, size=size), doc)
    check_chunks(doc, chunks, tokenizer, size)
    # chunks are cut between tokens, so only a heading that starts a token can start a chunk
    token_starts = {start for start, _ in tokenizer.offsets(doc.text)}
    headings = [b.start for b in doc.blocks if b.kind == "heading" and b.start in token_starts]
    for chunk in chunks:
        inside = [start for start in headings if chunk.start < start < chunk.end]
        # a heading may sit inside a chunk only when nothing but headings came before it there
        for start in inside:
            # (a block of whitespace alone holds no text: hypothesis found a blank paragraph between
            # two headings, which the chunker rightly packs with them, failing the check as first written)
            before = [
                b
                for b in doc.blocks
                if chunk.start <= b.start < start
                and b.kind != "heading"
                and doc.text[b.start : b.end].strip()
            ]
            assert not before or not doc.text[chunk.start : start].strip(), (chunk, start)


def test_where_structural_packs_two_sections_together_semantic_keeps_them_apart() -> None:
    text = "Revenue\n\nSales rose.\n\nRisks\n\nRates may rise."
    blocks = []
    for kind, part in (
        ("heading", "Revenue"),
        ("paragraph", "Sales rose."),
        ("heading", "Risks"),
        ("paragraph", "Rates may rise."),
    ):
        start = text.index(part)
        blocks.append(Block(kind, start, start + len(part), 1 if kind == "heading" else 0))  # type: ignore[arg-type]
    doc = Document("d", "d.md", "0" * 64, text, tuple(blocks))
    tokenizer = RegexTokenizer()
    assert [c.text for c in StructuralChunker(tokenizer, size=64).chunk(doc)] == [text]
    assert [c.text for c in SemanticChunker(tokenizer, size=64).chunk(doc)] == [
        "Revenue\n\nSales rose.",
        "Risks\n\nRates may rise.",
    ]
