"""A batch goes into an index document by document: a document that cannot go in is left out alone."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from clear_rag.errors import ModelError
from clear_rag.index.adders import PROBE, KeywordAdder, VectorAdder, bad_rows
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.vectors import VectorIndex
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import HashEmbedder
from clear_rag.types import Chunk


def chunk(doc: str, position: int, text: str) -> Chunk:
    return Chunk(f"{doc}#{position:04d}", doc, 0, len(text), text, position, 1)


class PickyEmbedder(HashEmbedder):
    """The hash embedder, failing (as a server answering 500 would) on any text holding ``refuse``,
    or on every text once ``down``; records each call's texts."""

    def __init__(self, refuse: str = "POISON", *, down: bool = False) -> None:
        super().__init__(dim=16)
        self.refuse, self.down = refuse, down
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        if self.down or any(self.refuse in text for text in texts):
            raise ModelError("the server answered 500", fix="Check the server's log")
        return super().embed(texts, kind)


BATCH = [
    chunk("a", 0, "brakes wear"),
    chunk("a", 1, "pads and discs"),
    chunk("b", 0, "POISON pill"),
    chunk("c", 0, "chains stretch"),
]


def test_a_document_the_embedder_fails_on_is_left_out_alone() -> None:
    embedder, index = PickyEmbedder(), VectorIndex(16)
    left_out = VectorAdder(embedder, batch=8)(index, BATCH)
    assert left_out == {"b": "the embedder failed on it (the server answered 500)"}
    assert index.ids == ("a#0000", "a#0001", "c#0000")
    # one call for the batch, then one per document to find the one at fault
    assert [len(texts) for texts in embedder.calls] == [4, 2, 1, 1]


def test_an_embedder_that_fails_on_everything_fails_the_sync() -> None:
    """An unreachable server must not mark every document as left out: its error is the error."""
    embedder = PickyEmbedder(down=True)
    with pytest.raises(ModelError, match="500"):
        VectorAdder(embedder, batch=8)(VectorIndex(16), BATCH[:2])
    assert embedder.calls[-1] == [PROBE]


def test_a_document_alone_in_its_batch_is_blamed_once_the_probe_answers() -> None:
    embedder, index = PickyEmbedder(), VectorIndex(16)
    assert VectorAdder(embedder, batch=8)(index, [BATCH[2]]) == {
        "b": "the embedder failed on it (the server answered 500)"
    }
    assert embedder.calls == [["POISON pill"], [PROBE]]
    assert len(index) == 0


def test_zero_vectors_leave_their_document_out() -> None:
    index = VectorIndex(16)
    batch = [chunk("a", 0, "words here"), chunk("p", 0, "!!! ..."), chunk("q", 0, "--"), chunk("q", 1, "??")]
    assert VectorAdder(HashEmbedder(dim=16), batch=2)(index, batch) == {
        "p": "its embedding is a zero vector",
        "q": "all 2 of its embeddings are zero vectors",
    }
    assert index.ids == ("a#0000",)


def test_bad_rows_names_the_first_bad_chunk() -> None:
    group = [chunk("d", i, "t") for i in range(3)]
    assert bad_rows(group, np.ones((3, 2), dtype=np.float32)) is None
    some_zero = np.array([[1, 0], [0, 0], [0, 0]], dtype=np.float32)
    assert bad_rows(group, some_zero) == "the embedding of d#0001 is a zero vector"
    nan = np.array([[1, 0], [1, np.nan], [0, 0]], dtype=np.float32)
    assert bad_rows(group, nan) == "the embedding of d#0001 has NaN or infinite values"
    assert bad_rows(group[:1], np.array([[np.inf, 0]], dtype=np.float32)) == (
        "its embedding has NaN or infinite values"
    )
    all_nan = np.full((3, 2), np.nan, dtype=np.float32)
    assert bad_rows(group, all_nan) == "all 3 of its embeddings have NaN or infinite values"


def test_texts_are_embedded_at_most_batch_at_a_time() -> None:
    embedder = PickyEmbedder(refuse="never")
    VectorAdder(embedder, batch=3)(VectorIndex(16), [chunk("a", i, f"word{i}") for i in range(7)])
    assert [len(texts) for texts in embedder.calls] == [3, 3, 1]


def test_the_keyword_adder_adds_everything() -> None:
    index = BM25Index()
    assert KeywordAdder()(index, BATCH) == {}
    assert index.ids == tuple(c.id for c in BATCH)


def test_a_batch_size_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="batch=0"):
        VectorAdder(HashEmbedder(dim=4), batch=0)
