"""OllamaEmbedder and OllamaChat against a real HTTP server on 127.0.0.1 that speaks Ollama's API subset."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import numpy as np
import pytest

from clear_rag.errors import ModelError
from clear_rag.generate.cache import fingerprint_of
from clear_rag.generate.constrain import problems
from clear_rag.generate.prompt import REFUSAL
from clear_rag.providers import ChatModel, Embedder, Message, cite, describe
from clear_rag.providers.ollama import OllamaChat, OllamaEmbedder, base_model
from tests.providers.fake_servers import (
    FakeServer,
    Reply,
    Seen,
    json_reply,
    ndjson_reply,
    text_reply,
    unused_url,
)

QUESTION = [Message("system", "Answer from the context."), Message("user", "When do pads need replacing?")]
DIGEST = "0a109f422b47e3a30ba2b10eca18548e944e8a23073ee3f3e947efcf3c45e59f"


@pytest.fixture
def server() -> Iterator[FakeServer]:
    with FakeServer() as fake:
        yield fake


def embed_by_length(request: Seen) -> Reply:
    """Answers each input with the unnormalised vector ``[len(text), 1, 0]``, so rows can be told apart."""
    return json_reply({"embeddings": [[float(len(text)), 1.0, 0.0] for text in request.json()["input"]]})


def chat_lines(*pieces: str) -> list[dict[str, object]]:
    lines: list[dict[str, object]] = [
        {"model": "llama3.2", "message": {"role": "assistant", "content": p}, "done": False} for p in pieces
    ]
    return [*lines, {"model": "llama3.2", "message": {"role": "assistant", "content": ""}, "done": True}]


# --- embedder -------------------------------------------------------------------------------------


def test_embed_sends_nomics_prefix_for_each_kind(server: FakeServer) -> None:
    server.route("POST", "/api/embed", embed_by_length)
    with OllamaEmbedder(base_url=server.url) as embedder:
        embedder.embed(["worn pads?"], kind="query")
        embedder.embed(["Pads wear.", "Chains stretch."], kind="document")
    bodies = [r.json() for r in server.seen("/api/embed")]
    assert bodies == [
        {"model": "nomic-embed-text", "input": ["search_query: worn pads?"]},
        {
            "model": "nomic-embed-text",
            "input": ["search_document: Pads wear.", "search_document: Chains stretch."],
        },
    ]


def test_embed_returns_unit_float32_rows_in_input_order(server: FakeServer) -> None:
    server.route("POST", "/api/embed", embed_by_length)
    with OllamaEmbedder(base_url=server.url, prefixes=("", "")) as embedder:
        vectors = embedder.embed(["abc", "a"], kind="document")
    assert vectors.dtype == np.float32 and vectors.shape == (2, 3)
    expected = np.array([[3, 1, 0] / np.sqrt(3**2 + 1), [1, 1, 0] / np.sqrt(2)], dtype=np.float32)
    np.testing.assert_allclose(vectors, expected, rtol=1e-6)


def test_embed_batches_and_keeps_order_across_batches(server: FakeServer) -> None:
    server.route("POST", "/api/embed", embed_by_length)
    texts = ["a" * n for n in range(1, 6)]
    with OllamaEmbedder(base_url=server.url, prefixes=("", ""), batch_size=2) as embedder:
        vectors = embedder.embed(texts, kind="document")
    assert [r.json()["input"] for r in server.seen("/api/embed")] == [texts[0:2], texts[2:4], texts[4:5]]
    lengths = vectors[:, 0] / vectors[:, 1]  # undoes the normalisation: len(text) / 1
    np.testing.assert_allclose(lengths, [1, 2, 3, 4, 5], rtol=1e-5)


def test_prefixes_come_from_the_table_an_argument_or_nowhere(server: FakeServer) -> None:
    server.route("POST", "/api/embed", embed_by_length)
    mxbai_query = "Represent this sentence for searching relevant passages: "
    with (
        OllamaEmbedder("mxbai-embed-large:335m", base_url=server.url) as mxbai,
        OllamaEmbedder("e5-small", base_url=server.url, prefixes=("query: ", "passage: ")) as e5,
        OllamaEmbedder("all-minilm", base_url=server.url) as minilm,
    ):
        for embedder in (mxbai, e5, minilm):
            embedder.embed(["q"], kind="query")
            embedder.embed(["d"], kind="document")
    inputs = [r.json()["input"][0] for r in server.seen("/api/embed")]
    assert inputs == [mxbai_query + "q", "d", "query: q", "passage: d", "q", "d"]
    assert base_model("library/nomic-embed-text:v1.5") == "nomic-embed-text"


def test_dim_is_learnt_from_the_first_reply_or_by_one_probe(server: FakeServer) -> None:
    server.route("POST", "/api/embed", embed_by_length)
    with OllamaEmbedder(base_url=server.url) as embedder:
        assert embedder.dim == 3
        assert len(server.seen("/api/embed")) == 1  # the probe
        embedder.embed(["x"], kind="document")
        assert embedder.dim == 3
        assert len(server.seen("/api/embed")) == 2
        assert embedder.embed([], kind="query").shape == (0, 3)


def test_a_given_dim_that_the_model_does_not_match_is_an_error(server: FakeServer) -> None:
    server.route("POST", "/api/embed", embed_by_length)
    with (
        OllamaEmbedder(base_url=server.url, dim=768) as embedder,
        pytest.raises(ModelError, match=r"length 3.*dim=768"),
    ):
        embedder.embed(["x"], kind="query")


def test_embed_checks_kind_and_texts_before_calling() -> None:
    with OllamaEmbedder(base_url=unused_url()) as embedder:
        with pytest.raises(ValueError, match=r"kind='passage'"):
            embedder.embed(["x"], kind="passage")  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="wrap a single text"):
            embedder.embed("x", kind="query")
    with pytest.raises(ValueError, match="batch_size=0"):
        OllamaEmbedder(batch_size=0)
    with pytest.raises(ValueError, match="timeout=0"):
        OllamaEmbedder(timeout=0)


def test_version_is_the_digest_from_tags_else_the_tag(server: FakeServer) -> None:
    tags = {
        "models": [{"name": "nomic-embed-text:latest", "model": "nomic-embed-text:latest", "digest": DIGEST}]
    }
    server.route("GET", "/api/tags", json_reply(tags))
    with (
        OllamaEmbedder(base_url=server.url) as embedder,
        OllamaEmbedder("bge-m3:567m", base_url=server.url) as unlisted,
        OllamaEmbedder(base_url=server.url, version="pinned") as pinned,
    ):
        embedder_protocol: Embedder = embedder  # mypy checks the class against the protocol
        assert describe(embedder_protocol) == "ollama/nomic-embed-text@0a109f422b47"
        assert embedder.version == DIGEST[:12]
        assert unlisted.version == "567m"
        assert pinned.version == "pinned"
    assert len(server.seen("/api/tags")) == 2  # once per embedder that looked, cached after


def test_chat_fingerprint_is_the_full_digest_and_shares_the_tags_call_with_version(
    server: FakeServer,
) -> None:
    tags = {"models": [{"name": "llama3.2:latest", "model": "llama3.2:latest", "digest": DIGEST}]}
    server.route("GET", "/api/tags", json_reply(tags))
    with (
        OllamaChat("llama3.2", base_url=server.url) as chat,
        OllamaChat("llama3.2:latest", base_url=server.url, version="pinned") as pinned,
    ):
        assert chat.fingerprint == f"ollama:sha256:{DIGEST}"
        assert describe(chat) == f"ollama/llama3.2@{DIGEST[:12]}"
        assert fingerprint_of(chat) == f"ollama:sha256:{DIGEST}"
        assert pinned.fingerprint == f"ollama:sha256:{DIGEST}"  # a pinned version is a label, not the key
    assert len(server.seen("/api/tags")) == 2  # once per model, for version and fingerprint alike
    assert server.seen("/api/chat") == []  # fingerprinting never runs the model


def test_a_digest_listed_with_its_prefix_gives_the_same_fingerprint(server: FakeServer) -> None:
    server.route(
        "GET", "/api/tags", json_reply({"models": [{"name": "qwen2.5:3b", "digest": f"sha256:{DIGEST}"}]})
    )
    with OllamaChat("qwen2.5:3b", base_url=server.url) as chat:
        assert chat.fingerprint == f"ollama:sha256:{DIGEST}"


def test_a_model_not_pulled_has_no_fingerprint_and_says_to_pull_it(server: FakeServer) -> None:
    server.route("GET", "/api/tags", json_reply({"models": [{"name": "llama3.2:latest", "digest": DIGEST}]}))
    with (
        OllamaChat("qwen2.5", base_url=server.url) as chat,
        pytest.raises(ModelError, match=r"/api/tags: model 'qwen2.5' is not among.*ollama pull qwen2.5"),
    ):
        _ = chat.fingerprint


def test_no_server_while_fingerprinting_names_the_url() -> None:
    url = unused_url()
    with OllamaChat("llama3.2", base_url=url) as chat, pytest.raises(ModelError, match=rf"{url}/api/tags"):
        _ = chat.fingerprint


# --- errors a person can act on ------------------------------------------------------------------


def test_no_server_says_the_url_and_how_to_start_it() -> None:
    url = unused_url()
    with OllamaEmbedder(base_url=url) as embedder, pytest.raises(ModelError) as caught:
        embedder.embed(["x"], kind="query")
    assert f"{url}/api/embed" in str(caught.value) and "`ollama serve`" in str(caught.value)


def test_a_model_not_pulled_says_ollama_pull(server: FakeServer) -> None:
    missing = json_reply({"error": 'model "nomic-embed-text" not found, try pulling it first'}, status=404)
    server.route("POST", "/api/embed", missing)
    server.route("POST", "/api/chat", missing)
    with (
        OllamaEmbedder(base_url=server.url) as embedder,
        pytest.raises(ModelError, match="`ollama pull nomic-embed-text`"),
    ):
        embedder.embed(["x"], kind="query")
    with (
        OllamaChat("llama3.2", base_url=server.url) as chat,
        pytest.raises(ModelError, match=r"`ollama pull llama3\.2`"),
    ):
        list(chat.stream(QUESTION))


def test_an_ollama_without_the_endpoint_says_upgrade(server: FakeServer) -> None:
    with OllamaEmbedder(base_url=server.url) as embedder, pytest.raises(ModelError, match="Upgrade Ollama"):
        embedder.embed(["x"], kind="query")


def test_other_statuses_quote_the_server(server: FakeServer) -> None:
    server.route(
        "POST", "/api/embed", json_reply({"error": '"llama3.2" does not support embeddings'}, status=400)
    )
    with (
        OllamaEmbedder("llama3.2", base_url=server.url) as embedder,
        pytest.raises(ModelError, match=r"HTTP 400: \"llama3.2\" does not support embeddings"),
    ):
        embedder.embed(["x"], kind="query")


def test_a_slow_server_names_the_timeout_and_the_setting(server: FakeServer) -> None:
    server.route("POST", "/api/embed", Reply(delay=3.0, chunks=[b"{}"]))
    with OllamaEmbedder(base_url=server.url, timeout=0.2) as embedder, pytest.raises(ModelError) as caught:
        embedder.embed(["x"], kind="query")
    assert "timeout=0.2 s" in str(caught.value) and "larger timeout= to OllamaEmbedder" in str(caught.value)


@pytest.mark.parametrize(
    ("reply", "field"),
    [
        (text_reply("<html>proxy</html>", 200), "body"),
        (json_reply({"embedding": [1.0]}), "embeddings"),
        (json_reply({"embeddings": [[1.0, "x"]]}), "embeddings"),
        (json_reply({"embeddings": [[1.0], [2.0]]}), "embeddings"),  # two vectors for one input
        (json_reply({"embeddings": [[1.0, 2.0], [3.0]]}), "embeddings"),  # ragged
    ],
)
def test_a_malformed_embed_reply_names_the_field(server: FakeServer, reply: Reply, field: str) -> None:
    server.route("POST", "/api/embed", reply)
    with (
        OllamaEmbedder(base_url=server.url) as embedder,
        pytest.raises(ModelError, match=rf"/api/embed: {field}:"),
    ):
        embedder.embed(["x"], kind="query")


# --- chat -----------------------------------------------------------------------------------------


def test_chat_yields_each_piece_before_the_server_sends_the_last(server: FakeServer) -> None:
    gate = threading.Event()
    reply = ndjson_reply(chat_lines("Fit", " new", " pads."), chunk_delay=0.02, gate=gate)
    server.route("POST", "/api/chat", reply)
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        chat_protocol: ChatModel = chat
        pieces = chat_protocol.stream(QUESTION, temperature=0.0, seed=7, num_ctx=4096)
        first, second, third = next(pieces), next(pieces), next(pieces)
        assert not reply.sent_last.is_set()  # three pieces arrived while the done line was held back
        gate.set()
        assert [first, second, third, *pieces] == ["Fit", " new", " pads."]
    body = server.seen("/api/chat")[0].json()
    assert body == {
        "model": "llama3.2",
        "messages": [{"role": m.role, "content": m.content} for m in QUESTION],
        "stream": True,
        "options": {"temperature": 0.0, "seed": 7, "num_ctx": 4096},
    }


def test_chat_max_tokens_is_num_predict_and_unknown_options_fail_at_the_call(server: FakeServer) -> None:
    server.route("POST", "/api/chat", ndjson_reply(chat_lines("ok")))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        assert list(chat.stream(QUESTION, max_tokens=64)) == ["ok"]
        with pytest.raises(ValueError, match=r"\['temprature'\]"):
            chat.stream(QUESTION, temprature=0.2)
        with pytest.raises(TypeError, match="Message"):
            chat.stream([])
    assert server.seen("/api/chat")[0].json()["options"] == {"num_predict": 64}


def test_closing_the_stream_early_closes_the_connection(server: FakeServer) -> None:
    server.route("POST", "/api/chat", ndjson_reply(chat_lines("one", " two", " three"), hang_up_after=1))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        pieces = chat.stream(QUESTION)
        assert next(pieces) == "one"
        pieces.close()  # what a for loop's owner does when it stops early; dropping the generator does too
        assert server.hung_up.wait(2.0)


def test_pieces_holding_line_separator_characters_stay_whole(server: FakeServer) -> None:
    # U+2028 and U+0085 arrive unescaped; str.splitlines would cut the JSON line at them.
    server.route("POST", "/api/chat", ndjson_reply(chat_lines("a\u2028b", "c\x85d")))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        assert list(chat.stream(QUESTION)) == ["a\u2028b", "c\x85d"]


def test_a_failure_mid_answer_or_a_cut_off_answer_is_an_error(server: FakeServer) -> None:
    failed = ndjson_reply([chat_lines("par")[0], {"error": "out of memory"}])
    cut_off = ndjson_reply(chat_lines("par")[:1])
    server.route("POST", "/api/chat", failed, cut_off)
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        with pytest.raises(ModelError, match="failed mid-answer: out of memory"):
            list(chat.stream(QUESTION))
        with pytest.raises(ModelError, match="done: true"):
            list(chat.stream(QUESTION))


def test_a_stall_mid_answer_beyond_the_timeout_is_an_error(server: FakeServer) -> None:
    server.route("POST", "/api/chat", ndjson_reply(chat_lines("slow", " reply"), chunk_delay=3.0))
    with OllamaChat("llama3.2", base_url=server.url, timeout=0.2) as chat:
        pieces = chat.stream(QUESTION)
        assert next(pieces) == "slow"
        with pytest.raises(ModelError, match=r"timeout=0.2 s.*OllamaChat"):
            next(pieces)


def test_a_malformed_chat_line_names_the_field(server: FakeServer) -> None:
    server.route("POST", "/api/chat", ndjson_reply([{"message": {"role": "assistant"}, "done": False}]))
    with (
        OllamaChat("llama3.2", base_url=server.url) as chat,
        pytest.raises(ModelError, match=r"/api/chat: message.content:"),
    ):
        list(chat.stream(QUESTION))


def test_list_models_reads_tags_and_close_closes_the_client(server: FakeServer) -> None:
    tags = {"models": [{"name": "llama3.2:latest", "digest": DIGEST}, {"name": "nomic-embed-text:latest"}]}
    server.route("GET", "/api/tags", json_reply(tags))
    chat = OllamaChat("llama3.2", base_url=server.url)
    assert chat.list_models() == ["llama3.2:latest", "nomic-embed-text:latest"]
    assert describe(chat) == f"ollama/llama3.2@{DIGEST[:12]}"
    chat.close()
    with pytest.raises(RuntimeError):
        chat.list_models()


# --- cite: structured outputs ----------------------------------------------------------------------


def json_pieces(reply: object, size: int = 9) -> list[str]:
    """A JSON reply cut into pieces, as a model writes it token by token."""
    text = json.dumps(reply)
    return [text[i : i + size] for i in range(0, len(text), size)]


def test_cite_sends_the_schema_and_the_reply_comes_back_as_cited_text(server: FakeServer) -> None:
    gate = threading.Event()
    first = {"text": "Replace pads at 1.5 mm", "sources": [2]}
    reply = {"answer": [first, {"text": "Rotors last longer.", "sources": [1, 3]}]}
    server.route("POST", "/api/chat", ndjson_reply(chat_lines(*json_pieces(reply)), gate=gate))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        pieces = chat.stream(QUESTION, temperature=0.0, max_tokens=64, cite=3)
        said = ""
        while not said:
            said = next(pieces)
        assert said == "Replace pads at 1.5 mm. [2]"  # the first sentence, before the reply has ended
        gate.set()
        assert said + "".join(pieces) == "Replace pads at 1.5 mm. [2] Rotors last longer. [1][3]"
    body = server.seen("/api/chat")[0].json()
    assert body["format"] == cite.schema(3)
    assert body["options"] == {"temperature": 0.0, "num_predict": 64}  # cite is not a model option
    assert body["messages"] == [{"role": m.role, "content": m.content} for m in QUESTION]


def test_cite_refusal_and_a_bad_value(server: FakeServer) -> None:
    server.route("POST", "/api/chat", ndjson_reply(chat_lines(*json_pieces({"answer": REFUSAL}))))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        assert "".join(chat.stream(QUESTION, cite=2)) == REFUSAL
        with pytest.raises(ValueError, match=r"option cite=0 is invalid"):
            chat.stream(QUESTION, cite=0)
    assert len(server.seen("/api/chat")) == 1


@pytest.mark.parametrize(
    ("pieces", "answer", "step"),
    [
        # a server that does not hold the numbers to the enum: the check reports it, citations ignore it
        (
            json_pieces({"answer": [{"text": "Replace pads at 1.5 mm.", "sources": [7]}]}),
            "Replace pads at 1.5 mm. [7]",
            "it cites [7] of 3 sources",
        ),
        # one that ignores the schema altogether
        (["Replace pads", " at 1.5 mm."], "Replace pads at 1.5 mm.", "sentence 1 cites nothing"),
        # a reply cut off inside the JSON
        (['{"answer": [{"text": "Replace'], '{"answer": [{"text": "Replace', "sentence 1 cites nothing"),
    ],
)
def test_a_reply_outside_the_schema_is_handed_on_for_the_check(
    server: FakeServer, pieces: list[str], answer: str, step: str
) -> None:
    server.route("POST", "/api/chat", ndjson_reply(chat_lines(*pieces)))
    with OllamaChat("llama3.2", base_url=server.url) as chat:
        text = "".join(chat.stream(QUESTION, cite=3))
    assert text == answer
    assert problems(text, 3) == [step]
