"""Fusing several ranked lists into one: reciprocal rank fusion, and min-max weighted fusion.

Each list is taken in the order given (the order its stage returned), rank 1 first. A fused
candidate's ``sources`` maps every list it appears in to ``Contribution(rank in that list, that
list's own score, what the list added to the fused score)``, so a page can show why it ranks where
it does. The same functions serve both levels of multi-query fusion: across phrasings of one
retriever, then across retrievers. A list that was itself fused keeps its own terms: its
contribution's ``parts`` are the candidate's sources in that list (one per phrasing), so the
two-level RRF sum can be read term by term. (The predecessor of this code dropped them.)
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from clear_rag.retrieve.stages import rank_order
from clear_rag.types import Candidate, Contribution

RRF_K = 60


def rrf_contribution(rank: int, k: float = RRF_K) -> float:
    """``1 / (k + rank)``, rank 1-based: one list's share of a reciprocal-rank-fusion score.

    Cormack, Clarke & Büttcher (2009), "Reciprocal rank fusion outperforms Condorcet and individual
    rank learning methods", SIGIR; k = 60 is their value, chosen so that a few top ranks do not
    swamp agreement lower down.
    """
    return 1.0 / (k + rank)


def minmax_normalise(scores: Sequence[float]) -> list[float]:
    """``(s - min) / (max - min)`` for each score, so the list spans [0, 1].

    A list whose scores are all equal (including a list of one) normalises to 1.0 throughout: its
    only information is that these candidates made the list, and 0.0 would make a one-hit list
    count for nothing. Source: Lee (1997), "Analyses of multiple evidence combination", SIGIR, which
    normalised scores this way before summing them (CombSUM, Fox & Shaw 1994).
    """
    if not scores:
        return []
    low, high = min(scores), max(scores)
    if high == low:
        return [1.0 for _ in scores]
    return [(s - low) / (high - low) for s in scores]


def _fuse(
    ranked: Mapping[str, Sequence[Candidate]],
    contributions: Mapping[str, Sequence[float]],
) -> list[Candidate]:
    """Sum each candidate's contributions over the lists and record every one in ``sources``."""
    first_seen: dict[str, Candidate] = {}
    sources: dict[str, dict[str, Contribution]] = {}
    for name, candidates in ranked.items():
        seen_here: set[str] = set()
        for rank, (cand, added) in enumerate(zip(candidates, contributions[name], strict=True), start=1):
            if cand.chunk_id in seen_here:
                raise ValueError(
                    f"chunk {cand.chunk_id!r} appears twice in list {name!r}; a ranked list holds each "
                    "chunk once"
                )
            seen_here.add(cand.chunk_id)
            first_seen.setdefault(cand.chunk_id, cand)
            # a first-stage list's candidates name only the list itself: nothing below it to keep
            parts = {source: c for source, c in cand.sources.items() if source != name}
            sources.setdefault(cand.chunk_id, {})[name] = Contribution.make(rank, cand.score, added, parts)
    fused = []
    for chunk_id, cand in first_seen.items():
        by_list = sources[chunk_id]
        # math.fsum, so the fused score does not depend on the order the lists were given in.
        score = math.fsum(c.contribution for c in by_list.values())
        fused.append(Candidate.make(chunk_id, cand.doc_id, cand.start, cand.end, score, by_list))
    return rank_order(fused)


def rrf(ranked: Mapping[str, Sequence[Candidate]], k: float = RRF_K) -> list[Candidate]:
    """Reciprocal rank fusion: score = sum over the lists holding a chunk of ``1 / (k + rank)``.

    Only ranks count, so lists whose scores live on different scales (BM25, cosine) fuse without
    any calibration. Empty lists, or no lists, contribute nothing.
    """
    if isinstance(k, bool) or not isinstance(k, int | float) or not math.isfinite(k) or k <= 0:
        raise ValueError(f"rrf k={k!r} is invalid; use a positive number (60 is the published default)")
    contributions = {
        name: [rrf_contribution(rank, k) for rank in range(1, len(cands) + 1)]
        for name, cands in ranked.items()
    }
    return _fuse(ranked, contributions)


def minmax(
    ranked: Mapping[str, Sequence[Candidate]], weights: Mapping[str, float] | None = None
) -> list[Candidate]:
    """Min-max weighted fusion: score = sum over lists of ``weight * minmax_normalise(score)``.

    A list without a weight gets 1.0 (as ``PipelineConfig.weights`` says); a weight must name a
    list in ``ranked`` and be finite and non-negative. A chunk missing from a list gets nothing
    from it.
    """
    given = {} if weights is None else dict(weights)
    unknown = sorted(set(given) - set(ranked))
    if unknown:
        raise ValueError(f"weights name lists {unknown} that are not fused; the lists are {sorted(ranked)}")
    resolved = {name: given.get(name, 1.0) for name in ranked}
    for name, weight in resolved.items():
        if not math.isfinite(weight) or weight < 0:
            raise ValueError(f"weight {name}={weight!r} is invalid; use a finite number >= 0")
    contributions = {
        name: [resolved[name] * norm for norm in minmax_normalise([c.score for c in cands])]
        for name, cands in ranked.items()
    }
    return _fuse(ranked, contributions)
