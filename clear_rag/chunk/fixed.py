"""Fixed token windows with a small overlap, cut exactly between tokens.

The helpers here (token starts, windows over a token range, spans to chunks) are shared with the
structural chunker, which falls back to the same windows for a run of text too big for one chunk.
"""

from __future__ import annotations

import re
from array import array
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter

from clear_rag.chunk.base import chunk_id, indexable
from clear_rag.chunk.counts import WHITESPACE, own_token_counts
from clear_rag.tokens import TokenCounter
from clear_rag.types import Chunk, Document

DEFAULT_SIZE = 256


@dataclass(frozen=True, slots=True)
class Span:
    """A chunk before trimming: a character range and how many tokens start inside it."""

    start: int
    end: int
    tokens: int


def default_overlap(size: int) -> int:
    """One eighth of ``size``: 32 tokens for the default 256.

    The predecessor overlapped windows by half. That doubles the index and the embedding cost and
    fills the top-k with near-duplicate chunks that crowd each other out; an overlap of 10-15% is
    already enough to keep a sentence cut at a window boundary whole in one of the two chunks.
    """
    return round(size * 0.125)


def check_window_settings(size: int, overlap: int | None, *, overlap_name: str = "overlap") -> int:
    """Validate a window size and overlap in tokens; return the overlap with its default applied."""
    if isinstance(size, bool) or not isinstance(size, int):
        raise TypeError(f"size={size!r} is not a whole number; pass the window size in tokens, e.g. 256")
    if size < 1:
        raise ValueError(f"size={size} is too small; a window needs at least 1 token (e.g. 256)")
    if overlap is None:
        return default_overlap(size)
    if isinstance(overlap, bool) or not isinstance(overlap, int):
        raise TypeError(
            f"{overlap_name}={overlap!r} is not a whole number; pass a token count, or None for the "
            f"default of {default_overlap(size)}"
        )
    if not 0 <= overlap < size:
        raise ValueError(
            f"{overlap_name}={overlap} does not fit size={size}; expected 0 <= {overlap_name} < size, "
            f"e.g. {default_overlap(size)}, or None for that default"
        )
    return overlap


PIECE_CHARS = 1 << 15  # tokenised a piece at a time, so a 50 MB text costs 50 MB and not its token objects
PIECES_PER_BATCH = 16  # pieces handed to the tokenizer together, which spreads them over the cores


def token_starts(tokenizer: TokenCounter, text: str) -> Sequence[int]:
    """Where each token of ``text`` starts, in order, as one compact array.

    The text is tokenised in pieces of about ``PIECE_CHARS`` characters, each cut just before a
    space, tab or line break, and the pieces' offsets are shifted and concatenated. For a tokenizer
    that never lets a token span whitespace (BERT's word-piece, the regex stand-in) that gives the
    starts of one tokenisation of the whole text exactly, while the memory held at once is one
    batch's token objects and 8 bytes per token. Tokenising a 4 MB text in one call took twice as
    long as in pieces and held about 200 bytes per token. A run of ``4 * PIECE_CHARS`` characters
    without any whitespace is cut where it stands: such a "word" is no text a person searches for.

    Several tokens can share a start: the BERT normaliser decomposes a Hangul syllable into jamo
    that become separate tokens of the same character.
    """
    starts = array("q")
    pieces = list(_pieces(text))
    for first in range(0, len(pieces), PIECES_PER_BATCH):
        batch = pieces[first : first + PIECES_PER_BATCH]
        found = tokenizer.offsets_batch([text[begin:end] for begin, end in batch])
        for (begin, _), offsets in zip(batch, found, strict=True):
            starts.extend(sorted(map(begin.__add__, map(itemgetter(0), offsets))))
    return starts


def _pieces(text: str) -> Iterator[tuple[int, int]]:
    """``[begin, end)`` ranges covering ``text``, each ending just before whitespace where it can."""
    begin = 0
    while begin < len(text):
        end = begin + PIECE_CHARS
        if end < len(text):
            cut = _whitespace_at_or_after(text, end, begin + 4 * PIECE_CHARS)
            end = cut if cut is not None else begin + 4 * PIECE_CHARS
        end = min(end, len(text))
        yield begin, end
        begin = end


def forced_cuts(text: str) -> list[int]:
    """Where ``token_starts`` cuts ``text`` away from whitespace (inside a run of ``4 * PIECE_CHARS``
    characters without any), so that the starts around the cut may not be the text's own."""
    return [end for _, end in _pieces(text) if end < len(text) and text[end] not in WHITESPACE]


def _whitespace_at_or_after(text: str, position: int, limit: int) -> int | None:
    match = _WHITESPACE.search(text, position, limit)
    return None if match is None else match.start()


# The ASCII whitespace every word-splitting tokenizer splits at. Not ``\s``: it also matches the
# separators U+001C-U+001F, which BERT's normaliser deletes, joining the words around them.
_WHITESPACE = re.compile(f"[{WHITESPACE}]")


def _next_cut(starts: Sequence[int], index: int, hi: int) -> int:
    """The first token index at or after ``index`` that begins a new character (or ``hi``)."""
    while index < hi and starts[index] == starts[index - 1]:
        index += 1
    return index


def window_spans(
    starts: Sequence[int], lo: int, hi: int, start: int, end: int, size: int, overlap: int
) -> list[Span]:
    """Windows of ``size`` tokens over tokens ``lo:hi``, which lie in the characters ``[start, end)``.

    Windows are cut at token starts rather than token ends: a character that produced no token
    (a control character the normaliser dropped) then still falls inside the window before it, so
    the windows cover ``[start, end)`` without a gap. The first window begins at ``start`` and the
    last ends at ``end`` for the same reason. A cut never falls between two tokens of one
    character, since such a cut would separate no text; a character with more than ``size``
    tokens therefore makes one window that is over size.
    """
    if lo >= hi:
        return [Span(start, end, 0)]
    spans: list[Span] = []
    first = lo
    while True:
        last = min(first + size, hi)
        while first < last < hi and starts[last] == starts[last - 1]:
            last -= 1
        if last == first:
            last = _next_cut(starts, first + 1, hi)
        window_start = start if first == lo else starts[first]
        window_end = end if last == hi else starts[last]
        spans.append(Span(window_start, window_end, last - first))
        if last == hi:
            return spans
        # last is a cut here, so this lands in (first, last]: every window makes progress
        first = _next_cut(starts, max(last - overlap, first + 1), hi)


def trim_span(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without leading or trailing whitespace; empty if it holds only whitespace."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def spans_to_chunks(
    doc: Document, spans: Sequence[Span], tokenizer: TokenCounter, starts: Sequence[int]
) -> list[Chunk]:
    """Trim each span, drop the empty ones and number the rest into chunks in document order, each
    with its text's own token count (``Chunk.text_tokens``), read off ``starts`` (``token_starts`` of
    ``doc.text``) but for the words its edges cut (``own_token_counts``)."""
    kept: list[Span] = []
    for span in spans:
        start, end = trim_span(doc.text, span.start, span.end)
        if start == end:
            continue
        if kept and kept[-1].start == start:
            # Two windows that differ only by whitespace the tokenizer kept but str.isspace()
            # trims; the later one reaches at least as far, so it alone covers both.
            kept.pop()
        kept.append(Span(start, end, span.tokens))
    counts = own_token_counts(
        tokenizer, doc.text, starts, [(span.start, span.end) for span in kept], forced_cuts(doc.text)
    )
    return [
        Chunk(
            id=chunk_id(doc.id, position),
            doc_id=doc.id,
            start=span.start,
            end=span.end,
            text=doc.text[span.start : span.end],
            position=position,
            token_count=span.tokens,
            text_tokens=count,
        )
        for position, (span, count) in enumerate(zip(kept, counts, strict=True))
    ]


class FixedTokenChunker:
    """Windows of ``size`` tokens, each overlapping the one before by ``overlap`` tokens, over the
    document's body (``indexable``: furniture left out).

    ``overlap`` defaults to one eighth of ``size`` (see :func:`default_overlap`).
    """

    name = "fixed"

    def __init__(self, tokenizer: TokenCounter, size: int = DEFAULT_SIZE, overlap: int | None = None) -> None:
        self.overlap = check_window_settings(size, overlap)
        self.size = size
        self.tokenizer = tokenizer

    def settings(self) -> Mapping[str, object]:
        return {
            "chunker": self.name,
            "size": self.size,
            "overlap": self.overlap,
            "tokenizer": self.tokenizer.name,
        }

    def chunk(self, doc: Document) -> list[Chunk]:
        doc = indexable(doc)
        starts = token_starts(self.tokenizer, doc.text)
        spans = window_spans(starts, 0, len(starts), 0, len(doc.text), self.size, self.overlap)
        return spans_to_chunks(doc, spans, self.tokenizer, starts)
