"""A chat request's body is read by its model (``clear_rag.web.request.ChatRequest``) and every fault in
it is one message naming the field, the value and what to send, with the status the server answers."""

from __future__ import annotations

import json

import pytest

from clear_rag.web.request import EXAMPLE, MAX_QUESTION_CHARS, BadRequest, ChatRequest, chat_request


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ('["question"]', f"request: is not a JSON object. {EXAMPLE}"),
        ('{"generate": false}', f"request: question: is missing. {EXAMPLE}"),
        ('{"question": 5}', f"request: question=5: has the wrong type. {EXAMPLE}"),
        ('{"question": " "}', f"request: question=' ': is empty. {EXAMPLE}"),
        (
            '{"questoin": "pads"}',
            "request: questoin: is not a chat request key. Did you mean 'question'? A chat request has "
            "question, conversation, config, generate",
        ),
        (
            '{"question": "pads", "generate": "no"}',
            "request: generate='no': must be true or false. Send true to answer, false to retrieve only",
        ),
        (
            '{"question": "pads", "conversation": 5}',
            "request: conversation=5: must be a conversation id. Send the id a done event gave, or null",
        ),
        (
            '{"question": "pads", "config": ["top_k"]}',
            "request: config=['top_k']: must be an object of settings. Send settings such as {\"top_k\": 5}",
        ),
    ],
)
def test_a_field_of_the_wrong_kind_is_a_422_naming_field_value_and_fix(body: str, message: str) -> None:
    with pytest.raises(BadRequest) as caught:
        chat_request(body.encode())
    assert (caught.value.status, caught.value.message) == (422, message)


def test_a_question_over_the_limit_is_a_413() -> None:
    with pytest.raises(BadRequest) as caught:
        chat_request(json.dumps({"question": "x" * (MAX_QUESTION_CHARS + 1)}).encode())
    assert caught.value.status == 413 and "4,001 characters, more than the 4,000" in caught.value.message


def test_a_well_formed_request_reads_with_its_defaults() -> None:
    body = {"question": "  brake pads ", "conversation": None, "config": None}
    assert chat_request(json.dumps(body).encode()) == ChatRequest(question="brake pads")
    asked = chat_request(b'{"question": "pads", "config": {"top_k": 3}, "generate": false}')
    assert (asked.config, asked.generate, asked.conversation) == ({"top_k": 3}, False, None)
