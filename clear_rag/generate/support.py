"""What supports each sentence of an answer, and whether retrieval missed the answer or the model ignored it.

The check reads the answer against the context the model was given, so it needs no labels and runs
for every question. It has two steps, and only the first needs a model:

1. **Scoring** (``SupportChecker``). A text (a sentence of the answer, or the question) is compared
   with the windows of each passage: every sentence and every two adjacent sentences
   (``clear_rag.generate.sentences``), as spans of the document. For each window:

   - ``coverage``, the lexical measure: the share of the text's content terms (the keyword index's
     terms, Porter-stemmed, less ``STOPWORDS``: ``clear_rag.generate.terms``) that the window holds;
   - ``missing``: the numbers and names of the text (``facts``) the window does not hold (a sentence
     saying 2019 is not supported by a window saying 2011, nor one naming Oxford by a window naming
     Aldermere, however alike the rest);
   - ``logit``: the support model's score of the pair (a cross-encoder read at sentence level: the
     question or sentence as the query, the window as the passage), for the ``shortlist`` windows
     of highest coverage only; a window outside it is not scored and supports nothing;
   - ``probability``: ``sigmoid(a * logit + c * coverage + b)``, the chance that the window is a
     rationale for the text, with ``(a, c, b)`` the model's ``Calibration``.

   The best window of each passage (highest probability, then coverage) is its ``Evidence``.

2. **Judging** (``judge``, in ``clear_rag.generate.verdicts``), a pure function of the evidence, so a
   replay gives the same verdicts.
   A window *supports* a text when its probability is at least ``BOUNDARY`` and it misses none of
   the text's numbers and names. For the question, a passage that supports it *looks like it answers*
   it.

Where the thresholds come from: ``BOUNDARY`` is 0.5, the decision boundary of the calibration, a
logistic model fitted with both classes weighted equally, so 0.5 is where a window is as likely a
rationale as not. The shipped cross-encoder's calibration is fitted on SciFact's rationale sentences
(``clear-rag train support``, written beside the model and to ``results/calibration/<name>.json``
with its held-out agreement); a model without one reads its logit alone (``UNCALIBRATED``: a = 1,
c = b = 0, so its own 0 is the boundary, which is the lexical fake's by construction: it scores 0
when half the query's words are present).

Each sentence gets one verdict (``SUPPORT_KINDS``): ``supported by [n]``, ``cited [n] but supported
by [m]``, ``cited [n], not supported by it``, ``supported by no passage``, or no claim (no content
term). The answer gets one line (``ANSWER_LINES``), the first that applies:

- **refused**: the answer is the refusal (or makes no claim);
- **retrieval missed it**: no packed passage looks like it answers the question (the reason names a
  candidate of some stage's top ``top_k`` that does, if one does, but was not packed);
- **the model ignored it**: a packed passage looks like it answers, and a sentence is unsupported or
  cites a passage that does not support it, or no sentence draws on the words that answer (no
  supporting window meets a window that looks like it answers the question);
- **supported**: every claim is supported (by a passage it cites, where it cites) and some sentence
  draws on the words of a passage that look like they answer the question.

Retrieval *looks weak* under the same condition as "retrieval missed it": it is known before the
answer (the ``context`` event carries it) and so is shown in Retrieve only too.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from clear_rag.generate.prompt import cited_numbers, is_refusal
from clear_rag.generate.sentences import sentence_spans, windows
from clear_rag.generate.terms import ANALYZER, content_terms, coverage, facts, without_markers
from clear_rag.generate.verdicts import judge, supports, weak_retrieval
from clear_rag.providers.base import Reranker, describe
from clear_rag.types import Evidence, SentenceSupport, StageResult, Support

SHORTLIST = 12  # windows per text the model scores: about 0.1 s of a MiniLM cross-encoder on two cores
OUTSIDE = 20  # candidates outside the context looked at, best ranked first


@dataclass(frozen=True, slots=True)
class Calibration:
    """``probability = sigmoid(logit_weight * logit + coverage_weight * coverage + bias)``, and where
    the three numbers come from."""

    logit_weight: float = 1.0
    coverage_weight: float = 0.0
    bias: float = 0.0
    source: str = "uncalibrated: the model's own logit, 0 as the boundary"

    def probability(self, logit: float, coverage: float) -> float:
        z = self.logit_weight * logit + self.coverage_weight * coverage + self.bias
        return 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Calibration:
        return cls(
            float(data["logit_weight"]),
            float(data["coverage_weight"]),
            float(data["bias"]),
            str(data.get("source", "")),
        )


UNCALIBRATED = Calibration()


@dataclass(frozen=True, slots=True)
class Source:
    """A stretch of a document to look for support in: a packed passage (``number`` its ``[n]``), or a
    candidate outside the context (``number`` 0, ``found`` as ``"keyword #12"``)."""

    number: int
    chunk_id: str
    doc_id: str
    start: int
    text: str
    found: str = ""


def outside_sources(stages: Sequence[StageResult], text: Callable[[str], str], top_k: int) -> list[Source]:
    """The candidates in the top ``top_k`` of any stage that were not packed, best ranked first, each
    with the first stage that ranked it best (``"keyword #3"``): where else an answer might have been."""
    packed = {c.chunk_id for s in stages if s.name == "context" for c in s.candidates}
    best: dict[str, tuple[int, str, Any]] = {}
    for stage in stages:
        if stage.name == "context":
            continue
        # strictly better only: a candidate a reranker kept unscored holds its input's rank, and is
        # named by the input stage that ranked it there, not by the rerank that did not score it
        for rank, cand in enumerate(stage.candidates[:top_k], start=1):
            if cand.chunk_id not in packed and (cand.chunk_id not in best or rank < best[cand.chunk_id][0]):
                best[cand.chunk_id] = (rank, stage.name, cand)
    ranked = sorted(best.values(), key=lambda found: (found[0], found[2].chunk_id))
    return [
        Source(0, c.chunk_id, c.doc_id, c.start, text(c.chunk_id), f"{name} #{rank}")
        for rank, name, c in ranked
    ]


class SupportChecker:
    """Scores texts against sources with a support model (see the module docstring) and judges them."""

    def __init__(
        self, model: Reranker, calibration: Calibration = UNCALIBRATED, *, shortlist: int = SHORTLIST
    ) -> None:
        if isinstance(shortlist, bool) or shortlist < 1:
            raise ValueError(f"shortlist={shortlist!r} is invalid; use a positive number of windows")
        self.model = model
        self.calibration = calibration
        self.shortlist = shortlist
        self.name = describe(model)

    def assess(self, question: str, passages: Sequence[Source], outside: Sequence[Source] = ()) -> Support:
        """Which packed passages look like they answer ``question``, and which outside candidates do:
        what is known before the answer, and whether retrieval looks weak."""
        answers = self.evidence(question, passages)
        beyond = self.evidence(question, outside[:OUTSIDE]) if outside else []
        weak, reason = weak_retrieval(answers, beyond)
        return Support(
            answers=tuple(answers),
            outside=tuple(beyond),
            weak=weak,
            weak_reason=reason,
            model=self.name,
            calibration=self.calibration.to_dict(),
        )

    def check(self, assessed: Support, answer: str, passages: Sequence[Source]) -> Support:
        """``assessed`` (``assess``) with the answer's sentences scored and judged, and its line."""
        sentences = []
        given = {p.number for p in passages}
        if not is_refusal(answer):
            for start, end in sentence_spans(answer):
                text = answer[start:end]
                scored = self.evidence(text, passages) if content_terms(text) else []
                # a number the model was not given cites nothing (the planner ignores it too)
                cited = tuple(n for n in cited_numbers(text) if n in given)
                sentences.append(SentenceSupport(start, end, text, cited, tuple(scored), "", ""))
        return judge(dataclasses.replace(assessed, sentences=tuple(sentences)), answer)

    def evidence(self, text: str, sources: Sequence[Source]) -> list[Evidence]:
        """The best window of each source for ``text``; sources none of whose windows made the
        shortlist are left out (they were not scored, and support nothing)."""
        best: dict[int, Evidence] = {}
        for n, found in self.scored(text, sources):
            held = best.get(n)
            if held is None or (found.probability, found.coverage) > (held.probability, held.coverage):
                best[n] = found
        return [best[n] for n in sorted(best)]

    def scored(
        self, text: str, sources: Sequence[Source], *, shortlist: int | None = None
    ) -> list[tuple[int, Evidence]]:
        """Every window of the shortlist for ``text`` (the ``shortlist`` windows of highest coverage,
        by default the checker's), scored, with the index of its source in ``sources``: highest
        coverage first, ties in the order the sources and their windows come."""
        terms = content_terms(text)
        wanted = facts(text)
        rows: list[tuple[int, int, int, float, tuple[str, ...]]] = []  # source, start, end, coverage, missing
        for n, source in enumerate(sources):
            for start, end, window_terms in _windows(source.text):
                missing = tuple(x for x in wanted if x not in window_terms)
                rows.append((n, start, end, coverage(terms, window_terms), missing))
        if not rows or not terms:
            return []
        order = sorted(range(len(rows)), key=lambda i: (-rows[i][3], i))[: shortlist or self.shortlist]
        texts = [sources[rows[i][0]].text[rows[i][1] : rows[i][2]] for i in order]
        logits = np.asarray(self.model.score(without_markers(text).strip(), texts), dtype=np.float64)
        found = []
        for i, logit in zip(order, logits.tolist(), strict=True):
            n, start, end, cover, missing = rows[i]
            source = sources[n]
            probability = self.calibration.probability(logit, cover)
            found.append(
                (
                    n,
                    Evidence(
                        number=source.number,
                        chunk_id=source.chunk_id,
                        doc_id=source.doc_id,
                        start=source.start + start,
                        end=source.start + end,
                        logit=round(logit, 6),
                        coverage=round(cover, 6),
                        probability=round(probability, 6),
                        supports=supports(probability, missing),
                        missing=missing,
                        found=source.found,
                    ),
                )
            )
        return found


@functools.lru_cache(maxsize=256)
def _windows(text: str) -> tuple[tuple[int, int, frozenset[str]], ...]:
    """A source's windows with their terms: cut and analysed once for the question and every sentence
    of the answer, which are each read against the same passages."""
    return tuple(
        (start, end, frozenset(ANALYZER.terms(text[start:end])))
        for start, end in windows(sentence_spans(text))
    )
