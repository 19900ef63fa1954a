"""The support check on scripted answers over the toy store (the lexical fake as its model): each
sentence verdict, the answer's line, the weak-retrieval warning, and the same verdicts from a replay."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clear_rag.generate.events import Event
from clear_rag.generate.planner import Planner
from clear_rag.generate.prompt import REFUSAL
from clear_rag.generate.support import Calibration, SupportChecker
from clear_rag.generate.terms import content_terms, coverage, facts
from clear_rag.generate.verdicts import BOUNDARY, answer_line, judge, sentence_verdict, supports
from clear_rag.providers.fake import LexicalReranker, ScriptedChatModel
from clear_rag.store import Store
from clear_rag.trace import from_json, to_json
from clear_rag.types import Evidence, SentenceSupport, Support, Trace
from clear_rag.web.replay import replay_events
from tests.conftest import toy_pipeline

PADS = "Disc brakes need new pads at 1.5 mm"  # most of its words are one sentence of docs/a.md
NOWHERE = "what colour is the saddle of the tandem"  # no document holds these words


def _ask(store: Store, question: str, answer: str, **changes: Any) -> tuple[Trace, list[Event]]:
    chat = ScriptedChatModel()
    chat.enqueue(answer)
    events: list[Event] = []
    planner = Planner(toy_pipeline(store, **changes), chat, support=SupportChecker(LexicalReranker()))
    return planner.run(question, on_event=events.append), events


def _number(trace: Trace, doc_id: str) -> int:
    """The ``[n]`` the model saw ``doc_id``'s passage under."""
    return next(p.number for p in trace.passages if p.doc_id == doc_id)


def _sentences(trace: Trace) -> list[tuple[str, str]]:
    assert trace.support is not None
    return [(s.kind, s.verdict) for s in trace.support.sentences]


def test_a_sentence_copied_from_one_passage_but_citing_another_is_miscited(toy_store: Store) -> None:
    first, _ = _ask(toy_store, PADS, "Pads.")
    pads, tyres = _number(first, "docs/a.md"), _number(first, "docs/b.txt")
    trace, _ = _ask(toy_store, PADS, f"Tyre pressure for road bikes is 80 to 100 psi [{pads}].")
    assert _sentences(trace) == [("miscited", f"cited [{pads}] but supported by [{tyres}]")]
    assert trace.support is not None and trace.support.line == "the model ignored it"
    assert trace.support.reason == f"sentence 1 cites [{pads}] but [{tyres}] supports it"


def test_a_sentence_in_no_passage_is_supported_by_none(toy_store: Store) -> None:
    trace, _ = _ask(toy_store, PADS, "Disc brakes need new pads at 1.5 mm [1]. Saddles are made of leather.")
    pads = _number(trace, "docs/a.md")
    assert _sentences(trace) == [
        ("supported", f"supported by [{pads}]"),
        ("unsupported", "supported by no passage"),
    ]
    assert trace.support is not None and trace.support.line == "the model ignored it"
    assert trace.support.reason.startswith("sentence 2 is supported by no passage")


def test_a_wrong_number_is_not_supported_however_alike_the_rest(toy_store: Store) -> None:
    trace, _ = _ask(toy_store, PADS, "Disc brakes need new pads at 2.5 mm [1].")
    assert _sentences(trace) == [("cited, unsupported", "cited [1], not supported by it")]
    assert trace.support is not None
    (evidence,) = [e for e in trace.support.sentences[0].evidence if e.number == 1]
    assert evidence.missing == ("2",) and not evidence.supports


def test_a_refusal_is_refused(toy_store: Store) -> None:
    trace, events = _ask(toy_store, PADS, REFUSAL)
    assert trace.support is not None and trace.support.line == "refused" and trace.support.sentences == ()
    pads = _number(trace, "docs/a.md")
    assert (
        trace.support.reason
        == f"the answer is a refusal, although [{pads}] looks like it answers the question"
    )
    assert [e.kind for e in events][-2:] == ["citations", "support"]


def test_a_correct_answer_citing_two_passages_is_supported(toy_store: Store) -> None:
    question = "disc brakes need new pads, and road bikes tyre pressure"  # half its words in one sentence
    first, _ = _ask(toy_store, question, "Pads.")
    pads, tyres = _number(first, "docs/a.md"), _number(first, "docs/b.txt")
    answer = (
        f"Disc brakes need new pads at 1.5 mm [{pads}]. "
        + f"Tyre pressure for road bikes is 80 to 100 psi [{tyres}]."
    )
    trace, _ = _ask(toy_store, question, answer)
    assert _sentences(trace) == [
        ("supported", f"supported by [{pads}]"),
        ("supported", f"supported by [{tyres}]"),
    ]
    assert trace.support is not None and trace.support.line == "supported" and not trace.support.weak
    assert trace.support.reason == "every sentence is supported by a passage it cites"


def test_retrieval_that_never_found_the_passage_against_a_passage_the_answer_ignored(
    toy_store: Store,
) -> None:
    missed, events = _ask(toy_store, NOWHERE, "The saddle is red [1].")
    assert missed.support is not None and missed.support.weak
    assert missed.support.line == "retrieval missed it"
    assert missed.support.reason.startswith("no passage of the context looks like it answers the question")
    (context,) = [e.data for e in events if e.kind == "context"]
    assert context["retrieval"]["weak"] is True  # known before the answer, so Retrieve only shows it

    first, _ = _ask(toy_store, PADS, "Pads.")
    tyres, pads = _number(first, "docs/b.txt"), _number(first, "docs/a.md")
    ignored, _ = _ask(toy_store, PADS, f"Tyre pressure for road bikes is 80 to 100 psi [{tyres}].")
    assert ignored.support is not None and not ignored.support.weak
    assert _sentences(ignored) == [("supported", f"supported by [{tyres}]")]
    assert ignored.support.line == "the model ignored it"
    assert ignored.support.reason == f"[{pads}] looks like it answers the question; the answer uses [{tyres}]"


def test_a_true_sentence_from_the_wrong_part_of_the_right_passage_does_not_answer(toy_store: Store) -> None:
    first, _ = _ask(toy_store, PADS, "Pads.")
    pads = _number(first, "docs/a.md")
    trace, _ = _ask(toy_store, PADS, f"Brakes [{pads}].")  # the passage's heading: true, and not the answer
    assert _sentences(trace) == [("supported", f"supported by [{pads}]")]
    assert trace.support is not None and trace.support.line == "the model ignored it"
    assert (
        trace.support.reason
        == f"[{pads}] looks like it answers the question, in words the answer does not use"
    )


def test_retrieve_only_says_whether_retrieval_looks_weak_and_asks_no_model(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    planner = Planner(toy_pipeline(toy_store), chat, support=SupportChecker(LexicalReranker()))
    weak = planner.run(NOWHERE, generate=False)
    strong = planner.run(PADS, generate=False)
    assert chat.history == []
    assert weak.support is not None and weak.support.weak and weak.support.line == ""
    assert strong.support is not None and not strong.support.weak and strong.support.sentences == ()


def test_every_support_span_is_a_window_of_its_passage(toy_store: Store) -> None:
    trace, _ = _ask(toy_store, PADS, "Disc brakes need new pads at 1.5 mm [1]. Gravel tyres run lower.")
    assert trace.support is not None
    spans = {p.number: p for p in trace.passages}
    for e in [*trace.support.answers, *(e for s in trace.support.sentences for e in s.evidence)]:
        passage = spans[e.number]
        assert passage.doc_id == e.doc_id and passage.start <= e.start < e.end <= passage.end
        text = toy_store.document_text(e.doc_id)[e.start : e.end]
        assert text == text.strip() and text  # a trimmed sentence (or two) of the document
    for s in trace.support.sentences:
        assert trace.answer[s.start : s.end] == s.text


def test_replay_gives_identical_verdicts(toy_store: Store) -> None:
    trace, events = _ask(
        toy_store, PADS, "Tyre pressure for road bikes is 80 to 100 psi [1]. Saddles are soft."
    )
    assert trace.support is not None
    stored = from_json(to_json(trace))
    assert stored == trace
    assert stored.support is not None and judge(stored.support, stored.answer) == trace.support
    (live,) = [e.data for e in events if e.kind == "support"]
    (replayed,) = [e["data"] for e in replay_events(stored) if e["event"] == "support"]
    assert replayed == live == {**dataclasses.asdict(trace.support), "answer": trace.answer}
    (context,) = [e["data"] for e in replay_events(stored) if e["event"] == "context"]
    assert [p["text"] for p in context["passages"]] == [
        toy_store.document_text(p.doc_id)[p.start : p.end] for p in trace.passages
    ]
    assert context["messages"] == [dataclasses.asdict(m) for m in trace.messages]


def test_judging_follows_the_evidence_not_the_stored_decision(toy_store: Store) -> None:
    """A stored ``supports`` is decided again from the probability and the missing facts: a hand
    edit of the flag (or a change of rule) shows in a replay, rather than being trusted."""
    trace, _ = _ask(toy_store, PADS, "Disc brakes need new pads at 1.5 mm [1].")
    assert trace.support is not None and trace.support.line == "supported"
    flipped = dataclasses.replace(
        trace.support,
        sentences=tuple(
            dataclasses.replace(s, evidence=tuple(dataclasses.replace(e, supports=False) for e in s.evidence))
            for s in trace.support.sentences
        ),
    )
    assert judge(flipped, trace.answer) == trace.support


# -- the rules, on hand-built evidence ----------------------------------------------------------------


def _evidence(number: int, probability: float, missing: tuple[str, ...] = ()) -> Evidence:
    return Evidence(
        number, f"d#{number}", "d", 0, 1, 0.0, 0.5, probability, supports(probability, missing), missing
    )


def test_the_boundary_and_the_facts_decide_support() -> None:
    assert supports(BOUNDARY, ()) and not supports(BOUNDARY - 1e-9, ())
    assert not supports(0.99, ("2011",))


def test_sentence_verdicts() -> None:
    good, bad = _evidence(2, 0.9), _evidence(1, 0.1)
    assert sentence_verdict((2,), [bad, good], claim=True) == ("supported", "supported by [2]")
    assert sentence_verdict((1,), [bad, good], claim=True) == ("miscited", "cited [1] but supported by [2]")
    assert sentence_verdict((1,), [bad], claim=True) == (
        "cited, unsupported",
        "cited [1], not supported by it",
    )
    assert sentence_verdict((), [bad, good], claim=True) == ("supported", "supported by [2] (not cited)")
    assert sentence_verdict((), [bad], claim=True) == ("unsupported", "supported by no passage")
    assert sentence_verdict((), [], claim=False) == ("no claim", "no claim to check")


evidence_lists = st.lists(
    st.builds(_evidence, st.integers(1, 4), st.floats(0, 1), st.sampled_from([(), ("7",)])), max_size=4
)


@given(evidence_lists, st.lists(st.integers(1, 4), max_size=3, unique=True))
def test_a_verdict_says_supported_exactly_when_a_named_passage_supports(
    evidence: list[Evidence], cited: list[int]
) -> None:
    kind, _ = sentence_verdict(tuple(cited), evidence, claim=True)
    backing = {e.number for e in evidence if e.supports}
    named = set(cited) or backing
    assert (kind == "supported") == bool(named & backing)
    assert (kind == "unsupported") == (not cited and not backing)


def _support(answers: list[Evidence], kinds: list[str], used: list[int]) -> Support:
    sentences = tuple(
        SentenceSupport(0, 1, "a claim", (), (_evidence(n, 0.9),) if kind == "supported" else (), kind, kind)
        for kind, n in zip(kinds, used, strict=True)
    )
    return Support(answers=tuple(answers), sentences=sentences, weak=not any(e.supports for e in answers))


def test_the_answer_line_in_the_missions_words() -> None:
    answering = [_evidence(1, 0.9)]
    assert answer_line(_support(answering, ["supported"], [1]), "a claim")[0] == "supported"
    assert answer_line(_support(answering, ["supported"], [2]), "a claim")[0] == "the model ignored it"
    assert answer_line(_support(answering, ["unsupported"], [1]), "a claim")[0] == "the model ignored it"
    assert (
        answer_line(_support([_evidence(1, 0.2)], ["supported"], [1]), "a claim")[0] == "retrieval missed it"
    )
    assert answer_line(_support(answering, [], []), REFUSAL)[0] == "refused"
    assert answer_line(_support(answering, [], []), "")[0] == ""


def test_lexical_measures() -> None:
    assert content_terms("She completed her doctorate [2].") == ["complet", "doctor"]
    assert coverage(["complet", "doctor"], {"doctor"}) == 1 / 2 and coverage([], {"x"}) == 0.0
    assert facts("She completed her PhD in 2011 at Oxford [1].") == ["phd", "2011", "oxford"]
    assert facts("Oxford is where she studied.") == []  # the first word is capitalised anyway


@given(st.floats(-20, 20), st.floats(0, 1), st.floats(0, 5), st.floats(0, 5), st.floats(-5, 5))
def test_a_calibration_is_a_logistic_in_both_features(
    logit: float, cover: float, a: float, c: float, b: float
) -> None:
    calibration = Calibration(a, c, b)
    z = a * logit + c * cover + b
    assert calibration.probability(logit, cover) == pytest.approx(1 / (1 + math.exp(-z)))
    assert calibration.probability(logit + 1, cover) >= calibration.probability(logit, cover)
    assert Calibration.from_dict(calibration.to_dict()) == calibration
