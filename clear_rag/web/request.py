"""A chat request's body, read by its model (``ChatRequest``) before anything runs: every fault is a
``BadRequest`` saying what to send.

The body arrives whole and within its size (``clear_rag.web.guard``); here it must be UTF-8, nest no
deeper than ``MAX_JSON_DEPTH`` (checked on the bytes, before ``json.loads``: a config nested 1,000 or
100,000 levels deep was a ``RecursionError`` and a bare 500), and hold text only: a lone surrogate
(``"\\ud800"``, half of a pair that JSON allows alone) passed the checks, and the answer's stream then
failed to encode and ended empty with a 200.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field, StringConstraints

from clear_rag.errors import ConfigError
from clear_rag.validation import Bool, Record, Rule, Text, keys_of, parsed

MAX_QUESTION_CHARS = 4000  # about a page: a question, not a document pasted into the box
# {"config": {"chunking": {"parsers": {"pdf": "flat"}}}} is four deep, the deepest a chat request needs
MAX_JSON_DEPTH = 8
EXAMPLE = 'Send JSON such as {"question": "What does the warranty cover?"}'
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*+"')  # a JSON string, whose brackets are text, not nesting
_BRACKET = re.compile(rb"[\[\]{}]")
_NOT_TEXT = re.compile("[\0\ud800-\udfff]")  # NUL, and the surrogates, which UTF-8 cannot carry


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status, self.message = status, message


class ChatRequest(Record):
    """One question as the page sends it: the question (stripped), the conversation it goes on, the
    overrides of the server's settings (``null``: none) and whether a model answers it."""

    unknown = keys_of("chat request")
    rules: ClassVar[Mapping[str, Rule]] = {
        "": Rule(EXAMPLE, "is not a JSON object"),
        "question": Rule(EXAMPLE),
        "conversation": Rule("Send the id a done event gave, or null", "must be a conversation id"),
        "config": Rule('Send settings such as {"top_k": 5}', "must be an object of settings"),
        "generate": Rule("Send true to answer, false to retrieve only", "must be true or false"),
    }
    question: Annotated[Text, StringConstraints(strip_whitespace=True, min_length=1)]
    conversation: Annotated[Text, Field(min_length=1)] | None = None
    config: Annotated[dict[str, Any], BeforeValidator(lambda v: {} if v is None else v)] = Field(
        default_factory=dict
    )
    generate: Bool = True


def chat_request(body: bytes) -> ChatRequest:
    """The request ``body`` checked field by field."""
    data = _parsed(body)
    _check_text(data, "request")  # first: a message that quotes a bad key must itself be text
    try:
        request = parsed(ChatRequest, data, "request")
    except ConfigError as err:
        raise BadRequest(422, str(err)) from None
    if len(request.question) > MAX_QUESTION_CHARS:
        raise BadRequest(
            413,
            f"request: question: holds {len(request.question):,} characters, more than the "
            f"{MAX_QUESTION_CHARS:,} a question may. Ask a shorter question; to search a document, "
            "ingest it (clear-rag ingest PATH)",
        )
    return request


def _parsed(body: bytes) -> Any:
    """The body as JSON: UTF-8 (as RFC 8259 requires between systems), nested at most
    ``MAX_JSON_DEPTH`` deep, then parsed."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BadRequest(
            400,
            f"the request body is not UTF-8 (byte 0x{body[err.start]:02x} at offset {err.start:,}). "
            "Send JSON encoded as UTF-8",
        ) from None
    if _deeper_than(body, MAX_JSON_DEPTH):
        raise BadRequest(
            400,
            f"the request body nests arrays or objects more than {MAX_JSON_DEPTH} deep; refused before "
            "parsing. A chat request needs four levels at most: the body, config, chunking, parsers",
        )
    try:
        return json.loads(text)
    except ValueError as err:
        raise BadRequest(400, f"the request body is not JSON ({err}). {EXAMPLE}") from None


def _deeper_than(body: bytes, limit: int) -> bool:
    """Whether ``body`` opens more than ``limit`` arrays or objects inside one another, counted over
    its brackets outside strings; it stops at the first that goes past, so a deep body costs little."""
    depth = 0
    for found in _BRACKET.finditer(_STRING.sub(b"", body)):
        depth += 1 if found[0] in b"[{" else -1
        if depth > limit:
            return True
    return False


def _check_text(data: Any, where: str) -> None:
    """Every string of ``data`` (keys too) is text that UTF-8 can carry, without NUL; the first that
    is not is a ``BadRequest`` naming its field and the character."""
    if isinstance(data, dict):
        for key, value in data.items():
            _check_text(key, f"{where}: a key")
            _check_text(value, f"{where}: {key}")
    elif isinstance(data, list):
        for n, item in enumerate(data, 1):
            _check_text(item, f"{where}[{n}]")
    elif isinstance(data, str):
        found = _NOT_TEXT.search(data)
        if found is None:
            return
        bad = found[0]
        what = "a NUL character" if bad == "\0" else f"a lone surrogate (\\u{ord(bad):04x})"
        raise BadRequest(
            422,
            f"{where}: holds {what} at character {found.start() + 1:,}, which is not text. Send text "
            "only: a character beyond U+FFFF is escaped in JSON as a pair of surrogates, never one alone",
        )
