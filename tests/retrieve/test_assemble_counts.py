"""Packing on stored per-chunk counts against packing that tokenises every passage (issue 32).

The context stage reads each chunk's own token count, stored at ingest, instead of tokenising it on
every question. That is only allowed if nothing else changes: on random documents, random chunk
spans (overlapping, adjacent, cut inside words), random rankings with repeats and random budgets,
the packed context must be the very same one (passages, their order, their counts, every chunk
dropped and why), and the tokenizer is then asked only about passages that merge chunks.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clear_rag.retrieve.assemble import assemble
from clear_rag.tokens import RegexTokenizer, TokenCounter, default_tokenizer
from clear_rag.types import Candidate
from tests.retrieve.conftest import Recording

WORDS = [
    "tyrosine-based", "inhibition", "motif", "immunohistochemistry", "the", "of", "cells", "déjà",
    "naïve", "straße", "日本語", "한국어", "😀", "1.5", "100%", "(ITIM)", ",", ".", "e\u0301",
]  # fmt: skip
SEPARATORS = [" ", " ", " ", "\n", "\n\n", "\t", ""]

TOKENIZERS = pytest.mark.parametrize(
    "tokenizer", [RegexTokenizer(), default_tokenizer()], ids=["regex", "minilm"]
)
PROPERTY = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def texts(draw: st.DrawFn) -> str:
    parts = draw(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(SEPARATORS)), max_size=30))
    return "".join(word + sep for word, sep in parts) or "x"


@st.composite
def rankings(draw: st.DrawFn) -> tuple[dict[str, str], list[Candidate]]:
    """Up to four documents, up to twelve chunks over them with any spans, and a ranking of those
    chunks (a chunk may come back) as a fusion stage would hand it on."""
    docs = {f"d{i}": draw(texts()) for i in range(draw(st.integers(1, 4)))}
    chunks: dict[str, tuple[str, int, int]] = {}
    for n in range(draw(st.integers(1, 12))):
        doc_id = draw(st.sampled_from(sorted(docs)))
        length = len(docs[doc_id])
        start = draw(st.integers(0, length - 1))
        end = draw(st.integers(start + 1, length))
        chunks[f"{doc_id}#{n:04d}"] = (doc_id, start, end)
    order = draw(st.lists(st.sampled_from(sorted(chunks)), min_size=1, max_size=16))
    ranked = [
        Candidate(chunk_id, *chunks[chunk_id], score=float(len(order) - i))
        for i, chunk_id in enumerate(order)
    ]
    return docs, ranked


@TOKENIZERS
@PROPERTY
@given(ranking=rankings(), budget=st.integers(0, 400))
def test_stored_counts_pack_the_very_same_context(
    tokenizer: TokenCounter, ranking: tuple[dict[str, str], list[Candidate]], budget: int
) -> None:
    docs, ranked = ranking
    spans = {c.chunk_id: (c.doc_id, c.start, c.end) for c in ranked}
    # what ingest stores: each chunk's text counted on its own, once
    stored = {cid: tokenizer.count(docs[doc][start:end]) for cid, (doc, start, end) in spans.items()}
    recording = Recording(tokenizer)

    counted_each_time = assemble(ranked, doc_text=docs, budget_tokens=budget, tokenizer=tokenizer)
    on_stored = assemble(
        ranked, doc_text=docs, budget_tokens=budget, tokenizer=recording, chunk_tokens=stored.__getitem__
    )

    assert on_stored == counted_each_time
    # A chunk joining a document already packed can make one merged passage to count; a chunk
    # alone in its passage is never tokenised (every one of them was, per question, before).
    seen_ids: set[str] = set()
    seen_docs: set[str] = set()
    joining = 0
    for cand in ranked:
        if cand.chunk_id not in seen_ids:
            joining += cand.doc_id in seen_docs
            seen_ids.add(cand.chunk_id)
            seen_docs.add(cand.doc_id)
    assert len(recording.counted) <= joining


@PROPERTY
@given(ranking=rankings(), budget=st.integers(0, 400))
def test_far_apart_chunks_are_never_tokenised(
    ranking: tuple[dict[str, str], list[Candidate]], budget: int
) -> None:
    """A ranking with at most one chunk per document merges nothing: no text is tokenised at all."""
    docs, ranked = ranking
    first: dict[str, Candidate] = {}
    for cand in ranked:
        first.setdefault(cand.doc_id, cand)
    one_each = [c for c in ranked if first[c.doc_id].chunk_id == c.chunk_id]
    recording = Recording(RegexTokenizer())
    counts = {c.chunk_id: RegexTokenizer().count(docs[c.doc_id][c.start : c.end]) for c in one_each}

    assemble(
        one_each, doc_text=docs, budget_tokens=budget, tokenizer=recording, chunk_tokens=counts.__getitem__
    )

    assert recording.counted == []
