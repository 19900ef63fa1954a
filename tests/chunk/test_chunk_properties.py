"""The span invariant and full coverage, for every chunker, over random documents."""

from __future__ import annotations

import re
from bisect import bisect_left
from itertools import pairwise

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from clear_rag.chunk import fixed
from clear_rag.chunk.base import Chunker, chunk_id
from clear_rag.chunk.fixed import FixedTokenChunker
from clear_rag.chunk.structural import StructuralChunker
from clear_rag.chunk.whole import WholeDocumentChunker
from clear_rag.tokens import RegexTokenizer, TokenCounter, default_tokenizer
from clear_rag.types import BLOCK_KINDS, Block, Chunk, Document

PIECES = [
    "alpha", "Beta", "gamma", "déjà", "naïve", "Ünïcode", "e\u0301", "ﬁ", "İ", "straße",
    "日本語", "中文", "한국어", "임", "😀",
    ",", ".", "!", "?", "'", "-", "(", ")", "#", "1.5", "100%",
    " ", " ", " ", " ", "  ", "\t", "\n", "\n", "\n\n", "\n\n\n", "\u2028", "\x85",
    "\x00", "\x07", "\x1f",
]  # fmt: skip

# Furniture (running headers, page numbers) is kept out of chunks: tests/chunk/test_furniture.py.
BODY_KINDS = tuple(kind for kind in BLOCK_KINDS if kind != "furniture")

# Mostly words, punctuation and whitespace, with any other character now and then.
texts = st.lists(st.one_of(st.sampled_from(PIECES), st.characters(codec="utf-8")), max_size=120).map("".join)


@st.composite
def documents(draw: st.DrawFn, *, with_blocks: bool) -> Document:
    text = draw(texts)
    blocks: list[Block] = []
    if with_blocks and text:
        cuts = sorted(draw(st.sets(st.integers(0, len(text)), max_size=16)))
        keep = draw(st.lists(st.booleans(), min_size=len(cuts), max_size=len(cuts)))
        kinds = draw(st.lists(st.sampled_from(BODY_KINDS), min_size=len(cuts), max_size=len(cuts)))
        # Consecutive cuts bound blocks that touch but never overlap; skipped pairs leave text
        # outside every block, as a parser may.
        blocks = [
            Block(kind=kind, start=start, end=end)
            for start, end, kind, kept in zip(cuts, cuts[1:], kinds, keep, strict=False)
            if kept
        ]
    return Document(id="prop", source="prop.txt", content_hash="0" * 64, text=text, blocks=tuple(blocks))


@st.composite
def window_settings(draw: st.DrawFn) -> tuple[int, int]:
    size = draw(st.integers(1, 40))
    return size, draw(st.integers(0, size - 1))


TOKENIZERS = pytest.mark.parametrize(
    "tokenizer", [RegexTokenizer(), default_tokenizer()], ids=["regex", "minilm"]
)
PROPERTY = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def check_chunks(doc: Document, chunks: list[Chunk], tokenizer: TokenCounter, size: int) -> None:
    text = doc.text
    assert [c.position for c in chunks] == list(range(len(chunks)))
    assert [c.id for c in chunks] == [chunk_id(doc.id, c.position) for c in chunks]
    covered = [False] * len(text)
    starts = sorted(start for start, _ in tokenizer.offsets(text))
    for chunk in chunks:
        assert 0 <= chunk.start < chunk.end <= len(text)
        assert text[chunk.start : chunk.end] == chunk.text
        assert chunk.doc_id == doc.id
        assert not chunk.text[0].isspace()
        assert not chunk.text[-1].isspace()
        inside = starts[bisect_left(starts, chunk.start) : bisect_left(starts, chunk.end)]
        assert chunk.token_count == len(inside)
        # what the context stage reads instead of tokenising the chunk again (issue 32)
        assert chunk.text_tokens == tokenizer.count(chunk.text)
        # Over size only when a single character yields more than size tokens (a Hangul syllable
        # decomposed into jamo), which no cut between characters can split.
        assert chunk.token_count <= size or len(set(inside)) == 1
        covered[chunk.start : chunk.end] = [True] * (chunk.end - chunk.start)
    for before, after in pairwise(chunks):
        assert before.start < after.start
        assert before.end <= after.end
    uncovered = [i for i, char in enumerate(text) if not char.isspace() and not covered[i]]
    assert uncovered == []
    if text.strip():
        assert chunks


def chunk_twice(chunker: Chunker, doc: Document) -> list[Chunk]:
    first = chunker.chunk(doc)
    assert chunker.chunk(doc) == first
    return first


@TOKENIZERS
@PROPERTY
@given(doc=documents(with_blocks=False), window=window_settings())
def test_fixed_chunks_are_exact_ordered_and_cover_the_text(
    tokenizer: TokenCounter, doc: Document, window: tuple[int, int]
) -> None:
    size, overlap = window
    chunks = chunk_twice(FixedTokenChunker(tokenizer, size=size, overlap=overlap), doc)

    check_chunks(doc, chunks, tokenizer, size)


@TOKENIZERS
@PROPERTY
@given(doc=documents(with_blocks=True), window=window_settings())
def test_structural_chunks_are_exact_ordered_and_cover_the_text(
    tokenizer: TokenCounter, doc: Document, window: tuple[int, int]
) -> None:
    size, overlap = window
    chunks = chunk_twice(StructuralChunker(tokenizer, size=size, overlap_for_splits=overlap), doc)

    check_chunks(doc, chunks, tokenizer, size)


@TOKENIZERS
@PROPERTY
@given(doc=documents(with_blocks=True), size=st.integers(1, 400))
def test_a_document_that_fits_is_one_chunk_whatever_its_blocks(
    tokenizer: TokenCounter, doc: Document, size: int
) -> None:
    starts = [start for start, _ in tokenizer.offsets(doc.text)]
    chunks = StructuralChunker(tokenizer, size=size).chunk(doc)

    if doc.text.strip() and len(starts) <= size:
        assert [c.text for c in chunks] == [doc.text.strip()]
        assert chunks[0].token_count == len(starts)
    elif len(starts) > size and len(set(starts)) > 1:
        # Only the tokens of one single character may exceed size in one chunk.
        assert len(chunks) > 1


@TOKENIZERS
@PROPERTY
@given(text=st.text(alphabet=st.sampled_from(list("ab é中임.,!- \t\n\r\x1c\u3000")), max_size=400))
def test_tokenising_in_pieces_gives_the_starts_of_one_tokenisation(
    tokenizer: TokenCounter, text: str
) -> None:
    # Pieces of a few characters cut the text at nearly every space; the starts must not change.
    # (A run longer than four pieces without a space is cut where it stands, by design.)
    assume(all(len(run) <= 4 * 7 for run in re.split(r"[ \t\n\r]", text)))
    original = fixed.PIECE_CHARS
    try:
        fixed.PIECE_CHARS = 7
        pieces = list(fixed.token_starts(tokenizer, text))
    finally:
        fixed.PIECE_CHARS = original
    assert pieces == sorted(start for start, _ in tokenizer.offsets(text))


@TOKENIZERS
@PROPERTY
@given(doc=documents(with_blocks=True))
def test_a_whole_document_chunk_counts_its_own_text(tokenizer: TokenCounter, doc: Document) -> None:
    for chunk in WholeDocumentChunker(tokenizer).chunk(doc):
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text_tokens == chunk.token_count == tokenizer.count(chunk.text)
