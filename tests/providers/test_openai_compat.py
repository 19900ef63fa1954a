"""OpenAIChat against a real HTTP server on 127.0.0.1 that streams OpenAI-style Server-Sent Events."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest

from clear_rag.errors import ModelError
from clear_rag.providers import ChatModel, Message, cite, describe
from clear_rag.providers.openai_compat import OpenAIChat
from tests.providers.fake_servers import FakeServer, Reply, json_reply, sse_reply, text_reply, unused_url

QUESTION = [Message("user", "What pressure for gravel tyres?")]
PATH = "/v1/chat/completions"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def chunk(
    content: str | None = None, finish: str | None = None, role: str | None = None
) -> dict[str, object]:
    delta: dict[str, object] = {} if content is None else {"content": content}
    if role:
        delta["role"] = role
    choice = {"index": 0, "delta": delta, "finish_reason": finish}
    return {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "qwen2.5", "choices": [choice]}


def answer(*pieces: str) -> list[object]:
    """A stream as llama.cpp sends it: a role-only delta, the pieces, a finish delta, then [DONE]."""
    return [chunk(role="assistant"), *(chunk(p) for p in pieces), chunk(finish="stop"), "[DONE]"]


def test_stream_yields_each_piece_before_the_server_sends_the_last(server: FakeServer) -> None:
    gate = threading.Event()
    reply = sse_reply(answer("Run", " 30", " psi."), chunk_delay=0.02, gate=gate)
    server.route("POST", PATH, reply)
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        chat_protocol: ChatModel = chat
        pieces = chat_protocol.stream(QUESTION, temperature=0.0, max_tokens=128, seed=3)
        first, second, third = next(pieces), next(pieces), next(pieces)
        assert not reply.sent_last.is_set()  # the pieces arrived while [DONE] was held back
        gate.set()
        assert [first, second, third, *pieces] == ["Run", " 30", " psi."]
    request = server.seen(PATH)[0]
    assert request.json() == {
        "model": "qwen2.5",
        "messages": [{"role": "user", "content": "What pressure for gravel tyres?"}],
        "stream": True,
        "temperature": 0.0,
        "max_tokens": 128,
        "seed": 3,
    }
    assert "authorization" not in {k.lower() for k in request.headers}


def test_api_key_is_a_bearer_token_and_base_url_may_end_in_v1(server: FakeServer) -> None:
    server.route("POST", PATH, sse_reply(answer("ok")))
    with OpenAIChat("local", base_url=f"{server.url}/v1/", api_key="sk-local") as chat:
        assert list(chat.stream(QUESTION)) == ["ok"]
        assert describe(chat) == "openai-compat/local@unknown"
    assert server.seen(PATH)[0].headers["Authorization"] == "Bearer sk-local"


def test_events_without_choices_or_content_and_multiline_data_are_handled(server: FakeServer) -> None:
    usage = {"id": "chatcmpl-1", "choices": [], "usage": {"prompt_tokens": 9}}
    split = b'data: {"choices": [{"delta":\ndata: {"content": "two lines"}}]}\n\n'
    reply = sse_reply([": keep-alive comment", usage, chunk("a\u2028b"), "[DONE]"])
    reply.chunks = [b": keep-alive\n\n", *reply.chunks[1:3], split, reply.chunks[3]]
    server.route("POST", PATH, reply)
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        assert list(chat.stream(QUESTION)) == ["a\u2028b", "two lines"]


def test_a_finish_reason_without_done_is_complete_but_a_cut_off_stream_is_an_error(
    server: FakeServer,
) -> None:
    server.route("POST", PATH, sse_reply(answer("fine")[:-1]), sse_reply(answer("cut")[:2]))
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        assert list(chat.stream(QUESTION)) == ["fine"]
        with pytest.raises(ModelError, match=r"stopped before data: \[DONE\]"):
            list(chat.stream(QUESTION))


def test_a_server_that_does_not_stream_still_answers(server: FakeServer) -> None:
    whole = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "30 psi."}}]}
    server.route("POST", PATH, json_reply(whole))
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        assert list(chat.stream(QUESTION)) == ["30 psi."]


def test_closing_the_stream_early_closes_the_connection(server: FakeServer) -> None:
    server.route("POST", PATH, sse_reply(answer("one", " two"), hang_up_after=2))
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        pieces = chat.stream(QUESTION)
        assert next(pieces) == "one"
        pieces.close()
        assert server.hung_up.wait(2.0)


def test_unknown_options_fail_at_the_call() -> None:
    with OpenAIChat("qwen2.5", base_url=unused_url()) as chat:
        with pytest.raises(ValueError, match=r"\['num_ctx'\]"):
            chat.stream(QUESTION, num_ctx=4096)
        with pytest.raises(TypeError, match="Message"):
            chat.stream(["hi"])  # type: ignore[list-item]


# --- errors a person can act on ------------------------------------------------------------------


def test_no_server_says_the_url() -> None:
    url = unused_url()
    with OpenAIChat("qwen2.5", base_url=url) as chat, pytest.raises(ModelError) as caught:
        list(chat.stream(QUESTION))
    assert f"{url}{PATH}: no server answers there" in str(caught.value)
    assert "OpenAI-compatible server" in str(caught.value)


def test_an_unknown_model_names_it_and_where_to_look(server: FakeServer) -> None:
    vllm_404 = {"object": "error", "message": "The model `qwen9` does not exist.", "type": "NotFoundError"}
    server.route("POST", PATH, json_reply(vllm_404, status=404))
    with OpenAIChat("qwen9", base_url=server.url) as chat, pytest.raises(ModelError) as caught:
        list(chat.stream(QUESTION))
    message = str(caught.value)
    assert "'qwen9'" in message and "does not exist" in message and f"{server.url}/v1/models" in message


def test_a_refused_key_says_api_key(server: FakeServer) -> None:
    server.route("POST", PATH, json_reply({"error": {"message": "Invalid API Key"}}, status=401))
    with (
        OpenAIChat("qwen2.5", base_url=server.url, api_key="wrong") as chat,
        pytest.raises(ModelError, match=r"Invalid API Key.*api_key="),
    ):
        list(chat.stream(QUESTION))


def test_a_slow_server_names_the_timeout_and_the_setting(server: FakeServer) -> None:
    server.route(
        "POST", PATH, Reply(delay=3.0, chunks=[b"data: [DONE]\n\n"], content_type="text/event-stream")
    )
    with OpenAIChat("qwen2.5", base_url=server.url, timeout=0.2) as chat, pytest.raises(ModelError) as caught:
        list(chat.stream(QUESTION))
    assert "timeout=0.2 s" in str(caught.value) and "larger timeout= to OpenAIChat" in str(caught.value)


@pytest.mark.parametrize(
    ("events", "field"),
    [
        (["{not json"], "data"),
        ([{"object": "chat.completion.chunk"}], "choices"),
        ([{"choices": [{"index": 0}]}], r"choices\[0\].delta"),
        ([{"choices": [{"delta": {"content": 7}}]}], r"choices\[0\].delta.content"),
    ],
)
def test_a_malformed_event_names_the_field(server: FakeServer, events: list[object], field: str) -> None:
    server.route("POST", PATH, sse_reply([*events, "[DONE]"]))
    with (
        OpenAIChat("qwen2.5", base_url=server.url) as chat,
        pytest.raises(ModelError, match=rf"{PATH}: {field}:"),
    ):
        list(chat.stream(QUESTION))


def test_an_error_event_mid_stream_is_reported(server: FakeServer) -> None:
    server.route("POST", PATH, sse_reply([chunk("par"), {"error": {"message": "context overflow"}}]))
    with (
        OpenAIChat("qwen2.5", base_url=server.url) as chat,
        pytest.raises(ModelError, match="failed mid-answer: context overflow"),
    ):
        list(chat.stream(QUESTION))


def test_a_non_json_error_page_is_quoted(server: FakeServer) -> None:
    server.route("POST", PATH, text_reply("Bad Gateway", 502))
    with (
        OpenAIChat("qwen2.5", base_url=server.url) as chat,
        pytest.raises(ModelError, match="HTTP 502: Bad Gateway"),
    ):
        list(chat.stream(QUESTION))


def test_fingerprint_names_the_model_id_the_server_and_the_version() -> None:
    with (
        OpenAIChat("qwen2.5", base_url="http://127.0.0.1:1234/v1") as chat,
        OpenAIChat("qwen2.5", base_url="http://127.0.0.1:8080", version="q4_k_m") as pinned,
    ):
        assert chat.fingerprint == "openai-compat:qwen2.5@http://127.0.0.1:1234#unknown"
        assert pinned.fingerprint == "openai-compat:qwen2.5@http://127.0.0.1:8080#q4_k_m"


def test_cite_asks_for_the_schema_and_the_reply_comes_back_as_cited_text(server: FakeServer) -> None:
    reply = json.dumps(
        {"answer": [{"text": "Run 30 psi", "sources": [1]}, {"text": "Or 35.", "sources": [9]}]}
    )
    pieces = [reply[i : i + 8] for i in range(0, len(reply), 8)]
    server.route("POST", PATH, sse_reply(answer(*pieces)))
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        text = "".join(chat.stream(QUESTION, temperature=0.0, cite=2))
    assert text == "Run 30 psi. [1] Or 35. [9]"  # [9] as written, for the planner's check to report
    body = server.seen(PATH)[0].json()
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "cited_answer", "strict": True, "schema": cite.schema(2)},
    }
    assert "cite" not in body and body["temperature"] == 0.0


def test_cite_on_a_server_that_ignores_it_passes_its_text_on(server: FakeServer) -> None:
    server.route("POST", PATH, sse_reply(answer("Run", " 30 psi [1].")))
    with OpenAIChat("qwen2.5", base_url=server.url) as chat:
        assert "".join(chat.stream(QUESTION, cite=2)) == "Run 30 psi [1]."
