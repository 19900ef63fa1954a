"""Every chat reply the planner reads is bounded by ``answer_deadline_s`` and ``max_answer_chars``: on the
fakes, on a clock the test moves, and end to end against a real HTTP server streaming without end."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator, Sequence

import pytest

from clear_rag.config import PipelineConfig
from clear_rag.errors import ModelError
from clear_rag.generate.bounds import BoundedChat
from clear_rag.generate.events import Event
from clear_rag.generate.planner import Planner
from clear_rag.providers.base import Message
from clear_rag.providers.fake import ScriptedChatModel
from clear_rag.providers.ollama import OllamaChat
from clear_rag.store import Store
from tests.conftest import toy_pipeline
from tests.providers.fake_servers import FakeServer, Reply

QUESTION = "when do disc brake pads need replacing?"
MESSAGES = [Message("user", QUESTION)]


class Forever:
    """A chat model that never stops writing ``piece``; it counts the pieces and notes being closed."""

    name, version = "forever", "1"

    def __init__(self, piece: str = "word ") -> None:
        self.piece = piece
        self.pieces = 0
        self.closed = False

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        try:
            while True:
                self.pieces += 1
                yield self.piece
        finally:
            self.closed = True


class Clock:
    """A clock that moves ``step`` seconds each time it is read: time as the test decides it."""

    def __init__(self, step: float) -> None:
        self.ticks = itertools.count()
        self.step = step

    def __call__(self) -> float:
        return next(self.ticks) * self.step


# --- BoundedChat on its own -----------------------------------------------------------------------


def test_the_deadline_stops_the_stream_and_names_the_setting() -> None:
    chat = Forever()
    bounded = BoundedChat(chat, deadline_s=3, max_chars=10**6, reply="the answer", clock=Clock(1.0))
    pieces = bounded.stream(MESSAGES)
    # read at 0 (start), then 1, 2, 3 s: three pieces are within 3 s; the fourth, at 4 s, is not
    assert [next(pieces) for _ in range(3)] == ["word "] * 3
    with pytest.raises(ModelError) as caught:
        next(pieces)
    assert str(caught.value) == (
        "forever: answer_deadline_s=3: the answer was not finished within 3 s and was stopped. Raise "
        "answer_deadline_s in the pipeline config if the model is slow but working; one that never stops "
        "ignores max_tokens"
    )
    assert chat.closed and chat.pieces == 4


def test_the_size_cap_hands_on_nothing_past_it() -> None:
    chat = ScriptedChatModel()
    chat.enqueue(["a" * 8, "b" * 8, "c" * 8])
    bounded = BoundedChat(chat, deadline_s=60, max_chars=20, reply="the answer")
    received: list[str] = []
    with pytest.raises(ModelError) as caught:
        received.extend(bounded.stream(MESSAGES))
    assert received == ["a" * 8, "b" * 8]  # 16 characters; the next piece would make 24 > 20
    assert str(caught.value) == (
        "scripted-chat: max_answer_chars=20: the answer grew past 20 characters and was stopped there. "
        "Raise max_answer_chars in the pipeline config if replies this long are wanted; otherwise the "
        "model or its server ignores max_tokens"
    )


def test_a_reply_exactly_at_the_cap_is_whole() -> None:
    chat = ScriptedChatModel()
    chat.enqueue(["a" * 10, "b" * 10])
    assert "".join(BoundedChat(chat, deadline_s=60, max_chars=20).stream(MESSAGES)) == "a" * 10 + "b" * 10


def test_it_passes_on_the_models_name_and_options() -> None:
    chat = ScriptedChatModel()
    chat.enqueue("fine")
    bounded = BoundedChat(chat, deadline_s=1, max_chars=1)
    assert (bounded.name, bounded.version) == ("scripted-chat", "1")
    with pytest.raises(ModelError):  # "fine" is 4 characters
        list(bounded.stream(MESSAGES, temperature=0.0))
    assert chat.history[0].options == {"temperature": 0.0}


@pytest.mark.parametrize(("deadline", "size"), [(0, 10), (-1.0, 10), (1, 0), (1, True)])
def test_bad_bounds_are_refused(deadline: float, size: int) -> None:
    with pytest.raises(ValueError, match="is invalid"):
        BoundedChat(ScriptedChatModel(), deadline_s=deadline, max_chars=size)


# --- in the planner, on the fakes -----------------------------------------------------------------


def _run(
    store: Store, chat: object, **changes: object
) -> tuple[list[Event], pytest.ExceptionInfo[ModelError]]:
    events: list[Event] = []
    planner = Planner(toy_pipeline(store, **changes), chat)  # type: ignore[arg-type]
    with pytest.raises(ModelError) as caught:
        planner.run(QUESTION, on_event=events.append)
    return events, caught


def test_an_answer_past_max_answer_chars_ends_in_an_error_and_no_citations(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue(["Replace ", "pads " * 10])
    events, caught = _run(toy_store, chat, max_answer_chars=20)
    assert "max_answer_chars=20: the answer grew past 20 characters" in str(caught.value)
    assert [e.data["text"] for e in events if e.kind == "token"] == ["Replace "]
    assert "citations" not in [e.kind for e in events]  # a cut answer is never reported as complete


def test_a_model_that_never_stops_meets_the_deadline_and_is_closed(toy_store: Store) -> None:
    chat = Forever()
    events, caught = _run(toy_store, chat, answer_deadline_s=0.05, max_answer_chars=10**9)
    assert "answer_deadline_s=0.05: the answer was not finished within 0.05 s" in str(caught.value)
    assert chat.closed
    assert sum(e.kind == "token" for e in events) == chat.pieces - 1  # the late piece was not handed on


def test_the_steps_before_retrieval_are_bounded_too(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("x" * 50)  # the phrasings
    with pytest.raises(ModelError, match="the phrasings grew past 40 characters"):
        Planner(toy_pipeline(toy_store, expand=2, max_answer_chars=40), chat).run(QUESTION, generate=False)


def test_the_defaults_leave_a_normal_answer_alone(toy_store: Store) -> None:
    config = PipelineConfig()
    assert (config.answer_deadline_s, config.max_answer_chars) == (300.0, 20_000)
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm [1].")
    assert Planner(toy_pipeline(toy_store), chat).run(QUESTION).answer == "Replace pads at 1.5 mm [1]."


# --- in the planner, against a real server ----------------------------------------------------------


def _token_line(text: str) -> bytes:
    return json.dumps({"message": {"role": "assistant", "content": text}, "done": False}).encode() + b"\n"


@pytest.mark.parametrize(
    ("token", "changes", "expected"),
    [
        (
            "pad ",
            # the length bound out of reach, so that the deadline stops it however fast tokens come
            {"answer_deadline_s": 0.2, "max_answer_chars": 10**12},
            "answer_deadline_s=0.2: the answer was not finished within 0.2 s",
        ),
        ("x" * 1_000_000, {}, "max_answer_chars=20000: the answer grew past 20,000 characters"),
    ],
    ids=["endless-tokens", "1-MB-tokens"],
)
def test_a_server_streaming_without_end_is_stopped_and_hung_up_on(
    toy_store: Store, token: str, changes: dict[str, object], expected: str
) -> None:
    with FakeServer() as server:
        server.route(
            "POST", "/api/chat", Reply(endless=_token_line(token), content_type="application/x-ndjson")
        )
        with OllamaChat("llama3.2", base_url=server.url) as chat:
            events, caught = _run(toy_store, chat, **changes)
        assert str(caught.value).startswith(f"ollama/llama3.2: {expected}")
        assert server.hung_up.wait(5)  # the stream was closed: no more tokens are asked for
    assert "citations" not in [e.kind for e in events]
