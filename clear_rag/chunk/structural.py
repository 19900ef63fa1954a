"""Chunks cut along the parsed blocks: whole paragraphs, lists and tables, packed up to a token size."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from clear_rag.chunk.base import indexable
from clear_rag.chunk.fixed import (
    DEFAULT_SIZE,
    Span,
    check_window_settings,
    spans_to_chunks,
    token_starts,
    trim_span,
    window_spans,
)
from clear_rag.tokens import TokenCounter
from clear_rag.types import Block, Chunk, Document


@dataclass(frozen=True, slots=True)
class _Segment:
    """One block's share of the text, ``[start, end)``, holding tokens ``lo:hi``."""

    kind: str
    start: int
    end: int
    lo: int
    hi: int


def _segments(text: str, blocks: Sequence[Block], starts: Sequence[int]) -> list[_Segment]:
    """Cut the text at block starts, so that every character falls in exactly one segment.

    Segments run from one block's start to the next block's start rather than over the blocks
    themselves: text a parser left outside every block (separators, stray lines) is then still
    chunked instead of silently dropped from the index. Text before the first block gets its own
    segment so that it is not mistaken for part of a heading.
    """
    ordered = sorted(blocks, key=lambda block: (block.start, block.end))
    cuts: list[tuple[int, str]] = [(0, "paragraph")] if ordered[0].start > 0 else []
    cuts += [(block.start, block.kind) for block in ordered]
    ends = [start for start, _ in cuts[1:]] + [len(text)]
    segments: list[_Segment] = []
    for (start, kind), end in zip(cuts, ends, strict=True):
        trimmed_start, trimmed_end = trim_span(text, start, end)
        if trimmed_start == trimmed_end:
            continue
        lo, hi = bisect_left(starts, start), bisect_left(starts, end)
        segments.append(_Segment(kind, start, end, lo, hi))
    return segments


def _without_trailing_headings(group: Sequence[_Segment]) -> list[_Segment]:
    keep = len(group)
    while keep > 0 and group[keep - 1].kind == "heading":
        keep -= 1
    return list(group[:keep])


class StructuralChunker:
    """Packs consecutive blocks into chunks of at most ``size`` tokens.

    A block bigger than ``size`` is cut into windows of ``size`` tokens overlapping by
    ``overlap_for_splits`` (default one eighth of ``size``). A heading is never the last block of a
    chunk that holds anything else: it moves to the next chunk, to stay with the text it heads.
    A document without blocks is cut into the same windows as a whole. Furniture blocks (running
    headers, page numbers) and the text after the first of them are never chunked (``indexable``).
    """

    name = "structural"
    bounded_by_headings = False  # the semantic chunker's one difference (``SemanticChunker``)

    def __init__(
        self, tokenizer: TokenCounter, size: int = DEFAULT_SIZE, overlap_for_splits: int | None = None
    ) -> None:
        self.overlap_for_splits = check_window_settings(
            size, overlap_for_splits, overlap_name="overlap_for_splits"
        )
        self.size = size
        self.tokenizer = tokenizer

    def settings(self) -> Mapping[str, object]:
        return {
            "chunker": self.name,
            "size": self.size,
            "overlap": self.overlap_for_splits,
            "tokenizer": self.tokenizer.name,
        }

    def chunk(self, doc: Document) -> list[Chunk]:
        doc = indexable(doc)  # furniture blocks and what follows them are never chunked
        # One tokenisation of the whole document; a segment's size is the token starts inside it.
        starts = token_starts(self.tokenizer, doc.text)
        if not doc.blocks:
            spans = self._windows(starts, 0, len(starts), 0, len(doc.text))
        else:
            spans = self._pack(_segments(doc.text, doc.blocks, starts), starts)
        return spans_to_chunks(doc, spans, self.tokenizer, starts)

    def _windows(self, starts: Sequence[int], lo: int, hi: int, start: int, end: int) -> list[Span]:
        return window_spans(starts, lo, hi, start, end, self.size, self.overlap_for_splits)

    def _pack(self, segments: Sequence[_Segment], starts: Sequence[int]) -> list[Span]:
        spans: list[Span] = []
        group: list[_Segment] = []
        for segment in segments:
            # A heading closes the chunk before it when chunks are bounded by headings, so that no
            # chunk holds the end of one section and the start of the next.
            closes = self.bounded_by_headings and segment.kind == "heading"
            if closes and any(s.kind != "heading" for s in group):
                spans.append(_group_span(group))
                group = []
            # Counting from the group's first token, not summing segments, keeps whitespace-only
            # segments skipped in between counted too, so a chunk never holds more than size tokens.
            if group and segment.hi - group[0].lo <= self.size:
                group = [*group, segment]
                continue
            body = _without_trailing_headings(group)
            if body:
                spans.append(_group_span(body))
            group = [*group[len(body) :], segment]
            if group[-1].hi - group[0].lo > self.size:
                # An oversize block, or a block too big for the headings carried to it. Windowing
                # them together keeps each heading in the first window of the text it heads.
                spans += self._windows(starts, group[0].lo, group[-1].hi, group[0].start, group[-1].end)
                group = []
        if group:
            # A heading at the very end heads nothing; it stays with what precedes it rather than
            # becoming a chunk of its own.
            spans.append(_group_span(group))
        return spans


def _group_span(group: Sequence[_Segment]) -> Span:
    return Span(group[0].start, group[-1].end, group[-1].hi - group[0].lo)


class SemanticChunker(StructuralChunker):
    """Heading-bounded packing: the structural chunker's blocks packed up to ``size`` tokens, but
    never across a heading, so each chunk is one section (or a window of one too big to fit): the
    "semantic" chunking of the seed, bounded by the document's own structure rather than by
    embedding similarity between sentences. Tables stay whole up to the size, as in structural."""

    name = "semantic"
    bounded_by_headings = True
