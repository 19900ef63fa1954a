from __future__ import annotations

from itertools import pairwise

import pytest

from clear_rag.chunk.base import chunk_id
from clear_rag.chunk.factory import CHUNKERS, make_chunker
from clear_rag.chunk.fixed import FixedTokenChunker
from clear_rag.chunk.structural import StructuralChunker
from clear_rag.tokens import RegexTokenizer, default_tokenizer
from clear_rag.types import Chunk, Document

SEVEN = "one two three four five six seven"


def doc(text: str, doc_id: str = "d") -> Document:
    return Document(id=doc_id, source=f"{doc_id}.txt", content_hash="0" * 64, text=text, blocks=())


def spans(chunks: list[Chunk]) -> list[tuple[int, int]]:
    return [(c.start, c.end) for c in chunks]


def texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


def test_windows_overlap_by_the_given_tokens() -> None:
    chunks = FixedTokenChunker(RegexTokenizer(), size=3, overlap=1).chunk(doc(SEVEN))

    # tokens: one(0,3) two(4,7) three(8,13) four(14,18) five(19,23) six(24,27) seven(28,33); step 3-1
    assert spans(chunks) == [(0, 13), (8, 23), (19, 33)]
    assert texts(chunks) == ["one two three", "three four five", "five six seven"]
    assert [c.token_count for c in chunks] == [3, 3, 3]
    assert [c.position for c in chunks] == [0, 1, 2]


def test_zero_overlap_gives_adjacent_windows_and_a_short_last_one() -> None:
    chunks = FixedTokenChunker(RegexTokenizer(), size=3, overlap=0).chunk(doc(SEVEN))

    assert texts(chunks) == ["one two three", "four five six", "seven"]
    assert [c.token_count for c in chunks] == [3, 3, 1]


def test_no_window_is_added_once_the_last_token_is_reached() -> None:
    # 4 tokens, step 2: the window [2, 4) already ends the text, so no window [4, 4) follows.
    chunks = FixedTokenChunker(RegexTokenizer(), size=2, overlap=0).chunk(doc("a b c d"))

    assert texts(chunks) == ["a b", "c d"]


def test_a_document_that_fits_is_one_chunk_trimmed_of_whitespace() -> None:
    text = "\n\n  Short text, one chunk.  \n"
    chunks = FixedTokenChunker(RegexTokenizer(), size=50).chunk(doc(text))

    assert len(chunks) == 1
    assert (chunks[0].start, chunks[0].end) == (4, 26)
    assert chunks[0].text == "Short text, one chunk."
    assert chunks[0].token_count == 6


@pytest.mark.parametrize("text", ["", " ", "\n\n\t  \n"])
def test_empty_or_blank_document_gives_no_chunks(text: str) -> None:
    assert FixedTokenChunker(RegexTokenizer(), size=4).chunk(doc(text)) == []


def test_ids_are_derived_from_document_and_position_and_repeat() -> None:
    chunker = FixedTokenChunker(RegexTokenizer(), size=2, overlap=1)
    first = chunker.chunk(doc(SEVEN, doc_id="manual"))
    second = chunker.chunk(doc(SEVEN, doc_id="manual"))

    assert first == second
    assert [c.id for c in first] == [chunk_id("manual", i) for i in range(len(first))]
    assert all(c.doc_id == "manual" for c in first)


def test_default_overlap_is_an_eighth_of_size() -> None:
    assert FixedTokenChunker(RegexTokenizer()).settings() == {
        "chunker": "fixed",
        "size": 256,
        "overlap": 32,
        "tokenizer": "regex-words",
    }
    assert FixedTokenChunker(RegexTokenizer(), size=8).overlap == 1
    assert FixedTokenChunker(RegexTokenizer(), size=1).overlap == 0


@pytest.mark.parametrize(
    ("size", "overlap", "message"),
    [
        (0, None, "size=0"),
        (-5, None, "size=-5"),
        (4, 4, "overlap=4"),
        (4, 9, "overlap=9"),
        (4, -1, "overlap=-1"),
    ],
)
def test_invalid_settings_are_refused_with_the_value(size: int, overlap: int | None, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        FixedTokenChunker(RegexTokenizer(), size=size, overlap=overlap)


@pytest.mark.parametrize(("size", "overlap"), [(2.5, None), (True, None), (8, 1.0)])
def test_settings_that_are_not_whole_numbers_are_refused(size: object, overlap: object) -> None:
    with pytest.raises(TypeError, match="whole number"):
        FixedTokenChunker(RegexTokenizer(), size=size, overlap=overlap)  # type: ignore[arg-type]


def test_control_characters_without_tokens_stay_in_the_window_before() -> None:
    # The BERT normaliser drops \x00 and \x07, so they produce no token; cutting at token starts
    # still puts them in a chunk.
    text = "hello \x00\x00 world\x07"
    chunks = FixedTokenChunker(default_tokenizer(), size=1, overlap=0).chunk(doc(text))

    assert texts(chunks) == ["hello \x00\x00", "world\x07"]
    assert [c.token_count for c in chunks] == [1, 1]


def test_a_document_of_characters_without_tokens_is_one_chunk_of_zero_tokens() -> None:
    chunks = FixedTokenChunker(default_tokenizer(), size=4).chunk(doc(" \x00\x07 "))

    assert texts(chunks) == ["\x00\x07"]
    assert chunks[0].token_count == 0


def test_tokens_of_one_character_are_never_cut_apart() -> None:
    # The normaliser decomposes the syllable 임 into three jamo tokens that all start at character 2.
    tokenizer = default_tokenizer()
    assert tokenizer.offsets("a 임 b") == [(0, 1), (2, 3), (2, 3), (2, 3), (4, 5)]

    chunks = FixedTokenChunker(tokenizer, size=2, overlap=0).chunk(doc("a 임 b"))

    assert texts(chunks) == ["a", "임", "b"]
    assert [c.token_count for c in chunks] == [1, 3, 1]


def test_real_tokenizer_windows_hold_at_most_size_tokens_and_tile_without_overlap() -> None:
    tokenizer = default_tokenizer()
    text = (
        "Disc brakes need new pads once the friction material is worn to 1.5 millimetres. "
        "Bleed hydraulic systems yearly, and replace a chain at 0.5% stretch.\n\n"
        "Tyre pressure for road bikes is usually 80 to 100 psi; gravel tyres run lower."
    )
    total = tokenizer.count(text)
    chunks = FixedTokenChunker(tokenizer, size=10, overlap=0).chunk(doc(text))

    assert all(c.token_count <= 10 for c in chunks)
    assert sum(c.token_count for c in chunks) == total
    assert len(chunks) == -(-total // 10)
    # With no overlap the chunks tile the text: only whitespace at the cuts is left out.
    assert "".join("".join(texts(chunks)).split()) == "".join(text.split())


def test_real_tokenizer_overlap_repeats_the_last_tokens_of_each_window() -> None:
    tokenizer = default_tokenizer()
    text = " ".join(f"word{i}" if i % 3 else "plain" for i in range(40))
    chunks = FixedTokenChunker(tokenizer, size=12, overlap=3).chunk(doc(text))
    offsets = tokenizer.offsets(text)

    assert len(chunks) > 2
    for before, after in pairwise(chunks):
        shared = [s for s, _ in offsets if after.start <= s < before.end]
        assert len(shared) == 3


def test_factory_builds_each_chunker_by_name() -> None:
    tokenizer = RegexTokenizer()
    fixed = make_chunker("fixed", size=64, overlap=4, tokenizer=tokenizer)
    structural = make_chunker("structural", size=64, tokenizer=tokenizer)

    assert CHUNKERS == ("fixed", "structural", "semantic", "whole")
    assert isinstance(fixed, FixedTokenChunker)
    assert isinstance(structural, StructuralChunker)
    assert fixed.settings() == {"chunker": "fixed", "size": 64, "overlap": 4, "tokenizer": "regex-words"}
    assert structural.settings() == {
        "chunker": "structural",
        "size": 64,
        "overlap": 8,
        "tokenizer": "regex-words",
    }


def test_factory_defaults_to_the_embedder_tokenizer() -> None:
    assert make_chunker("fixed", size=64).settings()["tokenizer"] == "all-MiniLM-L6-v2"


def test_factory_names_the_known_chunkers_for_an_unknown_one() -> None:
    with pytest.raises(
        ValueError,
        match=r"chunker='sentences' is unknown; expected one of: fixed, structural, semantic, whole",
    ):
        make_chunker("sentences", size=64, tokenizer=RegexTokenizer())


def test_factory_passes_invalid_settings_on_to_the_chunker_check() -> None:
    with pytest.raises(ValueError, match="overlap_for_splits=64"):
        make_chunker("structural", size=64, overlap=64, tokenizer=RegexTokenizer())


def test_a_window_cut_inside_a_word_counts_its_text_as_read_alone() -> None:
    """A window starting at a word piece ("##ros" of "tyrosine") holds one token of the document's
    tokenisation, but read alone its text is two ("ro", "##s"): the context pays for the latter, so
    that is what ``text_tokens`` stores (issue 32)."""
    tokenizer = default_tokenizer()
    text = "tyrosine-based inhibition motif"
    chunks = FixedTokenChunker(tokenizer, size=1, overlap=0).chunk(Document("d", "d", "h", text, ()))
    ros = next(c for c in chunks if c.text == "ros")
    assert ros.token_count == 1
    assert ros.text_tokens == tokenizer.count("ros") == 2
    assert all(c.text_tokens == tokenizer.count(c.text) for c in chunks)
