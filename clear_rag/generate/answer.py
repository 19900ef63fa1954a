"""One question answered end to end, as a stream of events: query, stages, context, tokens, citations.

The events are the ones the chat endpoint sends (design.md, "Events on the wire"); the CLI prints
them and ``ask`` collects them into ``(answer, trace)``. When nothing was retrieved the model is not
asked at all: the answer is the refusal, and the trace says so.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from clear_rag.generate.prompt import REFUSAL, answer_messages, attributed, citations, is_refusal
from clear_rag.generate.queries import expand, hypothetical_passage, rewrite
from clear_rag.providers.base import ChatModel, Message, describe
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.store.sqlite import Store
from clear_rag.types import Trace

EventKind = Literal["query", "stage", "context", "token", "citations", "done", "error"]


@dataclass(frozen=True, slots=True)
class Event:
    kind: EventKind
    data: dict[str, Any] = field(default_factory=dict)


class Answerer:
    """A pipeline, a chat model and (optionally) a store that keeps every trace."""

    def __init__(
        self, pipeline: Pipeline, chat: ChatModel, *, store: Store | None = None, max_tokens: int = 256
    ) -> None:
        self.pipeline = pipeline
        self.chat = chat
        self.store = store
        self.max_tokens = max_tokens

    def events(self, question: str, history: Sequence[Message] = ()) -> Generator[Event, None, Trace]:
        """The events of one answer, in order; the generator's return value is the final trace."""
        config = self.pipeline.config
        started = time.perf_counter()
        steps: dict[str, Any] = {}
        standalone = rewrite(self.chat, question, history)
        steps["rewrite"] = dataclasses.asdict(standalone)
        phrasings: list[str] = []
        if config.expand:
            phrasings, dropped = expand(self.chat, standalone.question, config.expand)
            steps["expansion"] = {"kept": phrasings, "dropped": dropped}
        hypothetical = hypothetical_passage(self.chat, standalone.question) if config.hyde else None
        if hypothetical is not None:
            steps["hyde"] = hypothetical
        yield Event("query", {"question": standalone.question, "phrasings": phrasings, "steps": steps})
        trace, packed = self.pipeline.retrieve(
            standalone.question, phrasings=phrasings, hypothetical=hypothetical
        )
        for stage in trace.stages:
            yield Event("stage", dataclasses.asdict(stage))
        yield Event(
            "context",
            {"tokens": packed.token_count, "passages": [dataclasses.asdict(p) for p in packed.passages]},
        )
        pieces: list[str] = []
        if packed.passages:
            for piece in self.chat.stream(
                answer_messages(standalone.question, packed), temperature=0.0, max_tokens=self.max_tokens
            ):
                pieces.append(piece)
                yield Event("token", {"text": piece})
        else:
            pieces.append(REFUSAL)
            yield Event("token", {"text": REFUSAL})
            steps["refusal"] = "nothing was retrieved; the model was not asked"
        answer = "".join(pieces).strip()
        cited = citations(answer, packed)
        if is_refusal(answer):
            steps.setdefault("refusal", "the model said the sources do not hold the answer")
        elif not cited and packed.passages:
            cited = attributed(answer, packed)
            steps["citations"] = "the model cited nothing; attributed by word overlap" if cited else "none"
        final = dataclasses.replace(
            trace,
            query=question,
            answer=answer,
            citations=cited,
            models={**trace.models, "chat": describe(self.chat)},
            steps=steps,
        )
        if self.store is not None:
            self.store.save_trace(final, config_hash=config.hash())
        yield Event("citations", {"citations": [dataclasses.asdict(c) for c in cited]})
        yield Event("done", {"trace_id": final.id, "elapsed_ms": (time.perf_counter() - started) * 1000})
        return final

    def ask(self, question: str, history: Sequence[Message] = ()) -> tuple[str, Trace]:
        """The answer and its trace, with every event consumed."""
        stream = self.events(question, history)
        while True:
            try:
                next(stream)
            except StopIteration as finished:
                trace: Trace = finished.value
                return trace.answer, trace
