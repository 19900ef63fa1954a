"""Three hand-built documents, two chunks each, and a way to make candidates over them."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from clear_rag.retrieve.stages import ChunkRef, ChunkTable
from clear_rag.tokens import TokenCount
from clear_rag.types import Candidate

DOCS = {
    "brakes": "Disc brakes need new pads at 1.5 mm. Check the rotor for wear.",
    "tyres": "Road tyres run at 80 psi. Gravel tyres run lower.",
    "chains": "Replace a chain at 0.5% stretch. A worn chain wears the cassette.",
}
# Each document cut after its first sentence: chunk 0 is the first sentence with its space.
_CUTS = {doc_id: text.index(". ") + 2 for doc_id, text in DOCS.items()}
TABLE: dict[str, ChunkRef] = {}
for _doc_id, _cut in _CUTS.items():
    TABLE[f"{_doc_id}#0000"] = ChunkRef(_doc_id, 0, _cut)
    TABLE[f"{_doc_id}#0001"] = ChunkRef(_doc_id, _cut, len(DOCS[_doc_id]))


def chunk_text(chunk_id: str) -> str:
    ref = TABLE[chunk_id]
    return DOCS[ref.doc_id][ref.start : ref.end]


def make_candidate(chunk_id: str, score: float) -> Candidate:
    ref = TABLE[chunk_id]
    return Candidate(chunk_id=chunk_id, doc_id=ref.doc_id, start=ref.start, end=ref.end, score=score)


@pytest.fixture
def table() -> ChunkTable:
    return TABLE


@pytest.fixture
def cand() -> Callable[[str, float], Candidate]:
    return make_candidate


class Recording:
    """A tokenizer that records every text it is asked to count; named as the one it wraps unless
    told otherwise (a store's counts stand for a tokenizer of that name)."""

    def __init__(self, inner: TokenCount, name: str | None = None) -> None:
        self.inner = inner
        self.name = inner.name if name is None else name
        self.counted: list[str] = []

    def count(self, text: str) -> int:
        self.counted.append(text)
        return self.inner.count(text)
