from __future__ import annotations

import pytest

from clear_rag.chunk.base import chunk_id
from clear_rag.chunk.fixed import FixedTokenChunker
from clear_rag.chunk.structural import StructuralChunker
from clear_rag.tokens import RegexTokenizer, default_tokenizer
from clear_rag.types import Block, BlockKind, Chunk, Document


def doc(text: str, *parts: tuple[BlockKind, str]) -> Document:
    """A document whose blocks are the given pieces of ``text``, found in order."""
    blocks = []
    cursor = 0
    for kind, piece in parts:
        start = text.index(piece, cursor)
        cursor = start + len(piece)
        blocks.append(Block(kind=kind, start=start, end=cursor, level=1 if kind == "heading" else 0))
    return Document(id="doc", source="doc.md", content_hash="0" * 64, text=text, blocks=tuple(blocks))


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


GUIDE = "# Intro\n\nAlpha beta gamma.\n\n## Details\n\nDelta epsilon zeta eta.\n\nTheta iota.\n"
GUIDE_DOC = doc(
    GUIDE,
    ("heading", "# Intro"),
    ("paragraph", "Alpha beta gamma."),
    ("heading", "## Details"),
    ("paragraph", "Delta epsilon zeta eta."),
    ("paragraph", "Theta iota."),
)
# Regex tokens per block: 2, 4, 3, 5, 3.


def test_blocks_are_packed_whole_up_to_size() -> None:
    chunks = StructuralChunker(RegexTokenizer(), size=12).chunk(GUIDE_DOC)

    # 2+4+3 = 9 fits; adding 5 would make 14, so the heading moves on with its paragraph.
    assert texts(chunks) == [
        "# Intro\n\nAlpha beta gamma.",
        "## Details\n\nDelta epsilon zeta eta.\n\nTheta iota.",
    ]
    assert [c.token_count for c in chunks] == [6, 11]
    assert [(c.start, c.end) for c in chunks] == [(0, 26), (28, 76)]


def test_a_heading_is_carried_to_the_chunk_it_heads() -> None:
    chunks = StructuralChunker(RegexTokenizer(), size=9).chunk(GUIDE_DOC)

    # "## Details" fits after the first paragraph (2+4+3 = 9) but would end that chunk.
    assert texts(chunks) == [
        "# Intro\n\nAlpha beta gamma.",
        "## Details\n\nDelta epsilon zeta eta.",
        "Theta iota.",
    ]
    assert [c.token_count for c in chunks] == [6, 8, 3]


def test_everything_fits_in_one_chunk() -> None:
    chunks = StructuralChunker(RegexTokenizer(), size=100).chunk(GUIDE_DOC)

    assert texts(chunks) == [GUIDE.strip()]
    assert chunks[0].token_count == 17


def test_an_oversize_block_is_split_into_overlapping_windows_with_its_heading() -> None:
    text = "# T\n\nOne two three four five six seven.\n\nEnd."
    document = doc(
        text, ("heading", "# T"), ("paragraph", "One two three four five six seven."), ("paragraph", "End.")
    )
    chunks = StructuralChunker(RegexTokenizer(), size=4, overlap_for_splits=1).chunk(document)

    # Tokens of heading and paragraph: # T One two | two three four five | five six seven .
    assert texts(chunks) == ["# T\n\nOne two", "two three four five", "five six seven.", "End."]
    assert [c.token_count for c in chunks] == [4, 4, 4, 2]


def test_text_outside_blocks_is_kept() -> None:
    text = "Preface words.\n\n# H\n\nBody.\n\nstray\n\nAfterword here."
    document = doc(text, ("heading", "# H"), ("paragraph", "Body."), ("paragraph", "Afterword here."))
    chunks = StructuralChunker(RegexTokenizer(), size=5).chunk(document)

    # The preface before the first block is a segment of its own; "stray", between two blocks,
    # belongs to the block before it. Tokens: preface 3, heading 2, "Body. stray" 3, last 3.
    assert texts(chunks) == ["Preface words.", "# H\n\nBody.\n\nstray", "Afterword here."]
    assert [c.token_count for c in chunks] == [3, 5, 3]


def test_a_heading_at_the_very_end_stays_with_what_precedes_it() -> None:
    document = doc("Body text.\n\n# Appendix\n", ("paragraph", "Body text."), ("heading", "# Appendix"))

    assert texts(StructuralChunker(RegexTokenizer(), size=10).chunk(document)) == ["Body text.\n\n# Appendix"]


def test_unsorted_blocks_are_read_in_text_order() -> None:
    ordered = GUIDE_DOC
    shuffled = Document(
        id=ordered.id,
        source=ordered.source,
        content_hash=ordered.content_hash,
        text=ordered.text,
        blocks=tuple(reversed(ordered.blocks)),
    )
    chunker = StructuralChunker(RegexTokenizer(), size=9)

    assert chunker.chunk(shuffled) == chunker.chunk(ordered)


def test_a_document_without_blocks_falls_back_to_fixed_windows() -> None:
    text = "one two three four five six seven eight nine ten"
    document = Document(id="doc", source="doc.txt", content_hash="0" * 64, text=text, blocks=())
    structural = StructuralChunker(RegexTokenizer(), size=4, overlap_for_splits=1).chunk(document)
    fixed = FixedTokenChunker(RegexTokenizer(), size=4, overlap=1).chunk(document)

    assert structural == fixed
    assert texts(structural) == ["one two three four", "four five six seven", "seven eight nine ten"]


@pytest.mark.parametrize("text", ["", "  \n\n "])
def test_empty_or_blank_document_gives_no_chunks(text: str) -> None:
    blocks = (Block(kind="paragraph", start=0, end=len(text)),)
    document = Document(id="doc", source="doc.txt", content_hash="0" * 64, text=text, blocks=blocks)

    assert StructuralChunker(RegexTokenizer(), size=8).chunk(document) == []


def test_ids_are_derived_and_the_same_on_every_run() -> None:
    chunker = StructuralChunker(RegexTokenizer(), size=9)
    first, second = chunker.chunk(GUIDE_DOC), chunker.chunk(GUIDE_DOC)

    assert first == second
    assert [c.id for c in first] == [chunk_id("doc", 0), chunk_id("doc", 1), chunk_id("doc", 2)]


@pytest.mark.parametrize(("size", "overlap"), [(0, None), (8, 8), (8, -1)])
def test_invalid_settings_are_refused(size: int, overlap: int | None) -> None:
    with pytest.raises(ValueError, match=r"size=|overlap_for_splits="):
        StructuralChunker(RegexTokenizer(), size=size, overlap_for_splits=overlap)


def test_settings_record_size_overlap_and_tokenizer() -> None:
    assert StructuralChunker(RegexTokenizer(), size=40, overlap_for_splits=2).settings() == {
        "chunker": "structural",
        "size": 40,
        "overlap": 2,
        "tokenizer": "regex-words",
    }


def test_real_tokenizer_counts_each_block_once() -> None:
    tokenizer = default_tokenizer()
    text = "# Brakes\n\nDisc brakes need new pads at 1.5 mm.\n\n- check rotor\n- bleed yearly\n"
    document = doc(
        text,
        ("heading", "# Brakes"),
        ("paragraph", "Disc brakes need new pads at 1.5 mm."),
        ("list", "- check rotor\n- bleed yearly"),
    )
    heading = tokenizer.count("# Brakes")
    paragraph = tokenizer.count("Disc brakes need new pads at 1.5 mm.")
    listing = tokenizer.count("- check rotor\n- bleed yearly")

    chunks = StructuralChunker(tokenizer, size=heading + paragraph).chunk(document)

    assert texts(chunks) == [
        "# Brakes\n\nDisc brakes need new pads at 1.5 mm.",
        "- check rotor\n- bleed yearly",
    ]
    assert [c.token_count for c in chunks] == [heading + paragraph, listing]
