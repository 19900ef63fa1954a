"""Chunks' own token counts read off the document's tokenisation equal counting each text alone."""

from __future__ import annotations

import re
from collections.abc import Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.chunk import fixed
from clear_rag.chunk.counts import own_token_counts
from clear_rag.chunk.fixed import FixedTokenChunker
from clear_rag.chunk.structural import StructuralChunker
from clear_rag.tokens import RegexTokenizer, TokenCounter, default_tokenizer
from clear_rag.types import Block, Document

# Words that split into several pieces, punctuation, accents, CJK, Hangul (jamo sharing a start),
# the separators BERT's normaliser deletes, and every kind of whitespace, so that span edges fall
# inside words, between pieces and next to each kind of space.
PIECES = [
    "tyrosine", "inhibition", "xqzjv", "supercalifragilisticexpialidocious",
    "déjà", "e\u0301", "ﬁ", "İ", "straße", "日本語", "한국어", "임", "😀", ",", ".", "-", "(", "'", "1.5",
    " ", " ", " ", "  ", "\t", "\n", "\n\n", "\r\n", "\u00a0", "\u2028", "\u3000", "\x85",
    "\x00", "\x1c", "\x1f",
]  # fmt: skip

# Runs without a space long enough for token_starts to cut where they stand once PIECE_CHARS is 7.
long_runs = st.text(alphabet=st.sampled_from(list("abé中임-.\x1c")), min_size=20, max_size=70)
texts = st.lists(
    st.one_of(st.sampled_from(PIECES), st.characters(codec="utf-8"), long_runs), max_size=60
).map("".join)

TOKENIZERS = pytest.mark.parametrize(
    "tokenizer", [RegexTokenizer(), default_tokenizer()], ids=["regex", "minilm"]
)
PROPERTY = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def text_and_spans(draw: st.DrawFn) -> tuple[str, list[tuple[int, int]]]:
    text = draw(texts)
    bounds = st.integers(0, len(text))
    pairs = draw(st.lists(st.tuples(bounds, bounds), max_size=12))
    return text, [(min(a, b), max(a, b)) for a, b in pairs]


def counted(tokenizer: TokenCounter, text: str, spans: list[tuple[int, int]]) -> list[int]:
    return own_token_counts(
        tokenizer, text, fixed.token_starts(tokenizer, text), spans, fixed.forced_cuts(text)
    )


@TOKENIZERS
@PROPERTY
@given(case=text_and_spans())
def test_counts_equal_counting_each_span_alone(
    tokenizer: TokenCounter, case: tuple[str, list[tuple[int, int]]]
) -> None:
    text, spans = case
    assert counted(tokenizer, text, spans) == [tokenizer.count(text[s:e]) for s, e in spans]


@TOKENIZERS
@PROPERTY
@given(case=text_and_spans())
def test_counts_stay_exact_where_the_text_was_tokenised_in_pieces(
    tokenizer: TokenCounter, case: tuple[str, list[tuple[int, int]]]
) -> None:
    # Pieces of 7 characters cut at nearly every space, and a run of more than 28 characters without
    # one where it stands: there the document's starts are not the text's own (forced_cuts).
    text, spans = case
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(fixed, "PIECE_CHARS", 7)
        assert counted(tokenizer, text, spans) == [tokenizer.count(text[s:e]) for s, e in spans]


@TOKENIZERS
def test_a_span_inside_a_long_word_cut_where_it_stands_is_counted_whole(
    tokenizer: TokenCounter, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = "a " + "tyrosine" * 8 + " b"
    monkeypatch.setattr(fixed, "PIECE_CHARS", 7)
    # The first piece looks for a space from 7 to 4 * 7, finds none and ends at 28, inside the word;
    # the second, from 35 to 56, ends at 56.
    assert fixed.forced_cuts(text) == [28, 56]
    spans = [(0, len(text)), (2, 66), (10, 40), (0, 1)]
    assert counted(tokenizer, text, spans) == [tokenizer.count(text[s:e]) for s, e in spans]


def test_empty_text_and_no_spans() -> None:
    tokenizer = RegexTokenizer()
    assert own_token_counts(tokenizer, "", [], []) == []
    assert own_token_counts(tokenizer, "", [], [(0, 0)]) == [0]


class CountingTokenizer(RegexTokenizer):
    """The regex tokenizer, remembering every text it was asked to count."""

    def __init__(self) -> None:
        self.counted: list[str] = []

    def count_batch(self, texts: Sequence[str]) -> list[int]:
        self.counted += texts
        return super().count_batch(texts)


def test_chunking_whole_words_tokenises_no_chunk_again() -> None:
    """The predecessor counted every chunk's text with count_batch, tokenising the document a second
    time; windows that cut only between words now hand the tokenizer nothing to count."""
    text = "\n\n".join(" ".join(f"w{p}x{n}" for n in range(50)) for p in range(6))
    blocks = tuple(Block("paragraph", m.start(), m.end()) for m in re.finditer(r"[^\n]+", text))
    doc = Document("d", "d.txt", "0" * 64, text, blocks)
    for make in (lambda t: FixedTokenChunker(t, size=16, overlap=4), lambda t: StructuralChunker(t, size=20)):
        tokenizer = CountingTokenizer()
        chunks = make(tokenizer).chunk(doc)
        assert len(chunks) > len(blocks)  # windows inside paragraphs as well as whole ones
        assert all(c.text_tokens == tokenizer.count(c.text) for c in chunks)
        assert tokenizer.counted == []
