"""Assembly on three small documents counted with RegexTokenizer (one token per word)."""

from __future__ import annotations

import pytest

from clear_rag.errors import StoreError
from clear_rag.retrieve.assemble import DUPLICATE, OVER_BUDGET, Assembled, Passage, assemble
from clear_rag.tokens import RegexTokenizer
from clear_rag.types import Candidate

DOCS = {
    "d1": "one two three four five six",
    "d2": "red green blue",
    "d3": "a much longer document with many many words here",
}
SPANS = {
    "d1#0": ("d1", 0, 7),  # "one two"
    "d1#1": ("d1", 7, 18),  # " three four": adjacent to d1#0
    "d1#2": ("d1", 14, 27),  # "four five six": overlaps d1#1 on "four"
    "d2#0": ("d2", 0, 9),  # "red green"
    "d2#1": ("d2", 10, 14),  # "blue": one space after d2#0, so not adjacent
    "d3#0": ("d3", 0, 48),  # nine words
}
TOK = RegexTokenizer()


def count(text: str) -> int:
    return TOK.count(text)


def cands(*chunk_ids: str) -> list[Candidate]:
    """Candidates in the given rank order, with falling scores."""
    return [
        Candidate(chunk_id, *SPANS[chunk_id], score=float(len(chunk_ids) - i))
        for i, chunk_id in enumerate(chunk_ids)
    ]


def pack(*chunk_ids: str, budget: int = 100) -> Assembled:
    return assemble(cands(*chunk_ids), doc_text=DOCS, budget_tokens=budget, tokenizer=TOK)


def spans(result: Assembled) -> list[tuple[str, int, int, tuple[str, ...]]]:
    return [(p.doc_id, p.start, p.end, p.chunk_ids) for p in result.passages]


def test_adjacent_chunks_of_one_document_merge_into_one_passage() -> None:
    result = pack("d1#1", "d1#0")
    assert result.passages == (
        Passage("d1", 0, 18, ("d1#0", "d1#1"), "one two three four", rank=1, token_count=4),
    )
    assert result.token_count == count("one two") + count(" three four")


def test_overlapping_chunks_merge_and_the_overlap_is_counted_once() -> None:
    result = pack("d1#1", "d1#2")
    assert spans(result) == [("d1", 7, 27, ("d1#1", "d1#2"))]
    assert result.passages[0].text == " three four five six"
    assert result.token_count == count(" three four") + count("four five six") - count("four")


def test_chunks_with_a_gap_between_them_stay_separate_passages() -> None:
    assert spans(pack("d2#1", "d2#0")) == [("d2", 10, 14, ("d2#1",)), ("d2", 0, 9, ("d2#0",))]


def test_passages_are_ordered_by_their_best_rank() -> None:
    result = pack("d2#0", "d1#1", "d3#0", "d1#0")
    assert [(p.chunk_ids, p.rank) for p in result.passages] == [
        (("d2#0",), 1),
        (("d1#0", "d1#1"), 2),
        (("d3#0",), 3),
    ]


def test_a_chunk_that_exactly_fills_the_budget_fits() -> None:
    result = pack("d2#0", "d2#1", budget=count("red green") + count("blue"))
    assert result.token_count == 3
    assert result.dropped == ()


def test_a_chunk_one_token_over_is_dropped_and_smaller_later_ones_still_fit() -> None:
    result = pack("d2#0", "d3#0", "d2#1", budget=count("red green") + count("blue"))
    assert result.dropped == (("d3#0", OVER_BUDGET),)
    assert spans(result) == [("d2", 0, 9, ("d2#0",)), ("d2", 10, 14, ("d2#1",))]

    tighter = pack("d2#0", "d3#0", "d2#1", budget=count("red green"))
    assert tighter.dropped == (("d3#0", OVER_BUDGET), ("d2#1", OVER_BUDGET))
    assert tighter.token_count == 2


def test_a_chunk_overlapping_packed_text_pays_only_for_its_new_tokens() -> None:
    # d1#2 alone is 3 tokens, but "four" is already packed by d1#1: it adds "five six" only.
    result = pack("d1#1", "d3#0", "d1#2", budget=count(" three four") + count(" five six"))
    assert result.dropped == (("d3#0", OVER_BUDGET),)
    assert spans(result) == [("d1", 7, 27, ("d1#1", "d1#2"))]
    assert result.token_count == result.budget_tokens == 4


def test_a_repeated_chunk_is_dropped_as_a_duplicate() -> None:
    result = pack("d2#0", "d2#0")
    assert result.dropped == (("d2#0", DUPLICATE),)
    assert result.token_count == 2


def test_zero_budget_drops_everything_and_empty_input_packs_nothing() -> None:
    assert pack("d2#1", budget=0) == Assembled((), 0, 0, (("d2#1", OVER_BUDGET),))
    assert pack(budget=50) == Assembled(passages=(), token_count=0, budget_tokens=50, dropped=())


def test_document_text_may_come_from_a_function() -> None:
    calls: list[str] = []

    def doc_text(doc_id: str) -> str:
        calls.append(doc_id)
        return DOCS[doc_id]

    result = assemble(cands("d1#0", "d1#1"), doc_text=doc_text, budget_tokens=10, tokenizer=TOK)
    assert result == pack("d1#0", "d1#1", budget=10)
    assert calls == ["d1"]  # each document's text is fetched once


@pytest.mark.parametrize("budget", [-1, True, 2.5])
def test_budget_must_be_a_non_negative_integer(budget: int) -> None:
    with pytest.raises(ValueError, match=r"budget_tokens="):
        pack("d1#0", budget=budget)


def test_a_span_past_the_document_end_is_a_store_error() -> None:
    stale = Candidate("d2#9", "d2", 10, 99, 1.0)
    with pytest.raises(StoreError, match=r"'d2#9' spans \[10, 99\).*14 characters"):
        assemble([stale], doc_text=DOCS, budget_tokens=10, tokenizer=TOK)
