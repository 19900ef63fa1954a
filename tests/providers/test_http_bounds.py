"""The bounds of a streamed reply at the HTTP layer, against real servers on 127.0.0.1: a line (or SSE
event) is at most ``MAX_LINE_BYTES``, text must keep coming within the timeout, an error page is read
only in part, and a timeout message names the setting that raises it."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from clear_rag.errors import ConfigError, ModelError
from clear_rag.providers import Message
from clear_rag.providers.base import close_provider
from clear_rag.providers.ollama import OllamaChat
from clear_rag.providers.openai_compat import OpenAIChat
from clear_rag.providers.select import DEFAULT_TIMEOUT, make_chat, make_embedder, server_timeout
from clear_rag.providers.streaming import MAX_LINE_BYTES
from tests.providers.fake_servers import FakeServer, Reply, ndjson_reply

QUESTION = [Message("user", "When do pads need replacing?")]
TOKEN = b'{"message": {"role": "assistant", "content": "pad "}, "done": false}\n'


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def endless(chunk: bytes, content_type: str = "application/x-ndjson", delay: float = 0.0) -> Reply:
    return Reply(endless=chunk, content_type=content_type, chunk_delay=delay)


def test_a_line_without_end_is_refused_at_the_cap_and_the_client_hangs_up(server: FakeServer) -> None:
    server.route("POST", "/api/chat", endless(b"x" * 65536))
    with OllamaChat("llama3.2", base_url=server.url) as chat, pytest.raises(ModelError) as caught:
        list(chat.stream(QUESTION))
    assert str(caught.value) == (
        f"{server.url}/api/chat: the reply holds a line of more than {MAX_LINE_BYTES:,} bytes, where a "
        "model server streams one short line per piece of text; it was not read further. "
        "Check that this URL is a model server's, and the server's log"
    )
    assert server.hung_up.wait(5)


def test_one_huge_complete_line_is_refused_too(server: FakeServer) -> None:
    huge = b'{"message": {"content": "' + b"x" * MAX_LINE_BYTES + b'"}, "done": false}\n'
    server.route("POST", "/api/chat", Reply(chunks=[huge], content_type="application/x-ndjson"))
    with (
        OllamaChat("llama3.2", base_url=server.url) as chat,
        pytest.raises(ModelError, match="a line of more"),
    ):
        list(chat.stream(QUESTION))


def test_a_line_just_under_the_cap_still_streams(server: FakeServer) -> None:
    """1 MB tokens pass this layer; the planner's max_answer_chars is what stops them."""
    token = "x" * 1_000_000
    server.route("POST", "/api/chat", ndjson_reply([{"message": {"content": token}, "done": True}]))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        assert list(chat.stream(QUESTION)) == [token]


def test_sse_data_lines_without_the_blank_line_that_ends_an_event_are_capped(server: FakeServer) -> None:
    server.route(
        "POST", "/v1/chat/completions", endless(b"data: " + b"y" * 60000 + b"\n", "text/event-stream")
    )
    with OpenAIChat("qwen", base_url=server.url) as chat, pytest.raises(ModelError, match="an event of more"):
        list(chat.stream(QUESTION))


def test_a_whole_json_reply_is_capped_as_well(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", endless(b" " * 65536, "application/json"))
    with OpenAIChat("qwen", base_url=server.url) as chat, pytest.raises(ModelError, match="a body of more"):
        list(chat.stream(QUESTION))


def test_a_stalled_server_fails_within_the_timeout_naming_the_setting(server: FakeServer) -> None:
    release = threading.Event()
    stalled = ndjson_reply([{"message": {"content": "Pads"}, "done": False}, {"done": True}], gate=release)
    server.route("POST", "/api/chat", stalled)
    try:
        with OllamaChat("llama3.2", base_url=server.url, timeout=0.2, timeout_option="--timeout") as chat:
            pieces = chat.stream(QUESTION)
            assert next(pieces) == "Pads"
            with pytest.raises(ModelError) as caught:
                next(pieces)
    finally:
        release.set()
    assert str(caught.value) == (
        f"{server.url}/api/chat: did not answer within 0.2 s (--timeout). Raise --timeout (a model's first "
        "call loads it into memory, which can take a minute), or check that the server is not stuck"
    )


@pytest.mark.parametrize(
    "trickle",
    [b" ", b"\n", TOKEN.replace(b"pad ", b"")],
    ids=["bytes-without-a-line", "blank-lines", "lines-without-text"],
)
def test_a_server_that_keeps_sending_but_no_text_times_out(server: FakeServer, trickle: bytes) -> None:
    """Each read gets bytes within the timeout, so only the pace of the text can end this stream."""
    server.route("POST", "/api/chat", endless(trickle, delay=0.02))
    with (
        OllamaChat("llama3.2", base_url=server.url, timeout=0.3) as chat,
        pytest.raises(ModelError, match=r"did not answer within timeout=0.3 s"),
    ):
        list(chat.stream(QUESTION))


def test_text_that_keeps_coming_is_not_cut_by_the_timeout(server: FakeServer) -> None:
    """The timeout is between pieces, not for the whole answer: ten pieces 0.1 s apart outlast 0.5 s."""
    lines = [{"message": {"content": f"{i} "}, "done": False} for i in range(10)]
    server.route("POST", "/api/chat", ndjson_reply([*lines, {"done": True}], chunk_delay=0.1))
    with OllamaChat("llama3.2", base_url=server.url, timeout=0.5) as chat:
        assert "".join(chat.stream(QUESTION)) == "0 1 2 3 4 5 6 7 8 9 "


def test_an_error_page_is_read_only_in_part(server: FakeServer) -> None:
    server.route("POST", "/api/chat", Reply(status=500, chunks=[b"boom "], endless=b"z" * 65536))
    with OllamaChat("llama3.2", base_url=server.url) as chat, pytest.raises(ModelError) as caught:
        list(chat.stream(QUESTION))
    assert f"{server.url}/api/chat: Ollama answered HTTP 500: boom zzz" in str(caught.value)
    assert server.hung_up.wait(5)


def test_an_openai_stream_of_events_without_text_times_out(server: FakeServer) -> None:
    server.route("POST", "/v1/chat/completions", endless(b": ping\n\n", "text/event-stream", delay=0.02))
    with (
        OpenAIChat("qwen", base_url=server.url, timeout=0.3) as chat,
        pytest.raises(ModelError, match=r"did not answer within timeout=0.3 s"),
    ):
        list(chat.stream(QUESTION))


# --- the timeout as the CLI and the environment set it ------------------------------------------------


def test_providers_built_by_name_take_the_timeout_and_name_the_option(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("CLEAR_RAG_TIMEOUT", raising=False)
    chat = make_chat("ollama:llama3.2", timeout=7)
    embedder = make_embedder("ollama:nomic-embed-text")
    openai = make_chat("openai:qwen", timeout=9.5)
    assert (chat.timeout, chat.timeout_option) == (7.0, "--timeout")  # type: ignore[attr-defined]
    assert embedder.timeout == DEFAULT_TIMEOUT  # type: ignore[attr-defined]
    assert openai.timeout == 9.5  # type: ignore[attr-defined]
    for provider in (chat, embedder, openai):
        close_provider(provider)


def test_the_timeout_comes_from_the_environment_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLEAR_RAG_TIMEOUT", "45")
    assert server_timeout() == 45.0
    assert server_timeout(3) == 3.0


@pytest.mark.parametrize(
    ("given", "env", "named"), [(0, "", "--timeout=0"), (None, "soon", "CLEAR_RAG_TIMEOUT")]
)
def test_a_bad_timeout_names_where_it_came_from(
    monkeypatch: pytest.MonkeyPatch, given: float | None, env: str, named: str
) -> None:
    monkeypatch.setenv("CLEAR_RAG_TIMEOUT", env)
    with pytest.raises(ConfigError, match=f"{named}.*is not a number of seconds above 0"):
        server_timeout(given)
