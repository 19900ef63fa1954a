"""The citation constraint: the check of an answer, against texts the grammar allows and texts that break
it, and the planner asking for it (``constrained = true``) and recording a broken one."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clear_rag.generate.constrain import broken, problems
from clear_rag.generate.planner import Planner
from clear_rag.generate.prompt import REFUSAL
from clear_rag.providers import cite
from clear_rag.providers.fake import EchoChatModel, ScriptedChatModel
from clear_rag.store import Store
from tests.conftest import toy_pipeline

QUESTION = "when do disc brake pads need replacing?"


@pytest.mark.parametrize(
    "answer",
    [
        REFUSAL,
        f"  {REFUSAL}\n",
        "Pads wear. [1]",
        "Pads wear. [1] They squeal when worn! [2][3]",
        "Pads wear [1]. They squeal [2][3].",  # markers before the end mark read as cited too
        "Replace them at 1.5 mm, e.g. when they squeal. [3]",  # a decimal and an abbreviation
        "Pads wear. [1]\nRotors last longer. [2]",  # a line break between sentences
        "Pads wear. [1] then squeal. [2]",  # lower case after a marker: one sentence, cited at its end
    ],
)
def test_answers_that_keep_the_constraint(answer: str) -> None:
    assert problems(answer, 3) == [] and broken(answer, 3) is None


@pytest.mark.parametrize(
    ("answer", "sources", "found"),
    [
        ("", 3, ["it is empty"]),
        ("Pads wear. [7]", 4, ["it cites [7] of 4 sources"]),
        ("Pads wear. [0] [7] Rotors last. [9][7]", 1, ["it cites [0], [7] and [9] of 1 source"]),
        ("Pads wear. Rotors last longer. [1]", 3, ["sentence 1 cites nothing"]),
        ("Pads wear. [1] Rotors last longer.", 3, ["sentence 2 cites nothing"]),
        ("Pads wear [1] and rotors last longer.", 3, ["sentence 1 does not end with its citation"]),
        ("I can't answer that from the documents I have", 3, ["sentence 1 cites nothing"]),  # not exact
        ("Pads wear. [5] Rotors last.", 3, ["it cites [5] of 3 sources", "sentence 2 cites nothing"]),
    ],
)
def test_answers_that_break_it_and_how(answer: str, sources: int, found: list[str]) -> None:
    assert problems(answer, sources) == found
    assert broken(answer, sources) == f"the answer broke the citation constraint: {'; '.join(found)}"


def test_a_sentence_longer_than_the_splitters_limit_is_one_sentence() -> None:
    """The splitter cuts a span past 400 characters; the check must not, or the first piece is uncited."""
    assert problems("Pads " + "wear " * 200 + "out. [1]", 1) == []


# -- the grammar's language, against the check ---------------------------------------------------------


def grammar_pattern(sources: int) -> re.Pattern[str]:
    """``cite.grammar(sources)`` as a regular expression, rule for rule (llama.cpp does not say whether a
    grammar accepts a string without a model, so the property tests read this mirror of it)."""
    number = "|".join(str(n) for n in range(1, sources + 1))
    sentence = (
        r"[^\x00-\x20\x7f\[\](){}.,;:!?a-z]"
        rf"[^\x00-\x1f\x7f\[\].!?]{{0,{cite.MAX_BODY - 1}}}"
        rf"[.!?] (?:\[(?:{number})\]){{1,{cite.MAX_CITES}}}"
    )
    return re.compile(rf"{re.escape(REFUSAL)}|{sentence}(?: {sentence}){{0,{cite.MAX_SENTENCES - 1}}}")


def test_the_mirror_allows_and_refuses_what_the_grammar_does() -> None:
    pattern = grammar_pattern(3)
    assert pattern.fullmatch("Pads wear. [1] They squeal! [2][3]")
    assert pattern.fullmatch(REFUSAL)
    for wrong in ["Pads wear. [4]", "pads wear. [1]", "Pads wear [1].", "Pads 1.5 mm. [1]", "A. [1]\nB. [2]"]:
        assert not pattern.fullmatch(wrong), wrong
    assert not pattern.fullmatch(" ".join(["A. [1]"] * (cite.MAX_SENTENCES + 1)))


FIRST = st.characters(
    # the grammar's first-character class: no control character (DEL, 0x7f, is one), no space, bracket,
    # opening or inner punctuation, end mark or lower-case letter
    min_codepoint=0x21,
    max_codepoint=0x24F,
    exclude_characters="[](){}.,;:!?abcdefghijklmnopqrstuvwxyz\x7f",
)
BODY = st.characters(min_codepoint=0x20, max_codepoint=0x24F, exclude_characters="[].!?\x7f")


@st.composite
def sentence_parts(draw: st.DrawFn, sources: int) -> tuple[str, list[int]]:
    """One sentence the grammar allows, as its words and end mark, and its source numbers."""
    words = draw(FIRST) + draw(st.text(BODY, max_size=60)) + draw(st.sampled_from(".!?"))
    return words, draw(st.lists(st.integers(1, sources), min_size=1, max_size=cite.MAX_CITES))


@st.composite
def allowed(draw: st.DrawFn) -> tuple[int, list[tuple[str, list[int]]]]:
    sources = draw(st.integers(1, 12))
    parts = draw(st.lists(sentence_parts(sources), min_size=1, max_size=cite.MAX_SENTENCES))
    return sources, parts


def written(parts: list[tuple[str, list[int]]]) -> str:
    return " ".join(words + " " + "".join(f"[{n}]" for n in numbers) for words, numbers in parts)


@given(allowed())
def test_every_answer_the_grammar_allows_keeps_the_constraint(drawn: tuple[int, list[Any]]) -> None:
    sources, parts = drawn
    text = written(parts)
    assert grammar_pattern(sources).fullmatch(text)
    assert problems(text, sources) == []


@given(allowed(), st.data())
def test_a_number_outside_the_sources_is_always_caught(
    drawn: tuple[int, list[Any]], data: st.DataObject
) -> None:
    sources, parts = drawn
    at = data.draw(st.integers(0, len(parts) - 1))
    wrong = data.draw(st.sampled_from([0, *range(sources + 1, sources + 40)]))
    words, numbers = parts[at]
    parts[at] = (words, [*numbers[:-1], wrong])
    text = written(parts)
    assert not grammar_pattern(sources).fullmatch(text)
    assert f"it cites [{wrong}] of {sources} source" in "; ".join(problems(text, sources))


@given(allowed(), st.data())
def test_a_sentence_without_markers_is_always_caught(
    drawn: tuple[int, list[Any]], data: st.DataObject
) -> None:
    """An uncited sentence, anywhere: the one after it (if any) starts upper-case, and it ends in a word
    no abbreviation, so the splitter reads it as a sentence of its own, as the grammar does."""
    sources, parts = drawn
    at = data.draw(st.integers(0, len(parts)))
    uncited = data.draw(st.sampled_from(["Rotors last longer.", "Why?", "X wear done!"]))
    text = written(parts[:at])
    text = " ".join(t for t in [text, uncited, written(parts[at:])] if t)
    assert not grammar_pattern(sources).fullmatch(text)
    assert any("sentence" in p for p in problems(text, sources)), text


@given(st.lists(st.sampled_from(["Pads", " wear", ".", "!", " ", "[1]", "[2]", "[9]", "\n", "e.g.", "b"])))
def test_no_text_the_grammar_allows_is_called_broken(pieces: list[str]) -> None:
    text = "".join(pieces)
    if grammar_pattern(2).fullmatch(text):
        assert problems(text, 2) == []


# -- the planner --------------------------------------------------------------------------------------


def test_unconstrained_answers_are_asked_for_as_before(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm.")
    trace = Planner(toy_pipeline(toy_store), chat).run(QUESTION)
    assert chat.history[0].options == {"temperature": 0.0, "max_tokens": 256}
    assert "constraint" not in trace.steps


def test_a_constrained_answer_is_asked_to_cite_the_sources_it_has(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm. [1]")
    trace = Planner(toy_pipeline(toy_store, constrained=True), chat).run(QUESTION)
    assert len(trace.passages) >= 1
    assert chat.history[0].options == {"temperature": 0.0, "max_tokens": 256, "cite": len(trace.passages)}
    assert "constraint" not in trace.steps and [c.number for c in trace.citations] == [1]
    assert trace.config["constrained"] is True


def test_a_number_outside_the_sources_is_recorded_and_ignored(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm. [7]")
    trace = Planner(toy_pipeline(toy_store, constrained=True, top_k=2), chat).run(QUESTION)
    sources = len(trace.passages)
    assert sources < 7
    assert trace.steps["constraint"] == (
        f"the answer broke the citation constraint: it cites [7] of {sources} source{'s' * (sources != 1)}"
    )
    assert trace.answer == "Replace pads at 1.5 mm. [7]"  # kept as the model wrote it
    assert all(1 <= c.number <= sources for c in trace.citations)  # [7] cites nothing


def test_an_uncited_sentence_is_recorded(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm. [1] Rotors last longer.")
    trace = Planner(toy_pipeline(toy_store, constrained=True), chat).run(QUESTION)
    assert trace.steps["constraint"] == "the answer broke the citation constraint: sentence 2 cites nothing"


def test_the_refusal_keeps_the_constraint(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue(REFUSAL)
    trace = Planner(toy_pipeline(toy_store, constrained=True), chat).run(QUESTION)
    assert "constraint" not in trace.steps and "refusal" in trace.steps


def test_nothing_retrieved_is_the_refusal_without_asking(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    planner = Planner(toy_pipeline(toy_store, constrained=True, retrievers=("keyword",)), chat)
    trace = planner.run("zzzz qqqq")
    assert trace.answer == REFUSAL and chat.history == [] and "constraint" not in trace.steps


def test_the_echo_fake_takes_the_option_and_keeps_the_constraint(toy_store: Store) -> None:
    trace = Planner(toy_pipeline(toy_store, constrained=True), EchoChatModel()).run(QUESTION)
    assert trace.answer.endswith(" [1]") and "constraint" not in trace.steps


def test_empty_pieces_are_not_tokens(toy_store: Store) -> None:
    """A constrained HTTP model hands on "" while it reads a sentence; the page gets no empty tokens."""
    chat = ScriptedChatModel()
    chat.enqueue(["", "Replace pads at 1.5 mm. [1]", ""])
    events: list[Any] = []
    Planner(toy_pipeline(toy_store, constrained=True), chat).run(QUESTION, on_event=events.append)
    assert [e.data["text"] for e in events if e.kind == "token"] == ["Replace pads at 1.5 mm. [1]"]
