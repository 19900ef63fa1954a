"""Answers graded without a judge model: deterministic, and explained question by question.

Recall says whether the right text reached the model, not whether the model used it or cited the right
place. Each grade here is decided by something a reader can check in the per-question record:

- ``in context``: the share of the question's labelled spans that a packed passage covers (the 0.5
  rule of ``metrics.covers``). Below 1 the answer was lost in retrieval, not in generation.
- ``correct``: not a refusal, every ``must_mention`` term found (any one of its variants), and no
  ``must_not_mention`` term (wrong-section bleed).
- ``mentions``: the share of ``must_mention`` terms found.
- ``cited right``: the share of labelled spans that a span the *model* cited covers, by the same 0.5
  rule. Citations the planner inferred by word overlap because the model cited nothing are the
  page's aid to the reader, not the model's attribution: they count as no citation here.
- ``attributed right``: the same share for the citations a reader is shown: the model's, or where it
  cited nothing, those the planner inferred by word overlap (what the page highlights).
- ``miscited when correct``: over the correct answers only, 1 where the citations miss a labelled
  span. "Says the right thing while citing the wrong chunk" is this metric's mean.
- ``false refusal``: the answer refused although a covering passage was in the context.
- ``bleed``: some ``must_not_mention`` term was said.
- ``correct refusal``: for a question the corpus does not answer, the answer refused.

The support check (``clear_rag.generate.support``) reads every answer against its context with no
labels; where it ran, the grades also measure it, question by question. Each of these is present
only where it is defined, so its mean over a row is a precision or a recall:

- ``check precision``: 1 where the check flags the answer (its line is "the model ignored it" or
  "retrieval missed it") and the answer is graded wrong; present for flagged answers;
- ``check recall``: 1 where an answer graded wrong is flagged; present for answers graded wrong;
- ``check precision (cites)`` and ``check recall (cites)``: the same, with "graded wrong" widened to
  "graded wrong or correct but not cited right";
- ``weak precision``: 1 where retrieval is called weak and the context held no labelled span (or
  the corpus does not answer the question); present where it is called weak;
- ``weak recall``: 1 where a context that held no labelled span (or a question the corpus does not
  answer) is called weak; present for those.

Refusals are left out of the four ``check`` metrics (the check calls them refused, as the grader does).

A term is found case-insensitively, as whole words (``2011`` is not found in ``20110``), with any run
of whitespace in it matching any run in the answer. Every grade is 0 or 1 per question except
``in context``, ``mentions`` and ``cited right``, which are shares; a metric a question cannot have
(``correct refusal`` of an answerable question, ``bleed`` without ``must_not_mention``) is absent, so
its mean is over the questions that have it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from clear_rag.eval.golden import Question
from clear_rag.eval.metrics import Span, covers
from clear_rag.generate.prompt import is_refusal
from clear_rag.generate.verdicts import judge
from clear_rag.types import Support, Trace

CHECK_METRICS = (
    "check precision",
    "check recall",
    "check precision (cites)",
    "check recall (cites)",
    "weak precision",
    "weak recall",
)
ANSWER_METRICS = (
    "correct",
    "mentions",
    "cited right",
    "attributed right",
    "miscited when correct",
    "false refusal",
    "bleed",
    "correct refusal",
    "in context",
    *CHECK_METRICS,
)
FLAGGED = ("the model ignored it", "retrieval missed it")  # the support lines that say something went wrong
# Each graded answer's outcome, the first that applies, in this order: what the ``answers`` query of
# the result files counts per row. Its ``verdict`` says the same with the term or reason that decided.
OUTCOMES = (
    "correct, cited right",
    "correct, not cited right",
    "missing a term",
    "bleed",
    "false refusal",
    "refused, not in context",
    "correct refusal",
    "answered, should refuse",
)
CORRECT_OUTCOMES = ("correct, cited right", "correct, not cited right", "correct refusal")
# What the planner records in a trace's steps when the model cited nothing (generate/planner.py).
INFERRED = "citations"


@dataclass(frozen=True, slots=True)
class Graded:
    """One answer's grades (``metrics``) and what decided each (``decided``)."""

    metrics: dict[str, float]
    decided: dict[str, Any] = field(default_factory=dict)


def found_variant(text: str, variants: Sequence[str]) -> str | None:
    """The first of ``variants`` that ``text`` says, as whole words and ignoring case, or ``None``."""
    said = " ".join(text.split()).casefold()
    for variant in variants:
        words = [re.escape(w) for w in variant.casefold().split()]
        if words and re.search(r"(?<![0-9a-z])" + r"\s+".join(words) + r"(?![0-9a-z])", said):
            return variant
    return None


def _covered(spans: Sequence[Span], labels: Sequence[Span]) -> list[int]:
    return [i for i, label in enumerate(labels) if any(covers(span, label) for span in spans)]


def _share(covered: Sequence[int], labels: Sequence[Span]) -> float:
    return len(covered) / len(labels) if labels else 0.0


def grade(
    question: Question,
    answer: str,
    citations: Sequence[Span],
    context: Sequence[Span],
    *,
    inferred: bool = False,
) -> Graded:
    """Grade ``answer`` to ``question`` given the spans it cited and the spans packed into its context.

    ``inferred``: the citations were attributed by word overlap, not given by the model (they are
    then not graded; see the module docstring).
    """
    refused = is_refusal(answer)
    decided: dict[str, Any] = {"refused": refused}
    if question.refusal:
        decided["outcome"] = "correct refusal" if refused else "answered, should refuse"
        decided["verdict"] = "correct refusal" if refused else "answered what the corpus does not say"
        return Graded({"correct refusal": float(refused)}, decided)
    in_context = _covered(context, question.labels)
    graded_citations = [] if inferred else list(citations)
    cited = _covered(graded_citations, question.labels)
    mentioned = {group[0]: found_variant(answer, group) for group in question.must_mention}
    bled = [term for term in question.must_not_mention if found_variant(answer, (term,)) is not None]
    missing = [term for term, variant in mentioned.items() if variant is None]
    correct = not refused and not missing and not bled
    metrics: dict[str, float] = {
        "correct": float(correct),
        "cited right": _share(cited, question.labels),
        "attributed right": _share(_covered(citations, question.labels), question.labels),
        "false refusal": float(refused and bool(in_context)),
        "in context": _share(in_context, question.labels),
    }
    if mentioned:
        metrics["mentions"] = sum(v is not None for v in mentioned.values()) / len(mentioned)
    if question.must_not_mention:
        metrics["bleed"] = float(bool(bled))
    if correct:
        metrics["miscited when correct"] = float(len(cited) < len(question.labels))
    decided.update(
        {
            "mentioned": mentioned,
            "bleed": bled,
            "cited": [[c.doc_id, c.start, c.end] for c in graded_citations],
            "citations inferred": inferred,
            "labels cited": cited,
            "labels in context": in_context,
            "labels": [[label.doc_id, label.start, label.end] for label in question.labels],
        }
    )
    if refused:
        outcome, verdict = (
            ("false refusal", "false refusal: the context held the answer")
            if in_context
            else ("refused, not in context", "refused: not in the context")
        )
    elif bled:
        outcome, verdict = "bleed", f"bleed: said {', '.join(bled)}"
    elif missing:
        lost = not in_context and any(label.resolved for label in question.labels)
        outcome, verdict = "missing a term", f"missing {', '.join(missing)}" + " (not in the context)" * lost
    elif len(cited) == len(question.labels):
        outcome, verdict = "correct, cited right", "correct, cited right"
    else:
        said = "the citations miss the answer's span" if graded_citations else "the model cited nothing"
        outcome, verdict = "correct, not cited right", f"correct, but {said}"
    decided.update({"outcome": outcome, "verdict": verdict})
    return Graded(metrics, decided)


def grade_trace(question: Question, trace: Trace) -> Graded:
    """Grade a stored trace: its answer, its citations, and the passages of its context stage; where
    the support check ran, how it agrees with the grades (``agreement``), and its verdicts beside them."""
    context = next((s.candidates for s in trace.stages if s.name == "context"), ())
    inferred = INFERRED in trace.steps
    graded = grade(question, trace.answer, trace.citations, context, inferred=inferred)
    if trace.support is None:
        return graded
    support = judge(trace.support, trace.answer)  # taken again from the evidence: a replay's verdicts
    checked = {
        "line": support.line,
        "reason": support.reason,
        "weak": support.weak,
        "sentences": [{"text": s.text, "kind": s.kind, "verdict": s.verdict} for s in support.sentences],
    }
    return Graded(
        {**graded.metrics, **agreement(question, graded, support)}, {**graded.decided, "support": checked}
    )


def agreement(question: Question, graded: Graded, support: Support) -> dict[str, float]:
    """The support check against the grades, for one question (the ``check`` and ``weak`` metrics of
    the module docstring)."""
    found: dict[str, float] = {}
    outcome = graded.decided.get("outcome", "")
    if not graded.decided.get("refused", False):
        flagged = support.line in FLAGGED
        wrong = outcome not in CORRECT_OUTCOMES
        uncited = wrong or outcome == "correct, not cited right"
        if flagged:
            found["check precision"] = float(wrong)
            found["check precision (cites)"] = float(uncited)
        if wrong:
            found["check recall"] = float(flagged)
        if uncited:
            found["check recall (cites)"] = float(flagged)
    nothing = question.refusal or graded.metrics.get("in context", 0.0) == 0.0
    if support.weak:
        found["weak precision"] = float(nothing)
    if nothing:
        found["weak recall"] = float(support.weak)
    return found
