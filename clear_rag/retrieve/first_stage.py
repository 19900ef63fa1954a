"""The first stage of one question: every retriever searched under every phrasing (and a HyDE passage's
vector), all at once, each search reported the moment it ends, and one ranking per retriever, its
phrasings fused by RRF as soon as its own searches are in, without waiting for the other retriever.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from clear_rag.retrieve.fusion import rrf
from clear_rag.retrieve.stages import Retriever, VectorRetriever, run_jobs
from clear_rag.types import Candidate, StageResult

StageCallback = Callable[[StageResult], None]


def first_searches(
    retrievers: Sequence[Retriever], queries: Sequence[str], hypothetical: str | None
) -> Iterator[tuple[str, str, Callable[..., list[Candidate]], str, dict[str, Any]]]:
    """Every first-stage search: (retriever, stage name, search, its text, the stage's detail).
    A retriever with one search keeps its own name; with several, each is named apart so the
    fused ranking can take the retriever's name without a clash."""
    for retriever in retrievers:
        searches: dict[str, tuple[Callable[..., list[Candidate]], str, dict[str, Any]]] = {
            f"q{n}": (retriever, query, {"query": query, "phrasing": n}) for n, query in enumerate(queries)
        }
        if hypothetical is not None and isinstance(retriever, VectorRetriever):
            searches["hyde"] = (retriever.search_document, hypothetical, {"hypothetical": hypothetical})
        for suffix, (search, text, detail) in searches.items():
            name = retriever.name if len(searches) == 1 else f"{retriever.name}·{suffix}"
            yield (
                retriever.name,
                name,
                search,
                text,
                {"retriever": retriever.name, **(detail if len(searches) > 1 else {})},
            )


def first_stages(
    retrievers: Sequence[Retriever],
    queries: Sequence[str],
    hypothetical: str | None,
    rrf_k: int,
    report: StageCallback,
) -> tuple[list[StageResult], dict[str, StageResult]]:
    """Every (retriever, phrasing) search at once, reported as each ends, then one ranking per
    retriever: a retriever's fusion across phrasings runs as soon as its own searches are in."""
    jobs: dict[str, Callable[[], list[Candidate]]] = {}
    details: dict[str, dict[str, Any]] = {}
    owners: dict[str, list[str]] = {}
    for owner, name, search, text, detail in first_searches(retrievers, queries, hypothetical):
        jobs[name] = functools.partial(search, text, source=name)
        details[name] = detail
        owners.setdefault(owner, []).append(name)
    owner_of = {name: owner for owner, names in owners.items() for name in names}
    finished: dict[str, StageResult] = {}
    fused: dict[str, StageResult] = {}

    def done(result: StageResult) -> None:
        result = replace(result, detail=details[result.name])
        finished[result.name] = result
        report(result)
        owner = owner_of[result.name]
        names = owners[owner]
        if len(names) > 1 and all(n in finished for n in names):
            lists = {n: list(finished[n].candidates) for n in names}
            fused[owner] = timed_stage(
                owner,
                functools.partial(rrf, lists, k=rrf_k),
                detail={"method": "rrf", "inputs": ",".join(names), "k": rrf_k},
            )
            report(fused[owner])

    run_jobs(jobs, done)
    stages = [finished[name] for name in jobs]
    per_retriever: dict[str, StageResult] = {}
    for owner, names in owners.items():
        if len(names) == 1:
            per_retriever[owner] = stages[list(jobs).index(names[0])]
        else:
            stages.append(fused[owner])
            per_retriever[owner] = fused[owner]
    return stages, per_retriever


def timed_stage(name: str, run: Callable[[], list[Candidate]], *, detail: dict[str, Any]) -> StageResult:
    started = time.perf_counter()
    candidates = run()
    return StageResult(name, tuple(candidates), (time.perf_counter() - started) * 1000, detail)
