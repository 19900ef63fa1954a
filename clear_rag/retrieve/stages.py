"""What every retrieval stage shares, and the first-stage retrievers that start a ranking.

A first-stage retriever takes the query and returns ``list[Candidate]``; every later stage takes
``(query, candidates)`` and returns a new ``list[Candidate]``. Both return their list in
``rank_order``, so two runs over the same input give the same list.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from clear_rag.errors import StoreError
from clear_rag.providers.base import Embedder
from clear_rag.types import Candidate, Contribution, StageResult


@dataclass(frozen=True, slots=True)
class ChunkRef:
    """Where a chunk lies: enough to turn an index hit (a chunk id) into a ``Candidate``; and its own
    token count as ingest stored it (``Chunk.text_tokens``), None where the store holds none."""

    doc_id: str
    start: int
    end: int
    tokens: int | None = None


ChunkTable = Mapping[str, ChunkRef]
ChunkRow = tuple[str, str, int, int, int | None]  # chunk id, document id, start, end, own token count


class ChunkRows(Mapping[str, ChunkRef]):
    """A chunk table over the store's rows as read (``Store.chunk_rows``), each ``ChunkRef`` made when
    a chunk is looked up: a question looks up a few hundred, while making one per chunk up front cost
    a cold open at 100k chunks about 0.15 s (a frozen dataclass sets each field through
    ``object.__setattr__``)."""

    __slots__ = ("_rows",)

    def __init__(self, rows: Iterable[ChunkRow]) -> None:
        self._rows = {row[0]: row for row in rows}

    def __getitem__(self, chunk_id: str) -> ChunkRef:
        _, doc_id, start, end, tokens = self._rows[chunk_id]
        return ChunkRef(doc_id, start, end, tokens)

    def __contains__(self, chunk_id: object) -> bool:
        return chunk_id in self._rows

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


def rank_order(candidates: Iterable[Candidate]) -> list[Candidate]:
    """Candidates by score descending, ties by ``chunk_id`` ascending: the one order of every stage."""
    return sorted(candidates, key=lambda c: (-c.score, c.chunk_id))


class SearchIndex(Protocol):
    """A keyword index: the ``k`` best ``(chunk_id, score)`` pairs for a query text."""

    def search(self, query: str, k: int) -> list[tuple[str, float]]: ...


class VectorSearchIndex(Protocol):
    """A vector index: the ``k`` best ``(chunk_id, score)`` pairs for a query vector."""

    dim: int

    def search(self, query_vec: npt.ArrayLike, k: int) -> list[tuple[str, float]]: ...


class Retriever(Protocol):
    """A first stage: ranks chunks for a query from nothing; ``source`` names the search in the
    candidates' ``sources`` (one retriever searching several phrasings is several searches)."""

    name: str

    def __call__(self, query: str, *, source: str | None = None) -> list[Candidate]: ...


class Stage(Protocol):
    """A later stage: re-ranks, filters or rescores the ranking of the stage before it, which
    ``source`` names (the candidates' ``sources`` key their input ranks by it). What the stage is
    (``detail()``) and what it did on this call (written into ``detail``) go into the trace. The
    pipeline runs its later stages in the order the config builds them (``Pipeline.later``)."""

    name: str

    def detail(self) -> dict[str, object]: ...

    def __call__(
        self, query: str, candidates: list[Candidate], *, source: str, detail: dict[str, object]
    ) -> list[Candidate]: ...


def hits_to_candidates(name: str, hits: Sequence[tuple[str, float]], table: ChunkTable) -> list[Candidate]:
    """Index hits as candidates in rank order, each with ``sources={name: (rank, score, score)}``."""
    ordered = sorted(hits, key=lambda hit: (-hit[1], hit[0]))
    out = []
    for rank, (chunk_id, score) in enumerate(ordered, start=1):
        ref = table.get(chunk_id)
        if ref is None:
            raise StoreError(
                f"the {name} index returned chunk {chunk_id!r}, which the chunk table does not hold",
                fix="Re-run ingest so the index and the chunk table describe the same chunks",
            )
        score = float(score)
        # make: a stage builds a hundred of these per question, and the class call cost more than the search
        out.append(
            Candidate.make(
                chunk_id, ref.doc_id, ref.start, ref.end, score, {name: Contribution.make(rank, score, score)}
            )
        )
    return out


def _check_settings(owner: str, k: int, name: str) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"{owner} k={k!r} is invalid; use a positive number of candidates such as 50")
    if not name:
        raise ValueError(f"{owner} name={name!r} is empty; name the retriever, e.g. 'keyword'")


class KeywordRetriever:
    """The ``k`` best chunks by a keyword index's own score (BM25)."""

    def __init__(self, index: SearchIndex, table: ChunkTable, k: int, name: str = "keyword") -> None:
        _check_settings("KeywordRetriever", k, name)
        self.index = index
        self.table = table
        self.k = k
        self.name = name

    def __call__(self, query: str, *, source: str | None = None) -> list[Candidate]:
        """The ranking for ``query``; its candidates name ``source`` (default: the retriever) as theirs."""
        return hits_to_candidates(source or self.name, self.index.search(query, self.k), self.table)


class VectorRetriever:
    """The ``k`` chunks whose vectors are closest to the query's, embedded as a query."""

    def __init__(
        self, index: VectorSearchIndex, embedder: Embedder, table: ChunkTable, k: int, name: str = "vector"
    ) -> None:
        _check_settings("VectorRetriever", k, name)
        if embedder.dim != index.dim:
            raise ValueError(
                f"embedder {embedder.name!r} gives {embedder.dim}-dimensional vectors but the index "
                f"holds {index.dim}-dimensional ones; re-embed the corpus with this embedder"
            )
        self.index = index
        self.embedder = embedder
        self.table = table
        self.k = k
        self.name = name

    def __call__(self, query: str, *, source: str | None = None) -> list[Candidate]:
        vector: npt.NDArray[np.float32] = self.embedder.embed([query], kind="query")[0]
        return hits_to_candidates(source or self.name, self.index.search(vector, self.k), self.table)

    def search_document(self, passage: str, *, source: str | None = None) -> list[Candidate]:
        """Search with a passage embedded as a document (HyDE's hypothetical answer)."""
        vector: npt.NDArray[np.float32] = self.embedder.embed([passage], kind="document")[0]
        return hits_to_candidates(source or self.name, self.index.search(vector, self.k), self.table)


def _timed(name: str, search: Callable[[], list[Candidate]]) -> StageResult:
    started = time.perf_counter()
    candidates = search()
    elapsed_ms = (time.perf_counter() - started) * 1000.0
    return StageResult(name=name, candidates=tuple(candidates), elapsed_ms=elapsed_ms)


def run_jobs(
    jobs: Mapping[str, Callable[[], list[Candidate]]],
    on_done: Callable[[StageResult], None] | None = None,
) -> dict[str, StageResult]:
    """Run named first-stage searches at once, one thread each; ``{name: StageResult}`` in input order.

    ``on_done`` is called in the calling thread with each result the moment its search finishes, in
    the order they finish: whichever search ends first is reported first, which is what lets a page
    draw keyword search before vector search has returned. Threads suffice because the heavy parts
    (numpy products, tokenizers, model runtimes) release the GIL. Each result's ``elapsed_ms`` is its
    own search's time, measured in its thread. The first search to fail raises here, and searches not
    yet started are cancelled; so is everything when ``on_done`` raises (a client that went away).
    """
    if not jobs:
        return {}
    done: dict[str, StageResult] = {}
    pool = ThreadPoolExecutor(max_workers=len(jobs), thread_name_prefix="retrieve")
    try:
        futures = {pool.submit(_timed, name, job): name for name, job in jobs.items()}
        for future in as_completed(futures):
            result = future.result()
            done[futures[future]] = result
            if on_done is not None:
                on_done(result)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return {name: done[name] for name in jobs}


def run_concurrently(
    retrievers: Sequence[Retriever], query: str, on_done: Callable[[StageResult], None] | None = None
) -> dict[str, StageResult]:
    """Run first-stage retrievers at once on one query; ``{name: StageResult}`` in input order."""
    names = [r.name for r in retrievers]
    if len(set(names)) != len(names):
        raise ValueError(f"retriever names {names} repeat; give each retriever its own name")
    return run_jobs({r.name: functools.partial(r, query) for r in retrievers}, on_done)
