"""Answers end to end on the fake providers: events in order, citations to spans, refusal, storage."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clear_rag.chunk.base import Chunker
from clear_rag.config import PipelineConfig
from clear_rag.generate.answer import Answerer
from clear_rag.generate.prompt import REFUSAL, citations, cited_numbers
from clear_rag.ingest import ingest
from clear_rag.providers.base import Message
from clear_rag.providers.fake import HashEmbedder, ScriptedChatModel
from clear_rag.retrieve.assemble import Assembled, Passage
from clear_rag.session import open_pipeline
from clear_rag.store import Store
from clear_rag.tokens import RegexTokenizer


@pytest.fixture
def store(tmp_path: Path, corpus: Path, chunker: Chunker) -> Store:
    opened = Store(tmp_path / "s", root=tmp_path)
    ingest(opened, [corpus], chunker)
    return opened


def _answerer(store: Store, chat: ScriptedChatModel, **changes: Any) -> Answerer:
    pipeline, _ = open_pipeline(
        store,
        PipelineConfig(**changes),
        embedder=HashEmbedder(dim=64),
        tokenizer=RegexTokenizer(),
    )
    return Answerer(pipeline, chat, store=store)


def test_events_arrive_in_order_and_citations_map_to_spans(store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Replace pads at 1.5 mm [1]. See also [9].")
    events = list(_answerer(store, chat).events("when do disc brake pads need replacing?"))
    kinds = [e.kind for e in events]
    assert kinds[0] == "query" and kinds[-2:] == ["citations", "done"]
    first_token = kinds.index("token")
    assert set(kinds[1:first_token]) == {"stage", "context"}  # stages and context before any token
    assert kinds.index("context") == first_token - 1
    (cited,) = next(e for e in events if e.kind == "citations").data["citations"]  # [9] is not a source
    trace = store.load_trace(events[-1].data["trace_id"])
    assert trace.answer == "Replace pads at 1.5 mm [1]. See also [9]."
    assert cited["doc_id"] == "docs/a.md"
    assert "1.5 mm" in store.document_text("docs/a.md")[cited["start"] : cited["end"]]
    assert trace.models["chat"] == "scripted-chat@1"
    prompt = chat.history[0].messages[1].content
    assert prompt.startswith("Sources:\n\n[1] (docs/a.md)")


def test_nothing_retrieved_means_refusal_without_a_model_call(store: Store) -> None:
    chat = ScriptedChatModel()
    answer, trace = _answerer(store, chat, retrievers=("keyword",)).ask("zzzz qqqq")
    assert answer == REFUSAL and chat.history == []
    assert "nothing was retrieved" in trace.steps["refusal"]


def test_follow_up_expansion_and_hyde_are_in_the_trace(store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("What chain stretch calls for a new chain?")  # rewrite
    chat.enqueue("chain wear limit\nreplace a stretched chain")  # expansion
    chat.enqueue("Chains are replaced at 0.5% stretch.")  # HyDE
    chat.enqueue("At 0.5% stretch [1].")  # answer
    history = [Message("user", "Tell me about chains"), Message("assistant", "Chains wear out over time.")]
    answer, trace = _answerer(store, chat, expand=2, hyde=True).ask("when should I swap it?", history)
    assert answer == "At 0.5% stretch [1]."
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


def test_an_answer_without_markers_gets_attributed_citations(store: Store) -> None:
    chat = ScriptedChatModel()
    chat.enqueue("Disc brakes need new pads at 1.5 mm, and check the rotor.")
    _, trace = _answerer(store, chat).ask("when do disc brake pads need replacing?")
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
