"""Skewed corpora for the BM25 property tests, shared by the one-query and the pruning tests: a few
words in most texts and many in few (weights 1 / rank, as in prose), so that pruning has lists to
skip, and repeated texts for exact ties, ranked by id."""

from __future__ import annotations

from hypothesis import strategies as st

from clear_rag.index.bm25 import BM25Index

WORDS = [f"w{rank}" for rank in range(40)]
ZIPF = [1 / (rank + 1) for rank in range(len(WORDS))]

texts = st.lists(st.sampled_from(WORDS[:12] * 4 + WORDS[12:]), max_size=25).map(" ".join)


def indexed(corpus: list[str], copies: int, idf: str) -> BM25Index:
    """``corpus`` with ``copies * 3`` of its texts again (equal scores), under ids not in row order."""
    corpus = corpus + corpus[: copies * 3]
    index = BM25Index(idf=idf)  # type: ignore[arg-type]
    index.add([f"d{(n * 7919) % 1000:03}-{n}" for n in range(len(corpus))], corpus)
    return index
