"""Packing ranked chunks into the context a chat model will read, within a token budget.

Chunks are taken in rank order and never split: a chunk that does not fit whole is dropped with
reason ``"over budget"``, and packing goes on, because a later, smaller chunk (or one overlapping
text already packed, which costs only its new tokens) may still fit. That is greedy first fit: it
never displaces a better-ranked chunk for a worse one, and it does not leave budget unused while a
fitting chunk waits further down.

Chunks of one document whose spans touch or overlap become one passage over the union of their
spans, so overlapping windows are not shown (or paid for) twice. Tokens are counted on the
passages' texts as they will be sent; the prompt's own template is the caller's to leave room for.

A passage of one chunk costs that chunk's own token count, which ingest stored beside it
(``Chunk.text_tokens``); only a passage that merges chunks is tokenised here, because the tokens
of two texts joined need not add up to theirs apart. The predecessor tokenised every candidate on
every question, which made the context the slowest stage of a SciFact question, slower than
keyword search, vector search and fusion together (issue 32).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from clear_rag.errors import StoreError
from clear_rag.tokens import TokenCount
from clear_rag.types import Candidate

OVER_BUDGET = "over budget"
DUPLICATE = "duplicate"


@dataclass(frozen=True, slots=True)
class Passage:
    """One contiguous stretch of a document in the context.

    ``chunk_ids`` are the packed chunks it covers, in document order; ``rank`` is the best
    (smallest, 1-based) rank among them, which decides the passage's place in the prompt.
    """

    doc_id: str
    start: int
    end: int
    chunk_ids: tuple[str, ...]
    text: str
    rank: int
    token_count: int


@dataclass(frozen=True, slots=True)
class Assembled:
    """The packed context: passages in prompt order, their total tokens, and what was left out."""

    passages: tuple[Passage, ...]
    token_count: int
    budget_tokens: int
    dropped: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _Member:
    start: int
    end: int
    chunk_id: str
    rank: int


def group_spans(members: Sequence[_Member]) -> list[list[_Member]]:
    """Members grouped so that each group's spans form one unbroken union.

    Sorted by start, a span joins the current group when ``start <= group end``: overlapping spans
    and adjacent ones (``[a, b)`` then ``[b, c)``) merge, a gap of even one character does not.
    """
    groups: list[list[_Member]] = []
    group_end = -1
    for m in sorted(members, key=lambda m: (m.start, m.end, m.chunk_id)):
        if groups and m.start <= group_end:
            groups[-1].append(m)
            group_end = max(group_end, m.end)
        else:
            groups.append([m])
            group_end = m.end
    return groups


def _span(group: Sequence[_Member]) -> tuple[int, int]:
    return min(m.start for m in group), max(m.end for m in group)


def assemble(
    candidates: Sequence[Candidate],
    *,
    doc_text: Callable[[str], str] | Mapping[str, str],
    budget_tokens: int,
    tokenizer: TokenCount,
    chunk_tokens: Callable[[str], int] | None = None,
) -> Assembled:
    """Pack ``candidates`` (in rank order) into at most ``budget_tokens`` tokens of passages.

    ``doc_text`` gives a document's canonical text by id; a chunk's text is the slice of it over
    the chunk's span, so merged passages are exact slices too. A chunk id seen before in the list
    is dropped with reason ``"duplicate"``. ``chunk_tokens`` gives a chunk's own token count, by
    chunk id, in ``tokenizer``'s tokens (``tokenizer.count`` of the text over the span its
    candidate carries): a passage whose span is one chunk's is then not tokenised again. Without
    it, every passage is counted on its text; the packing is the same either way.
    """
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
        raise ValueError(f"budget_tokens={budget_tokens!r} is invalid; use a token count >= 0")
    text_of = doc_text.__getitem__ if isinstance(doc_text, Mapping) else doc_text
    texts: dict[str, str] = {}
    counts: dict[tuple[str, int, int], int] = {}

    def tokens_of(doc_id: str, members: Sequence[_Member]) -> int:
        total = 0
        for group in group_spans(members):
            start, end = _span(group)
            if (doc_id, start, end) not in counts:
                one = next((m for m in group if (m.start, m.end) == (start, end)), None)
                counts[doc_id, start, end] = (
                    chunk_tokens(one.chunk_id)
                    if one is not None and chunk_tokens is not None
                    else tokenizer.count(texts[doc_id][start:end])
                )
            total += counts[doc_id, start, end]
        return total

    packed: dict[str, list[_Member]] = {}
    doc_tokens: dict[str, int] = {}
    total = 0
    seen: set[str] = set()
    dropped: list[tuple[str, str]] = []
    for rank, cand in enumerate(candidates, start=1):
        if cand.chunk_id in seen:
            dropped.append((cand.chunk_id, DUPLICATE))
            continue
        seen.add(cand.chunk_id)
        if cand.doc_id not in texts:
            texts[cand.doc_id] = text_of(cand.doc_id)
        if cand.end > len(texts[cand.doc_id]):
            raise StoreError(
                f"chunk {cand.chunk_id!r} spans [{cand.start}, {cand.end}) but document {cand.doc_id!r} "
                f"has {len(texts[cand.doc_id])} characters",
                fix="Re-run ingest so chunks and document texts come from the same parse",
            )
        members = [*packed.get(cand.doc_id, []), _Member(cand.start, cand.end, cand.chunk_id, rank)]
        tokens = tokens_of(cand.doc_id, members)
        new_total = total - doc_tokens.get(cand.doc_id, 0) + tokens
        if new_total > budget_tokens:
            dropped.append((cand.chunk_id, OVER_BUDGET))
            continue
        packed[cand.doc_id] = members
        doc_tokens[cand.doc_id] = tokens
        total = new_total

    passages = []
    for doc_id, members in packed.items():
        for group in group_spans(members):
            start, end = _span(group)
            passages.append(
                Passage(
                    doc_id=doc_id,
                    start=start,
                    end=end,
                    chunk_ids=tuple(m.chunk_id for m in group),
                    text=texts[doc_id][start:end],
                    rank=min(m.rank for m in group),
                    token_count=counts[doc_id, start, end],
                )
            )
    passages.sort(key=lambda p: p.rank)
    return Assembled(
        passages=tuple(passages), token_count=total, budget_tokens=budget_tokens, dropped=tuple(dropped)
    )
