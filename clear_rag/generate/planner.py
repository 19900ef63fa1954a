"""The one question path: rewrite, expansion, HyDE, retrieval, fusion, rerank, assembly, the messages
the model sees, the answer; every caller (``clear-rag ask``, the evaluation runner, the asset graph,
the server) goes through ``Planner.run``.

It is pure: it builds nothing (indexes come in loaded) and stores nothing (the caller saves the trace
it returns). It reports as it goes, through ``on_event``, the events the chat endpoint sends
(design.md, "Events on the wire"; their shapes in ``clear_rag.generate.events``): ``query``, then one
``stage`` per stage the moment that stage finishes, then ``context``, ``token`` (many) and
``citations``. ``done`` and ``error`` are the caller's, sent once the trace is stored. The trace's
``context`` is, by construction, the numbered sources inside ``messages``, which are exactly what the
model is given.

Every chat reply it reads (the answer, and the rewrite, phrasings and HyDE passage before retrieval)
is bounded here, for every model alike, by the config's ``answer_deadline_s`` and
``max_answer_chars`` (``BoundedChat``).
"""

from __future__ import annotations

import dataclasses
import secrets
import threading
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

from clear_rag.errors import Cancelled, ConfigError
from clear_rag.generate.bounds import BoundedChat
from clear_rag.generate.constrain import broken
from clear_rag.generate.events import Event, EventSink, retrieval_dict, stage_event
from clear_rag.generate.prompt import (
    REFUSAL,
    answer_messages,
    attributed,
    citations,
    is_refusal,
    sources_block,
)
from clear_rag.generate.queries import expand, hypothetical_passage, rewrite
from clear_rag.generate.support import Source, SupportChecker, outside_sources
from clear_rag.providers.base import ChatModel, describe
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.tokens import TokenCount
from clear_rag.types import Citation, ContextPassage, Message, StageResult, Support, Trace


def new_trace_id() -> str:
    """Sortable by time, unique by a random suffix: ``20261129-194501-3fa2c1``."""
    return f"{datetime.now(UTC):%Y%m%d-%H%M%S}-{secrets.token_hex(3)}"


class Planner:
    """A pipeline and (where a step needs one) a chat model: one question in, one trace out."""

    def __init__(
        self,
        pipeline: Pipeline,
        chat: ChatModel | None = None,
        *,
        max_tokens: int = 256,
        support: SupportChecker | None = None,
    ) -> None:
        self.pipeline = pipeline
        self.chat = chat
        self.max_tokens = max_tokens
        self.support = support

    def run(
        self,
        question: str,
        history: Sequence[Message] = (),
        *,
        generate: bool = True,
        on_event: EventSink | None = None,
        cancel: threading.Event | None = None,
    ) -> Trace:
        """Answer ``question`` (after the conversation ``history``); the trace of everything it went through.

        With ``generate=False`` it stops after the messages are built: every step before (the
        rewrite of a follow-up, expansion, HyDE) still runs, so an evaluation measures what a user's
        question goes through. ``cancel``, once set, stops the work at the next stage or token (a
        client that went away): the model is asked for no more tokens, and ``Cancelled`` is raised.
        """
        config = self.pipeline.config
        emit = on_event if on_event is not None else _ignore

        def check() -> None:
            if cancel is not None and cancel.is_set():
                raise Cancelled("the question was cancelled")

        steps: dict[str, Any] = {}
        chat_used = False
        searched = question
        if any(m.role == "user" for m in history):
            standalone = rewrite(
                self._chat("rewrites a follow-up question", "the rewrite"), question, history
            )
            steps["rewrite"] = dataclasses.asdict(standalone)
            searched, chat_used = standalone.question, True
        check()
        phrasings: list[str] = []
        if config.expand:
            phrasings, dropped = expand(
                self._chat("expands the query (expand > 0)", "the phrasings"), searched, config.expand
            )
            steps["expansion"] = {"kept": phrasings, "dropped": dropped}
            chat_used = True
        hypothetical = None
        if config.hyde:
            hypothetical = hypothetical_passage(
                self._chat("writes a HyDE passage (hyde = true)", "the HyDE passage"), searched
            )
            steps["hyde"] = hypothetical
            chat_used = True
        check()
        emit(
            Event(
                "query",
                {
                    "question": question,
                    "searched": searched,
                    "phrasings": phrasings,
                    "steps": steps,
                    # every stage to come, so a page can show the ones still running
                    "plan": self.pipeline.plan(searched, phrasings=phrasings, hypothetical=hypothetical),
                },
            )
        )

        def on_stage(stage: StageResult) -> None:
            check()
            emit(Event("stage", stage_event(stage)))

        counter: TokenCount | None = getattr(self.chat, "tokenizer", None) if generate else None
        retrieval = self.pipeline.retrieve(
            searched, phrasings=phrasings, hypothetical=hypothetical, on_stage=on_stage, tokenizer=counter
        )
        packed = retrieval.packed
        context = sources_block(packed.passages)
        messages = tuple(answer_messages(searched, context))
        passages = tuple(
            ContextPassage(n, p.doc_id, p.start, p.end, p.chunk_ids, p.token_count)
            for n, p in enumerate(packed.passages, start=1)
        )
        sources = [
            Source(n, p.chunk_ids[0], p.doc_id, p.start, p.text)
            for n, p in enumerate(packed.passages, start=1)
        ]
        support: Support | None = None
        if self.support is not None:
            check()
            outside = outside_sources(retrieval.stages, self.pipeline.chunk_text, config.top_k)
            support = self.support.assess(searched, sources, outside)
        emit(
            Event(
                "context",
                {
                    "text": context,
                    "tokens": packed.token_count,
                    "budget_tokens": packed.budget_tokens,
                    "passages": [
                        {**dataclasses.asdict(p), "text": packed.passages[p.number - 1].text}
                        for p in passages
                    ],
                    "chunk_ids": [cid for p in packed.passages for cid in p.chunk_ids],
                    "messages": [dataclasses.asdict(m) for m in messages],
                    **({"retrieval": retrieval_dict(support)} if support is not None else {}),
                },
            )
        )
        answer = ""
        cited: tuple[Citation, ...] = ()
        if not generate:
            steps["retrieve only"] = "stopped after the context: no answer was asked for"
        if generate:
            answer = self._generate(messages, len(packed.passages), emit, check, steps)
            chat_used = chat_used or bool(packed.passages)
            cited = citations(answer, packed)
            if is_refusal(answer):
                steps.setdefault("refusal", "the model said the sources do not hold the answer")
            elif not cited and packed.passages:
                cited = attributed(answer, packed)
                steps["citations"] = (
                    "the model cited nothing; attributed by word overlap" if cited else "none"
                )
            steps["answered by"] = self._answerer(asked=bool(packed.passages))
            emit(
                Event(
                    "citations", {"citations": [dataclasses.asdict(c) for c in cited], **steps["answered by"]}
                )
            )
            if self.support is not None and support is not None:
                check()
                support = self.support.check(support, answer, sources)
                # the spans of the sentences index this text: the answer as stored, trimmed
                emit(Event("support", {**dataclasses.asdict(support), "answer": answer}))
        models = dict(self.pipeline.models)
        if self.support is not None:
            models["support"] = self.support.name
        if counter is not None:
            models["tokenizer"] = counter.name
        if chat_used and self.chat is not None:
            models["chat"] = describe(self.chat)
        return Trace(
            id=new_trace_id(),
            query=question,
            phrasings=tuple(dict.fromkeys([searched, *phrasings])),
            stages=retrieval.stages,
            context=context,
            answer=answer,
            citations=cited,
            config={**config.to_dict(), "hash": config.hash()},
            models=models,
            created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            steps=steps,
            messages=messages,
            passages=passages,
            support=support,
        )

    def _generate(
        self,
        messages: Sequence[Message],
        sources: int,
        emit: EventSink,
        check: Callable[[], None],
        steps: dict[str, Any],
    ) -> str:
        """The answer to ``messages``, which number ``sources`` passages, streamed as ``token`` events.

        With ``constrained`` on, the model is asked to cite (``cite=sources``, see
        ``clear_rag.providers.cite``) and the answer is read against the constraint whatever the model
        did; one that breaks it is kept as it is, and ``steps["constraint"]`` says how.
        """
        if not sources:
            # nothing to answer from: the refusal, without asking the model
            emit(Event("token", {"text": REFUSAL}))
            steps["refusal"] = "nothing was retrieved; the model was not asked"
            return REFUSAL
        constrained = self.pipeline.config.constrained
        options: dict[str, object] = {"temperature": 0.0, "max_tokens": self.max_tokens}
        if constrained:
            options["cite"] = sources
        pieces: list[str] = []
        stream = self._chat("answers the question", "the answer").stream(messages, **options)
        try:
            for piece in stream:
                check()
                if piece:  # a constrained HTTP model sends "" while a sentence is still being read
                    pieces.append(piece)
                    emit(Event("token", {"text": piece}))
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()  # a generator stops here: the model is asked for no more tokens
        answer = "".join(pieces).strip()
        if constrained:
            found = broken(answer, sources)
            if found is not None:
                steps["constraint"] = found
        return answer

    def _chat(self, purpose: str, reply: str) -> BoundedChat:
        """The chat model, bounded by the config's deadline and size; ``reply`` names what it writes."""
        if self.chat is None:
            raise ConfigError(
                f"needs a chat model: the question path {purpose}",
                field="chat",
                fix="Pass a chat model (--chat smollm2, --chat ollama:MODEL, or --chat echo, the fake)",
            )
        config = self.pipeline.config
        return BoundedChat(
            self.chat, deadline_s=config.answer_deadline_s, max_chars=config.max_answer_chars, reply=reply
        )

    def _answerer(self, *, asked: bool) -> dict[str, str]:
        """Which answerer wrote the answer (the trace's ``steps["answered by"]``, and the ``citations``
        event's): its name, and whether it quotes the sources (the extractive answerer) or writes (a
        generative model); nobody, where nothing was retrieved and the refusal needed no model."""
        if self.chat is None or not asked:
            return {"answerer": "", "answerer_kind": "none"}
        kind = "extractive" if getattr(self.chat, "quotes", False) else "generative"
        return {"answerer": describe(self.chat), "answerer_kind": kind}


def _ignore(event: Event) -> None:
    """The default event sink: nobody is watching."""
