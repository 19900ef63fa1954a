"""The extractive answerer on the lexical fake: every ``[n]`` follows a sentence of source n, it refuses
exactly when the support check says retrieval looks weak, and it speaks the chat-model protocol (the
answer prompt read back, the rewrite left alone, phrasings refused, its name in the trace)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clear_rag.errors import ModelError
from clear_rag.generate.events import Event
from clear_rag.generate.extractive import MAX_SENTENCES, ExtractiveAnswerer
from clear_rag.generate.planner import Planner
from clear_rag.generate.prompt import (
    REFUSAL,
    GivenSource,
    answer_messages,
    is_refusal,
    read_answer_messages,
)
from clear_rag.generate.queries import EXPAND_SYSTEM, rewrite
from clear_rag.generate.sentences import sentence_spans
from clear_rag.generate.support import Source, SupportChecker
from clear_rag.providers.base import Message
from clear_rag.providers.fake import LexicalReranker
from clear_rag.providers.select import make_chat
from clear_rag.store import Store
from clear_rag.trace import render
from tests.conftest import toy_pipeline

WORDS = ["brake", "pad", "tyre", "chain", "saddle", "gear", "wheel", "spoke", "lever", "cable", "fork", "rim"]
MARKER = re.compile(r" \[(\d+)\]$")


def _answerer() -> ExtractiveAnswerer:
    return ExtractiveAnswerer(SupportChecker(LexicalReranker()))


def _block(sources: list[str]) -> str:
    return "\n\n".join(f"[{n}] (doc-{n})\n{text}" for n, text in enumerate(sources, start=1))


sentence = st.lists(st.sampled_from(WORDS), min_size=2, max_size=7).map(
    lambda words: " ".join(words).capitalize() + "."
)
passage = st.lists(sentence, min_size=1, max_size=5).map(" ".join)
question = st.lists(st.sampled_from(WORDS), min_size=1, max_size=4).map(lambda w: " ".join(w) + "?")


@settings(max_examples=60, deadline=None)
@given(st.lists(passage, min_size=1, max_size=4), question)
def test_every_citation_follows_a_sentence_of_the_source_it_names(sources: list[str], asked: str) -> None:
    answer = "".join(_answerer().stream(answer_messages(asked, _block(sources))))
    if is_refusal(answer):
        return
    spans = sentence_spans(answer)
    assert 1 <= len(spans) <= MAX_SENTENCES
    for start, end in spans:  # the answer's sentences, as the support check cuts them
        said = answer[start:end]
        cited = MARKER.search(said)
        assert cited is not None, f"{said!r} ends without its [n]"
        number = int(cited.group(1))
        assert 1 <= number <= len(sources)
        quoted = said[: cited.start()]
        assert any(sources[number - 1][a:b] == quoted for a, b in sentence_spans(sources[number - 1]))


@settings(max_examples=60, deadline=None)
@given(st.lists(passage, min_size=1, max_size=4), question)
def test_it_refuses_exactly_when_the_check_says_retrieval_looks_weak(sources: list[str], asked: str) -> None:
    checker = SupportChecker(LexicalReranker())
    given_sources = [Source(n, f"c{n}", f"doc-{n}", 0, t) for n, t in enumerate(sources, start=1)]
    weak = checker.assess(asked, given_sources).weak
    answer = "".join(ExtractiveAnswerer(checker).stream(answer_messages(asked, _block(sources))))
    assert is_refusal(answer) == weak


def test_it_refuses_on_a_context_that_shares_no_word_with_the_question() -> None:
    messages = answer_messages(
        "what colour is the saddle?", _block(["Brake pads wear out.", "Chains stretch."])
    )
    assert "".join(_answerer().stream(messages)) == REFUSAL


def test_it_answers_with_the_sentence_that_holds_the_question_and_cites_it() -> None:
    sources = ["Tyres hold air. Road tyres take 80 to 100 psi.", "Brake pads need replacing at 1.5 mm."]
    answer = "".join(
        _answerer().stream(answer_messages("When do brake pads need replacing?", _block(sources)))
    )
    assert answer.startswith("Brake pads need replacing at 1.5 mm. [2]")


@given(st.lists(st.text(min_size=1, max_size=60).filter(lambda t: "\n\n[" not in t), max_size=4), st.text())
def test_the_answer_prompt_reads_back_to_its_question_and_sources(texts: list[str], asked: str) -> None:
    read = read_answer_messages(answer_messages(asked, _block(texts)))
    assert read == (asked, [GivenSource(n, f"doc-{n}", t) for n, t in enumerate(texts, start=1)])


def test_other_prompts_are_not_answer_prompts() -> None:
    assert read_answer_messages([Message("user", "hello")]) is None
    assert read_answer_messages([Message("system", "x"), Message("user", "Sources:\n\n[2] (a)\nb")]) is None


def test_a_rewrite_gets_no_reply_and_falls_back_to_the_message_as_written() -> None:
    history = [Message("user", "What about pads?"), Message("assistant", "Pads wear. [1]")]
    found = rewrite(_answerer(), "and how thick?", history)
    assert (found.question, found.accepted) == ("and how thick?", False)


def test_asked_for_phrasings_it_says_it_writes_none() -> None:
    messages = [Message("system", EXPAND_SYSTEM.format(n=3)), Message("user", "brake pads")]
    with pytest.raises(ModelError, match="writes no phrasings"):
        _answerer().stream(messages)


def test_an_option_it_does_not_know_is_named() -> None:
    with pytest.raises(ValueError, match="top_p"):
        _answerer().stream(answer_messages("q", _block(["a b."])), top_p=0.5)


def test_make_chat_builds_it_over_the_reranker_it_names() -> None:
    chat = make_chat("extractive:lexical")
    assert isinstance(chat, ExtractiveAnswerer)
    assert chat.version == "1+lexical-reranker@overlap-1"
    assert chat.fingerprint.startswith("extractive:")


def test_its_fingerprint_changes_with_whatever_can_change_an_answer() -> None:
    one, other = _answerer(), ExtractiveAnswerer(SupportChecker(LexicalReranker()), max_sentences=1)
    assert one.fingerprint != other.fingerprint
    assert one.fingerprint == _answerer().fingerprint


def test_through_the_planner_the_trace_says_the_extractive_answerer_quoted(toy_store: Store) -> None:
    events: list[Event] = []
    planner = Planner(toy_pipeline(toy_store), _answerer(), support=SupportChecker(LexicalReranker()))
    trace = planner.run("Disc brakes need new pads at 1.5 mm", on_event=events.append)
    cited = next(e.data for e in events if e.kind == "citations")
    assert cited["answerer_kind"] == "extractive" and cited["answerer"].startswith("extractive@1+")
    assert trace.steps["answered by"] == {"answerer": cited["answerer"], "answerer_kind": "extractive"}
    assert trace.citations and trace.support is not None
    assert trace.support.line == "supported"
    assert all(s.kind == "supported" for s in trace.support.sentences)
    assert f"answered by: {cited['answerer']} (extractive)" in render(trace)
