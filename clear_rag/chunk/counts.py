"""Each chunk's own token count (``Chunk.text_tokens``) from the document's one tokenisation.

``text_tokens`` is ``tokenizer.count(chunk.text)``: the chunk's text read alone. The predecessor
counted it that way, tokenising every chunk a second time, about as much text again as the
document itself (more with overlapping windows), which made ingest about one and a half times as
slow (issue 32; the figures are in the commit that replaced it). The document's token starts, which
the chunker has already, give the same count for everything but a word a chunk's edge cuts through.

The reason is the property ``token_starts`` already rests on: the tokenizer never lets a token
span ASCII whitespace, so cutting a text next to a space, tab or line break does not change its
tokens. A chunk ``[start, end)`` splits into three parts at such cuts: the tail of a word cut at
``start`` (up to the first whitespace), the middle (whole words), and the head of a word cut at
``end`` (from just after the last whitespace). The middle's tokens are the document's tokens that
start inside it; only the two edge pieces are tokenised, and they are empty unless a window was
cut inside a word. The edge pieces of a document go to the tokenizer in one batch.

Where ``token_starts`` had to cut a run without whitespace where it stood (``forced_cuts``), the
document's starts inside that run are not the text's own, and a chunk reaching into it is
tokenised whole, as before.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from clear_rag.tokens import TokenCounter

# The ASCII whitespace a word-splitting tokenizer splits at, which token_starts cuts next to (why not
# ``\s``: clear_rag.chunk.fixed._WHITESPACE).
WHITESPACE = " \t\n\r"


def own_token_counts(
    tokenizer: TokenCounter,
    text: str,
    starts: Sequence[int],
    spans: Sequence[tuple[int, int]],
    forced: Sequence[int] = (),
) -> list[int]:
    """``tokenizer.count(text[start:end])`` for each span, from ``starts`` (``token_starts`` of
    ``text``) and one batch of edge pieces. ``forced`` lists where ``token_starts`` cut ``text``
    away from whitespace; a span that holds such a cut is counted whole."""
    pieces: list[str] = []
    counts: list[int] = []
    owners: list[int] = []  # for each piece, the span whose count it adds to
    for n, (start, end) in enumerate(spans):
        if any(start <= cut <= end for cut in forced):
            counts.append(0)
            pieces.append(text[start:end])
            owners.append(n)
            continue
        lead, trail = _edges(text, start, end)
        counts.append(bisect_left(starts, trail) - bisect_left(starts, lead) if lead < trail else 0)
        for begin, stop in ((start, lead), (max(lead, trail), end)):
            if begin < stop:
                pieces.append(text[begin:stop])
                owners.append(n)
    if pieces:
        for owner, count in zip(owners, tokenizer.count_batch(pieces), strict=True):
            counts[owner] += count
    return counts


def _edges(text: str, start: int, end: int) -> tuple[int, int]:
    """``[lead, trail)``: the whole words of ``text[start:end]``, cut next to whitespace.

    ``lead`` is ``start`` where a word begins there, else the first whitespace after it (or
    ``end``); ``trail`` is ``end`` where a word ends there, else just after the last whitespace
    at or after ``lead`` (or ``lead``). ``text[start:lead]`` and ``text[trail:end]`` are the pieces
    of words cut by the span, read on their own.
    """
    lead = start
    if start > 0 and text[start - 1] not in WHITESPACE:
        lead = min((at for at in (text.find(c, start, end) for c in WHITESPACE) if at >= 0), default=end)
    trail = end
    if end < len(text) and text[end] not in WHITESPACE:
        last = max(text.rfind(c, lead, end) for c in WHITESPACE)
        trail = last + 1 if last >= 0 else lead
    return lead, trail
