"""The one question path end to end on the fake providers: events in order, the context the model
was given, citations to spans, refusal, the steps before retrieval, cancellation."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from clear_rag.errors import Cancelled, ConfigError
from clear_rag.generate.events import Event, stage_event
from clear_rag.generate.planner import Planner
from clear_rag.generate.prompt import REFUSAL, citations, cited_numbers
from clear_rag.providers.base import Message
from clear_rag.providers.fake import ScriptedChatModel
from clear_rag.retrieve.assemble import Assembled, Passage
from clear_rag.retrieve.rerank import sigmoid
from clear_rag.store import Store
from clear_rag.trace import from_json, to_json
from clear_rag.types import Candidate, Contribution, StageResult
from tests.conftest import toy_pipeline


def _planner(store: Store, chat: ScriptedChatModel | None, **changes: Any) -> Planner:
    return Planner(toy_pipeline(store, **changes), chat)


def test_events_arrive_in_order_and_citations_map_to_spans(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm [1]. See also [9].")
    events: list[Event] = []
    trace = _planner(toy_store, chat).run("when do disc brake pads need replacing?", on_event=events.append)
    kinds = [e.kind for e in events]
    assert kinds[0] == "query" and kinds[-1] == "citations"
    first_token = kinds.index("token")
    assert kinds[1:first_token] == ["stage"] * 4 + ["context"]  # stages and context before any token
    (cited,) = events[-1].data["citations"]  # [9] is not a source
    assert trace.answer == "Replace pads at 1.5 mm [1]. See also [9]."
    assert cited["doc_id"] == "docs/a.md"
    assert "1.5 mm" in toy_store.document_text("docs/a.md")[cited["start"] : cited["end"]]
    assert trace.models["chat"] == "scripted-chat@1"
    stage = next(e for e in events if e.kind == "stage").data
    assert [c["rank"] for c in stage["candidates"]] == list(range(1, len(stage["candidates"]) + 1))
    assert all(c["display_score"] == c["score"] for c in stage["candidates"])


def test_a_stage_event_shows_no_sigmoid_for_the_tail_a_reranker_kept() -> None:
    """The candidate past the shortlist has no logit: its display score is None, not a sigmoid of
    its placeholder; the re-scored one's is the sigmoid of its logit."""
    scored = Candidate("a#0", "a", 0, 4, 2.0, {"fusion": Contribution(2, 1 / 62, 0.0)})
    kept = Candidate("b#0", "b", 0, 4, 2.0 - 1, {"fusion": Contribution(2, 1 / 62, 0.0)})
    stage = StageResult(
        "rerank", (scored, kept), 1.0, {"input": "fusion", "display": "sigmoid", "reranked": 1}
    )
    shown = [c["display_score"] for c in stage_event(stage)["candidates"]]
    assert shown == [pytest.approx(sigmoid(2.0)), None]


def test_the_trace_context_is_what_the_model_was_given(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("At 1.5 mm [1].")
    trace = _planner(toy_store, chat).run("when do disc brake pads need replacing?")
    (call,) = chat.history
    assert call.messages == trace.messages
    assert trace.context and f"Sources:\n\n{trace.context}\n\nQuestion: " in call.messages[1].content
    assert trace.context.startswith("[1] (docs/a.md)")
    assert from_json(to_json(trace)) == trace  # messages and nested contributions survive the store


def test_nothing_retrieved_means_refusal_without_a_model_call(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    trace = _planner(toy_store, chat, retrievers=("keyword",)).run("zzzz qqqq")
    assert trace.answer == REFUSAL and chat.history == []
    assert "nothing was retrieved" in trace.steps["refusal"]


def test_follow_up_expansion_and_hyde_are_in_the_trace(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("What chain stretch calls for a new chain?")  # rewrite
    chat.enqueue("chain wear limit\nreplace a stretched chain")  # expansion
    chat.enqueue("Chains are replaced at 0.5% stretch.")  # HyDE
    chat.enqueue("At 0.5% stretch [1].")  # answer
    history = [Message("user", "Tell me about chains"), Message("assistant", "Chains wear out over time.")]
    events: list[Event] = []
    trace = _planner(toy_store, chat, expand=2, hyde=True).run(
        "when should I swap it?", history, on_event=events.append
    )
    assert trace.answer == "At 0.5% stretch [1]."
    assert trace.query == "when should I swap it?"
    assert trace.phrasings == (
        "What chain stretch calls for a new chain?",
        "chain wear limit",
        "replace a stretched chain",
    )
    assert trace.steps["rewrite"]["accepted"] is True
    assert trace.steps["hyde"] == "Chains are replaced at 0.5% stretch."
    assert {"keyword·q2", "vector·hyde"} <= {s.name for s in trace.stages}
    assert trace.citations[0].doc_id == "docs/sub/c.html"
    query = events[0].data
    assert query["searched"] == "What chain stretch calls for a new chain?"
    assert query["phrasings"] == ["chain wear limit", "replace a stretched chain"]


def test_without_generating_expansion_and_hyde_still_run(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("chain wear limit")  # expansion
    chat.enqueue("Chains are replaced at 0.5% stretch.")  # HyDE
    trace = _planner(toy_store, chat, expand=1, hyde=True).run("chain stretch", generate=False)
    assert trace.answer == "" and chat.pending == 0 and len(chat.history) == 2
    assert trace.phrasings == ("chain stretch", "chain wear limit")
    assert trace.messages and trace.context  # built, not sent
    assert trace.models["chat"] == "scripted-chat@1"


def test_a_step_that_needs_a_chat_model_without_one_is_a_config_error(toy_store: Store) -> None:
    with pytest.raises(ConfigError, match=r"chat.*expands the query"):
        _planner(toy_store, None, expand=2).run("chain stretch", generate=False)
    trace = _planner(toy_store, None).run("chain stretch", generate=False)  # nothing needs one
    assert "chat" not in trace.models


class Endless:
    """A chat model that would write forever, counting the pieces it was asked for."""

    name, version = "endless", "1"

    def __init__(self) -> None:
        self.pieces = 0
        self.closed = False

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        try:
            while True:
                self.pieces += 1
                yield "word "
        finally:
            self.closed = True


def test_cancelling_stops_generation_and_asks_the_model_for_nothing_more(toy_store: Store) -> None:
    chat = Endless()
    cancel = threading.Event()
    tokens: list[str] = []

    def on_event(event: Event) -> None:
        if event.kind == "token":
            tokens.append(event.data["text"])
            if len(tokens) == 3:
                cancel.set()  # the client went away after three tokens

    planner = Planner(toy_pipeline(toy_store), chat)
    with pytest.raises(Cancelled):
        planner.run("chain stretch", on_event=on_event, cancel=cancel)
    assert len(tokens) == 3 and chat.pieces == 4 and chat.closed


def test_cancelling_before_retrieval_ends_it_at_the_next_stage(toy_store: Store) -> None:
    cancel = threading.Event()
    cancel.set()
    with pytest.raises(Cancelled):
        _planner(toy_store, None).run("chain stretch", generate=False, cancel=cancel)


def test_cited_numbers_and_citations_on_a_built_context() -> None:
    passages = (
        Passage("d1", 0, 10, ("d1#0000", "d1#0001"), "x" * 10, 1, 3),
        Passage("d2", 5, 9, ("d2#0002",), "y" * 4, 2, 1),
    )
    packed = Assembled(passages, 4, 100, ())
    assert cited_numbers("a [2] b [1][2] c [12]") == [2, 1, 12]
    assert [(c.doc_id, c.start, c.end, c.chunk_id) for c in citations("a [2] b [1]", packed)] == [
        ("d2", 5, 9, "d2#0002"),
        ("d1", 0, 10, "d1#0000"),
    ]


def test_an_answer_without_markers_gets_attributed_citations(toy_store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Disc brakes need new pads at 1.5 mm, and check the rotor.")
    trace = _planner(toy_store, chat).run("when do disc brake pads need replacing?")
    assert [c.doc_id for c in trace.citations] == ["docs/a.md"]
    assert trace.steps["citations"] == "the model cited nothing; attributed by word overlap"


def test_attribution_needs_enough_shared_words() -> None:
    from clear_rag.generate.prompt import attributed

    passages = (
        Passage("d1", 0, 40, ("d1#0000",), "Disc brakes need new pads at 1.5 mm.", 1, 9),
        Passage("d2", 0, 30, ("d2#0000",), "Tyre pressure for road bikes.", 2, 5),
    )
    packed = Assembled(passages, 14, 100, ())
    assert [
        c.doc_id for c in attributed("Brakes need new pads. Tyre pressure for road bikes matters.", packed)
    ] == ["d1", "d2"]
    assert attributed("Nothing in common here.", packed) == ()
