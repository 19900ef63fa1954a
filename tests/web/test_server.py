"""The app over HTTP, on a real server on 127.0.0.1: the event stream, its order and content, a slow
search shown before a fast one ends, cancellation by disconnecting, concurrency, and bad input."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import httpx
import numpy as np
import numpy.typing as npt
import pytest

from clear_rag.config import PipelineConfig
from clear_rag.errors import ModelError
from clear_rag.providers.base import EmbedKind
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker, ScriptedChatModel
from clear_rag.providers.ollama import OllamaChat
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.store import Store
from clear_rag.types import Message
from clear_rag.web.app import create_app
from clear_rag.web.runner import Models, Runner
from tests.conftest import toy_config
from tests.providers.fake_servers import FakeServer, Reply
from tests.web.conftest import SseEvent, serving, sse_events

WAIT_S = 60.0  # bound on waiting for another thread's readiness; the waits end as soon as it is there


def chat_events(base: str, body: dict[str, object]) -> list[SseEvent]:
    with httpx.stream("POST", f"{base}/api/chat", json=body, timeout=WAIT_S) as response:
        assert response.status_code == 200, response.read()
        return list(sse_events(response))


def kinds(events: Sequence[SseEvent]) -> list[str]:
    return [e.kind for e in events]


class GatedEmbedder(HashEmbedder):
    """The hash embedder whose query embeddings wait for ``gate``: a slow vector search on demand."""

    def __init__(self) -> None:
        super().__init__(dim=64)
        self.gate = threading.Event()
        self.waiting = threading.Event()

    def embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        if kind == "query":
            self.waiting.set()
            assert self.gate.wait(WAIT_S), "the test never opened the gate"
        return super().embed(texts, kind=kind)


class CountingChat(ScriptedChatModel):
    """A scripted model that counts the pieces it was asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.pieces = 0

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        for piece in super().stream(messages, **options):
            self.pieces += 1
            yield piece


class Flood:
    """A chat model that answers without end, as a server that ignores max_tokens."""

    name, version = "flood", "1"

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        while True:
            yield "word " * 1000


class Down:
    name, version = "down", "1"

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        raise ModelError("no server answers there", path="http://127.0.0.1:9/api/chat", fix="Start it")


def app_for(store: Store, *, embedder: HashEmbedder | None = None, chat: object = None, **missing: str):  # type: ignore[no-untyped-def]
    models = Models(
        embedder or HashEmbedder(dim=64),
        chat if chat is not None else EchoChatModel(),  # type: ignore[arg-type]
        lambda name: LexicalReranker(),
        dict(missing),
    )
    return create_app(store, toy_config(), models)


@pytest.fixture
def base(toy_store: Store) -> Iterator[str]:
    with serving(app_for(toy_store)) as url:
        yield url


# -- the stream ------------------------------------------------------------------------------------


def test_events_come_in_the_order_of_the_wire(base: str, toy_store: Store) -> None:
    events = chat_events(base, {"question": "when do disc brake pads need replacing"})
    order = kinds(events)
    assert order[0] == "query"
    first_token = order.index("token")
    assert set(order[1 : order.index("context")]) == {"stage"}
    assert order.index("context") < first_token
    assert order[-2:] == ["citations", "done"]
    stages = [e.data["name"] for e in events if e.kind == "stage"]
    assert {"keyword", "vector", "fusion", "context"} <= set(stages)
    done = events[-1].data
    assert (
        done["timings"]["first_stage_ms"] <= done["timings"]["first_token_ms"] <= done["timings"]["total_ms"]
    )
    assert toy_store.load_trace(done["trace_id"]).query == "when do disc brake pads need replacing"


def test_the_done_timings_count_the_whole_wait_from_the_request(
    toy_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening the config's indexes happens before the stream starts; the timings count from the
    request's arrival, so open_ms holds it and every later mark is after it."""
    opening: list[float] = []
    load = Runner.pipeline

    def timed(self: Runner, config: PipelineConfig) -> Pipeline:
        began = time.perf_counter()
        found = load(self, config)
        opening.append((time.perf_counter() - began) * 1000)
        return found

    monkeypatch.setattr(Runner, "pipeline", timed)
    with serving(app_for(toy_store)) as url:
        timings = chat_events(url, {"question": "when do disc brake pads need replacing"})[-1].data["timings"]
    assert set(timings) == {"open_ms", "first_stage_ms", "context_ms", "first_token_ms", "total_ms"}
    assert timings["open_ms"] >= round(opening[0], 3) - 0.001  # the first open is the request's own
    order = ["open_ms", "first_stage_ms", "context_ms", "first_token_ms", "total_ms"]
    assert [timings[k] for k in order] == sorted(timings[k] for k in order)


def test_stage_events_carry_ranks_display_scores_and_contributions(base: str) -> None:
    events = chat_events(base, {"question": "disc brake pads", "config": {"rerank": True}})
    stages = {e.data["name"]: e.data for e in events if e.kind == "stage"}
    fused = stages["fusion"]["candidates"]
    assert [c["rank"] for c in fused] == list(range(1, len(fused) + 1))
    top = fused[0]
    assert set(top["sources"]) <= {"keyword", "vector"} and top["sources"]
    assert top["score"] == pytest.approx(sum(s["contribution"] for s in top["sources"].values()))
    reranked = stages["rerank"]
    assert reranked["detail"]["display"] == "sigmoid"
    for cand in reranked["candidates"]:
        assert cand["display_score"] == pytest.approx(1 / (1 + np.exp(-cand["score"])))
        assert list(cand["sources"]) == ["fusion"]


def test_citations_carry_the_number_that_cites_them_and_an_exact_span(base: str, toy_store: Store) -> None:
    events = chat_events(base, {"question": "when do disc brake pads need replacing"})
    answer = "".join(e.data["text"] for e in events if e.kind == "token")
    passages = next(e.data["passages"] for e in events if e.kind == "context")
    cited = next(e.data["citations"] for e in events if e.kind == "citations")
    assert "[1]" in answer and cited[0]["number"] == 1
    first = passages[0]
    assert (cited[0]["doc_id"], cited[0]["start"], cited[0]["end"]) == (
        first["doc_id"],
        first["start"],
        first["end"],
    )
    text = toy_store.document_text(first["doc_id"])
    assert text[first["start"] : first["end"]] == first["text"]


def test_a_slow_search_does_not_hold_back_a_fast_one(toy_store: Store) -> None:
    embedder = GatedEmbedder()
    body = {"question": "chain stretch"}
    with (
        serving(app_for(toy_store, embedder=embedder)) as url,
        httpx.stream("POST", f"{url}/api/chat", json=body, timeout=WAIT_S) as response,
    ):
        stream = sse_events(response)
        seen = []
        for event in stream:
            seen.append(event)
            if event.kind == "stage":
                break
        # the vector search is still waiting on its embedding when the keyword stage arrives
        assert seen[-1].data["name"] == "keyword" and not embedder.gate.is_set()
        embedder.gate.set()
        rest = [e.data["name"] for e in stream if e.kind == "stage"]
    assert "vector" in rest


def test_a_client_that_leaves_gets_no_tokens_asked_for(toy_store: Store) -> None:
    embedder, chat = GatedEmbedder(), CountingChat()
    chat.enqueue("Pads at 1.5 mm [1].")
    app = app_for(toy_store, embedder=embedder, chat=chat)
    runner = app.state.runner
    with serving(app) as url:
        with httpx.stream("POST", f"{url}/api/chat", json={"question": "brake pads"}, timeout=WAIT_S) as r:
            for event in sse_events(r):
                if event.kind == "stage":
                    break  # leave after the first stage
        assert runner.cancelled_event.wait(WAIT_S), "the server never saw the client leave"
        embedder.gate.set()
        assert runner.idle(WAIT_S), "the question's worker did not stop"
    assert chat.pieces == 0 and chat.history == []


def test_twenty_concurrent_chats_all_complete_in_order(base: str) -> None:
    async def one(client: httpx.AsyncClient, n: int) -> list[str]:
        order: list[str] = []
        body = {"question": ["disc brake pads", "tyre pressure", "chain stretch"][n % 3]}
        async with client.stream("POST", f"{base}/api/chat", json=body) as response:
            assert response.status_code == 200
            kind = ""
            async for line in response.aiter_lines():
                if line.startswith("event:"):
                    kind = line[6:].strip()
                    order.append(kind)
        return order

    async def all_of_them() -> list[list[str]]:
        async with httpx.AsyncClient(timeout=WAIT_S) as client:
            return await asyncio.gather(*(one(client, n) for n in range(20)))

    orders = asyncio.run(all_of_them())
    for order in orders:
        assert "error" not in order
        assert order[0] == "query" and order[-1] == "done"
        assert order.index("context") < order.index("token") < order.index("citations")


def test_a_follow_up_is_rewritten_against_its_conversation(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Disc brake pads need new pads at 1.5 mm [1].")
    chat.enqueue("when do disc brake pads need replacing on a road bike?")  # the rewrite
    chat.enqueue("At 1.5 mm [1].")
    with serving(app_for(toy_store, chat=chat)) as url:
        first = chat_events(url, {"question": "when do disc brake pads need replacing"})
        conversation = first[-1].data["conversation"]
        second = chat_events(url, {"question": "and on a road bike?", "conversation": conversation})
    query = second[0].data
    assert query["conversation"] == conversation
    assert query["searched"] == "when do disc brake pads need replacing on a road bike?"
    assert [q for q, _, _ in toy_store.turns(conversation)] == [
        "when do disc brake pads need replacing",
        "and on a road bike?",
    ]


@pytest.mark.parametrize(
    ("model", "said"), [(Down(), "no server answers there"), (Flood(), "max_answer_chars")]
)
def test_a_failing_model_ends_its_stream_in_an_error_while_another_goes_on(
    toy_store: Store, model: object, said: str
) -> None:
    with serving(app_for(toy_store, chat=model)) as url:
        failing = chat_events(url, {"question": "disc brake pads", "config": {"max_answer_chars": 5000}})
        fine = chat_events(url, {"question": "disc brake pads", "generate": False})
    assert failing[-1].kind == "error" and said in failing[-1].data["message"]
    assert "stage" in kinds(failing)
    assert fine[-1].kind == "done"


# -- the other endpoints ---------------------------------------------------------------------------


def test_documents_come_by_id_with_their_blocks(base: str, toy_store: Store) -> None:
    found = httpx.get(f"{base}/api/documents/docs/a.md").json()
    assert found["text"] == toy_store.document_text("docs/a.md")
    assert found["blocks"][0]["kind"] == "heading"


def test_a_stored_trace_replays_as_the_events_of_its_question(base: str) -> None:
    live = chat_events(base, {"question": "tyre pressure for road bikes"})
    trace_id = live[-1].data["trace_id"]
    listed = httpx.get(f"{base}/api/traces").json()["traces"]
    assert listed[0]["id"] == trace_id
    replay = httpx.get(f"{base}/api/traces/{trace_id}").json()
    events = replay["events"]
    live_stages = sorted(
        (e.data["name"], [c["chunk_id"] for c in e.data["candidates"]]) for e in live if e.kind == "stage"
    )
    replayed = sorted(
        (e["data"]["name"], [c["chunk_id"] for c in e["data"]["candidates"]])
        for e in events
        if e["event"] == "stage"
    )
    assert replayed == live_stages
    answer = "".join(e.data["text"] for e in live if e.kind == "token")
    assert [e["data"]["text"] for e in events if e["event"] == "token"] == [answer]


def test_config_names_every_knob_and_why_one_is_unavailable(toy_store: Store) -> None:
    with serving(
        app_for(toy_store, reranker="ms-marco-minilm-l6: not pulled. Run clear-rag models pull")
    ) as url:
        knobs = {k["key"]: k for k in httpx.get(f"{url}/api/config").json()["knobs"]}
    rerankers = {o["name"]: o for o in knobs["reranker"]["options"]}
    assert rerankers["ms-marco-minilm-l6"]["available"] is False
    assert "not pulled" in rerankers["ms-marco-minilm-l6"]["reason"]
    assert knobs["rerank"]["available"] is any(o["available"] for o in rerankers.values())
    # a chat model that writes is here, but the server's expand (0) is a ceiling a question cannot raise
    assert knobs["expand"]["available"] is False and knobs["expand"]["max"] == 0
    assert "started with expand 0, a ceiling" in knobs["expand"]["reason"]
    assert (knobs["top_k"]["max"], knobs["depth"]["max"]) == (10, 100)
    assert knobs["fusion"]["choices"] == ["rrf", "minmax"] or knobs["fusion"]["kind"] == "choice"
    assert knobs["self_correction"]["available"] is False


def test_a_server_started_with_phrasings_offers_them_up_to_its_own_count(toy_store: Store) -> None:
    models = Models(HashEmbedder(dim=64), EchoChatModel(), lambda name: LexicalReranker(), {})
    with serving(create_app(toy_store, toy_config(expand=2), models)) as url:
        knobs = {k["key"]: k for k in httpx.get(f"{url}/api/config").json()["knobs"]}
        lowered = chat_events(url, {"question": "brake pads", "generate": False, "config": {"expand": 1}})
        raised = httpx.post(f"{url}/api/chat", json={"question": "brake pads", "config": {"expand": 3}})
    assert knobs["expand"]["available"] is True and knobs["expand"]["max"] == 2
    assert lowered[-1].kind == "done" and len(lowered[0].data["phrasings"]) == 1
    assert raised.status_code == 422 and "ceiling of 2" in raised.json()["error"]


# -- bad input -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "status", "said"),
    [
        (b"{not json", 400, "the request body is not JSON"),
        (b'["question"]', 422, "not a JSON object"),
        (b'{"question": ""}', 422, "request: question='': is empty. Send JSON such as"),
        (b'{"question": "   "}', 422, "request: question=' ': is empty"),  # the error's spaces collapse
        (b'{"generate": false}', 422, "request: question: is missing. Send JSON such as"),
        (b'{"questoin": "pads"}', 422, "Did you mean 'question'?"),
        (b'{"question": "pads", "config": {"top_kk": 3}}', 422, "Did you mean 'top_k'?"),
        (b'{"question": "pads", "config": {"top_k": 0}}', 422, "top_k"),
        (b'{"question": "pads", "config": {"chunking": {"size": 999}}}', 422, "chunking"),
        (b'{"question": "pads", "conversation": 5}', 422, "conversation"),
    ],
)
def test_bad_chat_requests_get_a_4xx_that_says_what_to_send(
    base: str, body: bytes, status: int, said: str
) -> None:
    response = httpx.post(f"{base}/api/chat", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status, response.text
    assert said in response.json()["error"]
    assert chat_events(base, {"question": "disc brake pads", "generate": False})[-1].kind == "done"


def test_a_100kb_question_is_refused_by_size(base: str) -> None:
    response = httpx.post(f"{base}/api/chat", json={"question": "pads " * 20_000})
    assert response.status_code == 413
    assert "more than the 4,000 a question may" in response.json()["error"]


@pytest.mark.parametrize(
    "path",
    [
        "/api/documents/docs/nothing.md",
        "/api/documents/../../etc/passwd",
        "/api/documents/..%2F..%2Fetc%2Fpasswd",
        "/api/documents/%2Fetc%2Fpasswd",
        "/api/traces/no-such-trace",
    ],
)
def test_unknown_ids_and_paths_are_a_404_with_a_message(base: str, path: str) -> None:
    response = httpx.get(base + path)
    assert response.status_code == 404
    message = response.json()["error"]
    assert any(
        said in message for said in ("no document has this id", "matches no stored trace", "no such endpoint")
    )
    assert "root:" not in response.text


def test_a_store_path_is_never_read_through_documents(base: str, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not serve", encoding="utf-8")
    response = httpx.get(f"{base}/api/documents/{secret}")
    assert response.status_code == 404 and "do not serve" not in response.text


def test_a_silent_model_server_ends_in_an_error_within_its_timeout_while_another_stream_goes_on(
    toy_store: Store,
) -> None:
    release = threading.Event()
    line = json.dumps({"message": {"role": "assistant", "content": "Pads"}, "done": False}).encode() + b"\n"
    with FakeServer() as model_server:
        model_server.route(
            "POST", "/api/chat", Reply(chunks=[line, line], content_type="application/x-ndjson", gate=release)
        )
        silent = OllamaChat("tiny", model_server.url, timeout=0.3)
        try:
            with serving(app_for(toy_store, chat=silent)) as url:
                failing = chat_events(url, {"question": "disc brake pads"})
                fine = chat_events(url, {"question": "disc brake pads", "generate": False})
        finally:
            release.set()
    assert (
        failing[-1].kind == "error" and "did not answer within timeout=0.3 s" in failing[-1].data["message"]
    )
    assert kinds(failing).count("token") == 1  # the one piece before the server fell silent
    assert fine[-1].kind == "done"


def test_a_quiet_stream_sends_heartbeats_until_its_events_come(toy_store: Store) -> None:
    embedder = GatedEmbedder()
    models = Models(embedder, EchoChatModel(), lambda name: LexicalReranker(), {})
    app = create_app(toy_store, toy_config(), models, heartbeat_s=1)
    body = {"question": "chain stretch", "config": {"retrievers": ["vector"]}}
    seen: list[str] = []  # event kinds, and "ping" for each heartbeat comment, in arrival order
    with serving(app) as url, httpx.stream("POST", f"{url}/api/chat", json=body, timeout=WAIT_S) as r:
        for line in r.iter_lines():
            if line.startswith(":") and "ping" not in seen:
                # the only search waits on its embedding, and the stream says it is alive
                assert not embedder.gate.is_set()
                embedder.gate.set()
            if line.startswith(":"):
                seen.append("ping")
            elif line.startswith("event:"):
                seen.append(line[6:].strip())
    assert seen.index("ping") < seen.index("stage")
    assert seen[0] == "query" and seen[-1] == "done"


def test_titles_come_by_doc_id_and_a_query_event_plans_every_stage(base: str, toy_store: Store) -> None:
    """The rank flow's labels and its pending lanes: each document's title (its first heading), and
    a plan in the query event naming every stage event that follows."""
    doc_ids = [r.id for r in toy_store.records()][:3]
    got = httpx.get(f"{base}/api/titles", params=[("doc_id", d) for d in [*doc_ids, "no/such.md"]])
    assert got.status_code == 200
    titles = got.json()["titles"]
    assert set(titles) == set(doc_ids) and titles == toy_store.titles(doc_ids)
    for doc_id in doc_ids:
        doc = toy_store.document(doc_id)
        heading = next((b for b in doc.blocks if b.kind == "heading"), None)
        if heading is not None:
            assert titles[doc_id] == " ".join(doc.text[heading.start : heading.end].split()).strip(" #")
    too_many = httpx.get(f"{base}/api/titles", params=[("doc_id", "x")] * 1001)
    assert too_many.status_code == 400 and "at most 1000" in too_many.json()["error"]
    events = chat_events(base, {"question": "when do disc brake pads need replacing"})
    plan = next(e.data for e in events if e.kind == "query")["plan"]
    stages = [e.data for e in events if e.kind == "stage"]
    assert sorted(p["name"] for p in plan) == sorted(s["name"] for s in stages)


@pytest.mark.parametrize(
    ("reranker", "said"),
    [
        ("ms-marco-minilm-l6", "clear-rag models pull ms-marco-minilm-l6"),  # known, never pulled here
        ("no-such-reranker", "is not a model clear-rag knows how to download"),
    ],
)
def test_a_reranker_that_is_not_here_is_refused_and_one_that_is_is_used(
    toy_store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reranker: str, said: str
) -> None:
    """The Lab sends a reranker it lists as here; one that is not (sent by hand) is a 422 that says what
    gets it, before any stage runs. The factory is the real ``make_reranker`` except for the name the
    fake stands in for, so the refusal is the one a real server gives."""
    from clear_rag.providers.base import Reranker
    from clear_rag.providers.select import make_reranker

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    asked: list[str] = []

    def rerankers(name: str) -> Reranker:
        asked.append(name)
        return LexicalReranker() if name == "scifact-minilm-l6" else make_reranker(name)

    app = create_app(toy_store, toy_config(), Models(HashEmbedder(dim=64), EchoChatModel(), rerankers, {}))
    with serving(app) as url:
        refused = httpx.post(
            f"{url}/api/chat", json={"question": "pads", "config": {"rerank": True, "reranker": reranker}}
        )
        assert refused.status_code == 422 and said in refused.json()["error"], refused.text
        chosen = {"rerank": True, "reranker": "scifact-minilm-l6"}
        events = chat_events(url, {"question": "pads", "generate": False, "config": chosen})
    assert events[-1].kind == "done" and "rerank" in {e.data["name"] for e in events if e.kind == "stage"}
    assert asked == [reranker, "scifact-minilm-l6"]
