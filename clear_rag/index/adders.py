"""Adding one batch of chunks to an index, leaving out the documents that cannot go in.

An adder takes the index and a batch of chunks (whole documents or parts of them, in store order),
adds what it can and returns ``{document id: reason}`` for each document it left out, none of whose
chunks in the batch it added. The sync (``clear_rag.index.sync``) removes what such a document added
in earlier batches and records the reason in the manifest. The predecessor let ``VectorIndex.add``
raise on the first zero vector, which failed the whole sync and so every later ingest of the store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from clear_rag.errors import ModelError
from clear_rag.index.bm25 import BM25Index
from clear_rag.index.context import Unit
from clear_rag.index.vectors import VectorIndex
from clear_rag.providers.base import Embedder

I_contra = TypeVar("I_contra", contravariant=True)

# Embedded when the embedder fails on a document before any document went in: if it fails on this
# too, the embedder is down (a server not running), not the document bad, and the error is raised.
PROBE = "clear-rag checks that the embedder answers"


class Adder(Protocol[I_contra]):
    def __call__(self, index: I_contra, chunks: Sequence[Unit]) -> dict[str, str]: ...


class KeywordAdder:
    """Tokenises and adds every chunk. Tokenising a text cannot fail for one document, so this adder
    never leaves one out; it exists so that both indexes are filled by the same streaming sync."""

    def __call__(self, index: BM25Index, chunks: Sequence[Unit]) -> dict[str, str]:
        index.add([c.id for c in chunks], [c.text for c in chunks])
        return {}


class VectorAdder:
    """Embeds a batch, ``batch`` texts per call, and adds each document whose vectors all have a
    direction. A document is left out when one of its vectors is zero (a punctuation-only text under
    the hash embedder) or has NaN or infinite values (a server's fault), or when the embedder raises
    ``ModelError`` on its texts: a batch that fails is retried one document at a time, so only the
    document at fault is left out. If the embedder also fails on ``PROBE`` before anything went in,
    the error is the embedder's and is raised, rather than every document marked as left out.
    """

    def __init__(self, embedder: Embedder, batch: int) -> None:
        if isinstance(batch, bool) or not isinstance(batch, int) or batch < 1:
            raise ValueError(f"batch={batch!r} is invalid; embed a positive number of texts per call (64)")
        self.embedder, self.batch = embedder, batch
        self.answers = False  # the embedder embedded something during this sync

    def __call__(self, index: VectorIndex, chunks: Sequence[Unit]) -> dict[str, str]:
        groups = _by_document(chunks)
        results: list[npt.NDArray[np.float32] | ModelError]
        try:
            rows = self._embed([c.text for c in chunks])
            bounds = np.cumsum([len(group) for _, group in groups])[:-1]
            results = list(np.split(rows, bounds))
        except ModelError as err:
            results = [err] if len(groups) == 1 else [self._embed_alone(group) for _, group in groups]
        left_out: dict[str, str] = {}
        for (doc, group), result in zip(groups, results, strict=True):
            if isinstance(result, ModelError):
                left_out[doc] = self._blame(result)
            elif (reason := bad_rows(group, result)) is not None:
                left_out[doc] = reason
            else:
                index.add([c.id for c in group], result)
        return left_out

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float32]:
        parts = [
            np.asarray(self.embedder.embed(texts[i : i + self.batch], kind="document"), dtype=np.float32)
            for i in range(0, len(texts), self.batch)
        ]
        self.answers = True
        return np.concatenate(parts) if parts else np.zeros((0, self.embedder.dim), dtype=np.float32)

    def _embed_alone(self, group: list[Unit]) -> npt.NDArray[np.float32] | ModelError:
        try:
            return self._embed([c.text for c in group])
        except ModelError as err:
            return err

    def _blame(self, err: ModelError) -> str:
        """The reason a document is left out for ``err``; raises ``err`` when the embedder fails on
        anything, so that an unreachable server fails the sync instead of emptying the index."""
        if not self.answers:
            try:
                self._embed([PROBE])
            except ModelError:
                raise err from None
        return f"the embedder failed on it ({err.what})"


def bad_rows(group: Sequence[Unit], rows: npt.NDArray[np.float32]) -> str | None:
    """Why the vectors of one document cannot go into a cosine index, or ``None`` if they can."""
    finite = np.isfinite(rows).all(axis=1)
    nonzero = (rows != 0).any(axis=1)
    flaws = (
        (finite, "has NaN or infinite values", "have NaN or infinite values"),
        (nonzero, "is a zero vector", "are zero vectors"),
    )
    for ok, one, several in flaws:
        if ok.all():
            continue
        if len(group) == 1:
            return f"its embedding {one}"
        if not ok.any():
            return f"all {len(group)} of its embeddings {several}"
        return f"the embedding of {group[int(np.flatnonzero(~ok)[0])].id} {one}"
    return None


def _by_document(chunks: Sequence[Unit]) -> list[tuple[str, list[Unit]]]:
    """``chunks`` grouped by document, keeping their order (a document's chunks are adjacent)."""
    groups: list[tuple[str, list[Unit]]] = []
    for chunk in chunks:
        if groups and groups[-1][0] == chunk.doc_id:
            groups[-1][1].append(chunk)
        else:
            groups.append((chunk.doc_id, [chunk]))
    return groups
