"""Rewrite, expansion and HyDE on the scripted chat model; the rewrite guard in particular."""

from __future__ import annotations

import pytest

from clear_rag.generate.queries import check_rewrite, expand, hypothetical_passage, rewrite
from clear_rag.providers.base import Message
from clear_rag.providers.fake import ScriptedChatModel

HISTORY = [
    Message("user", "What does a Growth plan cost?"),
    Message("assistant", "The Growth plan costs 290 dollars per month and includes 20 million events."),
]


def test_first_turn_is_searched_as_asked_without_calling_the_model() -> None:
    chat = ScriptedChatModel()
    result = rewrite(chat, "What does a Growth plan cost?", [])
    assert (result.question, result.accepted) == ("What does a Growth plan cost?", False)
    assert chat.history == []


def test_a_follow_up_is_rewritten_into_a_standalone_question() -> None:
    chat = ScriptedChatModel()
    chat.enqueue("How many events per second does the Growth plan allow?")
    result = rewrite(chat, "and how fast can it send?", HISTORY)
    assert result.accepted and result.question == "How many events per second does the Growth plan allow?"
    prompt = chat.history[0].messages
    assert "Do NOT answer" in prompt[0].content and "and how fast can it send?" in prompt[1].content


def test_regression_an_answer_shaped_rewrite_is_refused() -> None:
    """The predecessor searched with whatever its rewrite prompt returned, which was often an answer."""
    chat = ScriptedChatModel()
    chat.enqueue("The Growth plan allows 500 events per second, and bursts are throttled.")
    result = rewrite(chat, "and how fast can it send?", HISTORY)
    assert not result.accepted
    assert result.question == "and how fast can it send?"  # fell back to the user's own words
    assert "not a question" in result.reason


@pytest.mark.parametrize(
    ("proposed", "reason"),
    [
        ("", "empty"),
        ("Yes, it can send 500 events per second?", "opens like an answer"),
        ("What is the rate? And the burst?", "more than one sentence"),
        ("What about " + "the Growth plan " * 40 + "?", "characters for a"),
        (
            "Is it true that the Growth plan costs 290 dollars per month and includes 20 million events?",
            "repeats the assistant's earlier answer",
        ),
    ],
)
def test_the_guard_names_what_is_wrong(proposed: str, reason: str) -> None:
    problem = check_rewrite(proposed, "and how fast can it send?", HISTORY)
    assert problem is not None and reason in problem


def test_expansion_keeps_phrasings_and_drops_answers() -> None:
    chat = ScriptedChatModel()
    chat.enqueue(
        "1. throughput limit of the Growth plan\n- events per second quota\n\nYes, it is 500 per second\n"
        "events per second quota\nrate limit for publishing events"
    )
    kept, dropped = expand(chat, "how fast can Growth send?", 3)
    assert kept == [
        "throughput limit of the Growth plan",
        "events per second quota",
        "rate limit for publishing events",
    ]
    assert dropped == ["Yes, it is 500 per second"]


def test_hyde_returns_the_models_passage() -> None:
    chat = ScriptedChatModel()
    chat.enqueue("The Growth plan permits up to 500 events per second.")
    assert hypothetical_passage(chat, "how fast?") == "The Growth plan permits up to 500 events per second."
    assert chat.history[0].options["temperature"] == 0.0
