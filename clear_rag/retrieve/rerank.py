"""Reranking the shortlist with a cross-encoder, which reads query and passage together.

A cross-encoder is far more accurate than the first stages and far slower, so it re-scores only the
first ``shortlist`` candidates. The candidates beyond the shortlist (the tail) are kept below the
reranked ones, in their input order, as reranking pipelines do: a reranker reorders what it read and
takes nothing away from what it did not, so a rerank row's recall@100 is the first stage's and not
recall@shortlist. (The predecessor dropped the tail, so recall at any depth past the shortlist read as
a loss the reranker never caused.) The tail is never interleaved with the shortlist: its first-stage
scores are on another scale than logits. The stage's detail says how many it re-scored
(``reranked``), so the trace, the page and the CLI can tell the re-scored candidates from the tail.

The shortlist is put in the reranker's order (``rerank_fusion = "replace"``), or in the order of
``1 / (k + first-stage rank) + 1 / (k + reranker rank)`` (``"rrf"``): the two rankings fused as the
retrievers' are, with nothing to tune but ``k``, so a reranker that knows less than the first stage
on some questions cannot undo all of it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping

import numpy as np

from clear_rag.errors import ModelError
from clear_rag.providers.base import Reranker, describe
from clear_rag.retrieve.fusion import rrf_contribution
from clear_rag.retrieve.stages import rank_order
from clear_rag.types import Candidate, Contribution


def sigmoid(logit: float) -> float:
    """``1 / (1 + e^-x)``: a logit shown as a score in (0, 1), for display only.

    Written in the two halves ``1 / (1 + e^-x)`` for x >= 0 and ``e^x / (1 + e^x)`` for x < 0 so
    that ``exp`` never sees a large positive argument and cannot overflow.
    """
    if logit >= 0:
        return 1.0 / (1.0 + math.exp(-logit))
    e = math.exp(logit)
    return e / (1.0 + e)


RERANKER = "cross-encoder"  # the source name of the reranker's own rank and logit under rrf


class RerankStage:
    """Re-scores the first ``shortlist`` candidates with ``reranker.score`` and keeps the rest below.

    ``chunk_text`` gives a chunk's text by id, as a function or a mapping. The output is the
    shortlist in its new order, then every candidate beyond it (the tail) in its input order, so the
    output holds the same candidates as the input. The stage's ``detail`` records how many were
    re-scored (``reranked``).

    Without ``rrf_k`` (``"replace"``) a shortlisted candidate's score is its logit, and its
    ``sources`` is its input stage alone, ``{input: Contribution(input rank, input score, 0.0)}``:
    the logit owes nothing to the scores before it, so nothing is recorded as added. (The
    predecessor kept every earlier contribution beside the logit, as if they had summed into it.)
    Which searches found a candidate is read from the trace's first stages (``trace.found_by``).
    The tail has no logit; its score is not a logit: the tail's place, below the lowest logit,
    ``lowest logit - j`` for the j-th candidate past the shortlist, so the scores still fall in the
    output's order (for logits of magnitude below 2**52, where subtracting 1 is exact enough to
    tell them apart; a cross-encoder's are a few tens). Its ``sources`` are the shortlist's kind,
    ``{input: Contribution(input rank, input score, 0.0)}``.

    With ``rrf_k`` (``"rrf"``) a shortlisted candidate's score is ``1 / (rrf_k + input rank) +
    1 / (rrf_k + reranker rank)``, ties in the reranker's order, and the sources hold both terms:
    the input's, and the reranker's under ``RERANKER`` with its logit. A tail candidate's score is
    its one term ``1 / (rrf_k + input rank)`` and its sources hold only the input's; both of a
    shortlisted candidate's terms are at least ``1 / (rrf_k + shortlist)``, more than any tail
    candidate's one, so the tail stays below the shortlist with no rule beyond the sum.
    """

    def __init__(
        self,
        reranker: Reranker,
        chunk_text: Callable[[str], str] | Mapping[str, str],
        shortlist: int = 50,
        name: str = "rerank",
        rrf_k: int | None = None,
    ) -> None:
        if isinstance(shortlist, bool) or not isinstance(shortlist, int) or shortlist < 1:
            raise ValueError(
                f"RerankStage shortlist={shortlist!r} is invalid; use a positive size such as 50"
            )
        if not name:
            raise ValueError("RerankStage name='' is empty; name the stage, e.g. 'rerank'")
        self.reranker = reranker
        self._text = chunk_text.__getitem__ if isinstance(chunk_text, Mapping) else chunk_text
        if rrf_k is not None and (isinstance(rrf_k, bool) or rrf_k < 1):
            raise ValueError(f"RerankStage rrf_k={rrf_k!r} is invalid; use a positive k such as 60")
        self.shortlist = shortlist
        self.name = name
        self.rrf_k = rrf_k

    def detail(self) -> dict[str, object]:
        """What the trace records of this stage: its shortlist and model, and how the page shows its
        scores: fused, with the fusion stage's own keys (``method``, ``k``), so that it explains the
        sum as it does fusion's; else logits, through a sigmoid, since they are unbounded (the tail
        below the ``reranked`` has no logit, and is shown as not re-scored)."""
        shown = {"display": "sigmoid"} if self.rrf_k is None else {"method": "rrf", "k": self.rrf_k}
        return {"shortlist": self.shortlist, "model": describe(self.reranker), **shown}

    def __call__(
        self,
        query: str,
        candidates: list[Candidate],
        *,
        source: str = "input",
        detail: dict[str, object] | None = None,
    ) -> list[Candidate]:
        """``candidates`` in their input order; ``source`` names the stage they come from. Into
        ``detail``, where given, go ``reranked``: how many candidates the reranker scored (the first
        that many of the output; the rest are the kept tail), and ``reused``: how many of the logits
        the reranker kept from an earlier call (``OnnxCrossEncoder.score_reusing``) rather than ran,
        for a reranker that says."""
        head, tail = candidates[: self.shortlist], candidates[self.shortlist :]
        if detail is not None:
            detail["reranked"] = len(head)
        if not head:
            return []
        texts = [self._text(c.chunk_id) for c in head]
        reusing = getattr(self.reranker, "score_reusing", None)
        if reusing is not None:
            scored, reused = reusing(query, texts)
            logits = np.asarray(scored)
            if detail is not None:
                detail["reused"] = int(reused)
        else:
            logits = np.asarray(self.reranker.score(query, texts))
        if logits.shape != (len(head),) or not np.isfinite(logits).all():
            raise ModelError(
                f"reranker {describe(self.reranker)} returned logits of shape {logits.shape} "
                f"(finite: {bool(np.isfinite(logits).all())}) for {len(head)} passages",
                fix="Check the reranker model; it must return one finite logit per passage",
            )
        reranked = rank_order(
            dataclasses.replace(
                c,
                score=float(logit),
                sources={source: Contribution(rank=rank, score=c.score, contribution=0.0)},
            )
            for rank, (c, logit) in enumerate(zip(head, logits.tolist(), strict=True), start=1)
        )
        k = self.rrf_k
        if k is None:
            return reranked + _kept_below_logits(tail, len(head), reranked[-1].score, source)
        fused = []
        for rank, c in enumerate(reranked, start=1):
            first = c.sources[source]
            sources = {
                source: dataclasses.replace(first, contribution=rrf_contribution(first.rank, k)),
                RERANKER: Contribution(rank=rank, score=c.score, contribution=rrf_contribution(rank, k)),
            }
            score = sum(term.contribution for term in sources.values())
            fused.append(dataclasses.replace(c, score=score, sources=sources))
        # a tie (ranks 1 and 2 against 2 and 1) goes to the reranker's order, not to the chunk id
        fused.sort(key=lambda c: (-c.score, c.sources[RERANKER].rank))
        return fused + _kept_by_rrf(tail, len(head), k, source)


def _kept_below_logits(tail: list[Candidate], after: int, lowest: float, source: str) -> list[Candidate]:
    """The tail under ``"replace"``: in input order, each scored ``lowest - j`` for the j-th past the
    shortlist (not a logit: its place), with its input rank and score as the shortlist's sources are."""
    return [
        dataclasses.replace(
            c,
            score=lowest - j,
            sources={source: Contribution(rank=after + j, score=c.score, contribution=0.0)},
        )
        for j, c in enumerate(tail, start=1)
    ]


def _kept_by_rrf(tail: list[Candidate], after: int, k: int, source: str) -> list[Candidate]:
    """The tail under ``"rrf"``: in input order, each scored by its one term ``1 / (k + input rank)``."""
    kept = []
    for rank, c in enumerate(tail, start=after + 1):
        term = Contribution(rank=rank, score=c.score, contribution=rrf_contribution(rank, k))
        kept.append(dataclasses.replace(c, score=term.contribution, sources={source: term}))
    return kept
