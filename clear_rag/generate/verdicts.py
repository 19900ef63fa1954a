"""The support check's decisions, a pure function of its evidence so that a replay gives the same
verdicts: which windows support a text, each sentence's verdict, whether retrieval looks weak, and
the answer's one line (``clear_rag.generate.support`` describes each)."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from clear_rag.generate.prompt import is_refusal
from clear_rag.generate.terms import content_terms
from clear_rag.types import Evidence, Support

BOUNDARY = 0.5


def supports(probability: float, missing: Sequence[str]) -> bool:
    """Whether a window supports a text: calibrated probability at the boundary or above, and every
    number and name of the text in it."""
    return probability >= BOUNDARY and not missing


def weak_retrieval(answers: Sequence[Evidence], outside: Sequence[Evidence]) -> tuple[bool, str]:
    """Retrieval looks weak when no packed passage looks like it answers the question; the reason
    names the best packed passage's probability and an outside candidate that does look like it."""
    if any(e.supports for e in answers):
        return False, ""
    best = max(answers, key=lambda e: e.probability, default=None)
    said = (
        f"no passage of the context looks like it answers the question (best [{best.number}], "
        f"p {best.probability:.2f} against {BOUNDARY})"
        if best is not None
        else "no passage of the context looks like it answers the question"
    )
    beyond = next((e for e in sorted(outside, key=lambda e: -e.probability) if e.supports), None)
    if beyond is not None:
        return True, f"{said}; {beyond.chunk_id} ({beyond.found}) does, but was not packed"
    return True, f"{said}, nor does any other candidate in the top of a stage"


def sentence_verdict(cited: Sequence[int], evidence: Sequence[Evidence], *, claim: bool) -> tuple[str, str]:
    """A sentence's kind (one of ``SUPPORT_KINDS``) and its verdict in words."""
    if not claim:
        return "no claim", "no claim to check"
    backing = [e.number for e in evidence if e.supports and e.number > 0]
    named = list(cited)
    if named:
        agreeing = [n for n in named if n in backing]
        if agreeing:
            return "supported", f"supported by {_refs(agreeing)}"
        if backing:
            return "miscited", f"cited {_refs(named)} but supported by {_refs(backing)}"
        return "cited, unsupported", f"cited {_refs(named)}, not supported by it"
    if backing:
        return "supported", f"supported by {_refs(backing)} (not cited)"
    return "unsupported", "supported by no passage"


def judge(support: Support, answer: str) -> Support:
    """Every decision of ``support`` taken again from its evidence: the windows' ``supports``, each
    sentence's verdict, the weak-retrieval warning and the answer's line. Pure, so that a stored
    trace replays to the same verdicts."""

    def decided(e: Evidence) -> Evidence:
        return dataclasses.replace(e, supports=supports(e.probability, e.missing))

    answers = tuple(map(decided, support.answers))
    outside = tuple(map(decided, support.outside))
    sentences = []
    for s in support.sentences:
        evidence = tuple(map(decided, s.evidence))
        kind, verdict = sentence_verdict(s.cited, evidence, claim=bool(content_terms(s.text)))
        sentences.append(dataclasses.replace(s, evidence=evidence, kind=kind, verdict=verdict))
    weak, weak_reason = weak_retrieval(answers, outside)
    judged = dataclasses.replace(
        support,
        answers=answers,
        outside=outside,
        weak=weak,
        weak_reason=weak_reason,
        sentences=tuple(sentences),
    )
    line, reason = answer_line(judged, answer)
    return dataclasses.replace(judged, line=line, reason=reason)


def answer_line(support: Support, answer: str) -> tuple[str, str]:
    """The answer's one line and the sentence behind it (see the module docstring for the order)."""
    if not answer:
        return "", ""
    answering = [e.number for e in support.answers if e.supports]
    claims = [(i, s) for i, s in enumerate(support.sentences, start=1) if s.kind != "no claim"]
    if is_refusal(answer) or not claims:
        said = "the answer is a refusal" if is_refusal(answer) else "the answer makes no claim"
        if answering:
            return "refused", f"{said}, although {_answering(answering)}"
        return "refused", f"{said}; no passage of the context looks like it answers the question"
    if not answering:
        return "retrieval missed it", support.weak_reason
    looks = _answering(answering)
    for i, s in claims:
        backing = [e.number for e in s.evidence if e.supports]
        if s.kind == "miscited":
            return (
                "the model ignored it",
                f"sentence {i} cites {_refs(s.cited)} but {_refs(backing)} supports it",
            )
        if s.kind == "cited, unsupported":
            return (
                "the model ignored it",
                f"sentence {i} cites {_refs(s.cited)}, which does not support it; {looks}",
            )
        if s.kind == "unsupported":
            return "the model ignored it", f"sentence {i} is supported by no passage; {looks}"
    used = [e for _, s in claims for e in s.evidence if e.supports]
    if not {e.number for e in used} & set(answering):
        return "the model ignored it", f"{looks}; the answer uses {_refs(sorted({e.number for e in used}))}"
    # Using the passage is not enough: the answer must draw on the words of it that answer the question.
    # A sentence copied from another part of the right passage (its heading, say) says something true,
    # and not what was asked.
    if not any(_overlap(e, a) for e in used for a in support.answers if a.supports):
        return "the model ignored it", f"{looks}, in words the answer does not use"
    uncited = any(not s.cited for _, s in claims)
    return "supported", "every sentence is supported by a passage" + (
        " (some by one they do not cite)" if uncited else " it cites"
    )


def _overlap(a: Evidence, b: Evidence) -> bool:
    """Whether two windows share text: the same document, and spans that meet."""
    return a.doc_id == b.doc_id and a.start < b.end and b.start < a.end


def _answering(numbers: Sequence[int]) -> str:
    """``[2] looks like it answers the question``, or ``[1][2] look like they answer it``."""
    if len(set(numbers)) == 1:
        return f"{_refs(numbers)} looks like it answers the question"
    return f"{_refs(numbers)} look like they answer the question"


def _refs(numbers: Sequence[int]) -> str:
    return "".join(f"[{n}]" for n in dict.fromkeys(numbers))
