"""The async query runner behind the page: one question through the planner, its events as they happen.

The planner is synchronous and its model calls block (an ONNX session, llama.cpp, an HTTP stream),
so each question runs in a worker thread of its own and hands its events to the event loop through a
queue; the loop only ever waits on that queue, so one slow question never stalls another client's
stream. A client that goes away cancels the consumer, which sets the question's ``cancel`` flag: the
planner stops at its next stage or token and closes the model's stream, so no more tokens are asked
for.

The server holds one store connection for reading (SQLite is built serialized, and the planner
already reads it from its search threads) and writes a trace and a conversation's turn under one
lock, since a connection holds one transaction at a time. Pipelines are cached per config and per
state of the index files, so a question pays for loading indexes once, not every time, and an
``ingest`` while the server runs is picked up by the next question.
"""

from __future__ import annotations

import asyncio
import functools
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.errors import Cancelled, ClearRagError, ConfigError, ModelError
from clear_rag.eval.suite import merge
from clear_rag.generate.events import Event
from clear_rag.generate.planner import Planner
from clear_rag.generate.support import SupportChecker
from clear_rag.index.places import INDEX_DIR, IndexBehindError
from clear_rag.providers.base import ChatModel, Embedder, Reranker
from clear_rag.providers.select import support_checker
from clear_rag.retrieve.pipeline import Pipeline
from clear_rag.session import open_pipeline
from clear_rag.store.sqlite import Store
from clear_rag.types import Message, Trace
from clear_rag.web.request import ChatRequest

PIPELINES_KEPT = 8  # configs whose loaded indexes are kept (each Lab change is a config)
# The settings that bound a question's work and its reply: the server's values are ceilings that a
# request may lower, never raise. The predecessor let a request set answer_deadline_s and
# max_answer_chars to 1e12, and depth, top_k and budget_tokens to 10^9.
CEILINGS = ("answer_deadline_s", "max_answer_chars", "depth", "top_k", "shortlist", "expand", "budget_tokens")


@dataclass
class Models:
    """The models the server answers with, made once at start-up (tests pass the fakes). A model that
    is not here is ``None`` with the one-line reason, which ``/api/config`` shows beside its knob: said
    for a person (what is missing, the command that gets it), not the file path the error names."""

    embedder: Embedder | None
    chat: ChatModel | None
    reranker: Callable[[str], Reranker] | None = None  # by name; None: the config's own (make_reranker)
    missing: dict[str, str] = field(
        default_factory=dict
    )  # "chat", "writer" (expand, hyde), "embedder", "reranker", "support": why not
    # the support check's model by name (config.support_model); None: answers are not checked
    support: Callable[[str], SupportChecker] | None = None
    # the names the server was started with, as the CLI spells them ("embedder": "minilm")
    names: dict[str, str] = field(default_factory=dict)

    @classmethod
    def load(cls, settings: PipelineConfig, *, embedder: str, chat: str, timeout: float | None) -> Models:
        """The models named on the command line; one that is not here (a package not installed, a
        reranker not pulled) is left out with its reason rather than stopping the server, since the
        page can answer without it and says what needs it."""
        from clear_rag.providers.select import (
            embedders_here,
            make_chat,
            make_embedder,
            make_reranker,
            rerankers_here,
        )

        missing: dict[str, str] = {}
        found_embedder = None
        if "vector" in settings.retrievers:
            try:
                found_embedder = make_embedder(embedder, timeout=timeout)
            except ModelError as err:
                missing["embedder"] = _reason(embedder, err, {p.name: p.missing for p in embedders_here()})
        found_chat = None
        try:
            found_chat = make_chat(chat, timeout=timeout)
        except ModelError as err:
            missing["chat"] = _reason(chat, err)
        # what expand and hyde need: a model that writes text, which the extractive answerer does not
        if "chat" in missing:
            missing["writer"] = missing["chat"]
        elif getattr(found_chat, "quotes", False):
            missing["writer"] = (
                f"the {chat} answerer quotes the sources and writes no phrasings or HyDE passages; "
                "serve with --chat smollm2 or --chat ollama:MODEL to use them"
            )
        # One reranker per name for the server's life: the one built here to learn whether it is
        # available is the one the first question that reranks uses, not loaded a second time.
        rerankers = functools.cache(make_reranker)
        try:
            rerankers(settings.reranker)
        except ModelError as err:
            here = {p.name: p.missing for p in rerankers_here(settings.reranker)}
            missing["reranker"] = _reason(settings.reranker, err, here)
        checkers = functools.cache(support_checker)
        try:
            checkers(settings.support_model)
        except ModelError as err:
            here = {p.name: p.missing for p in rerankers_here(settings.support_model)}
            missing["support"] = _reason(settings.support_model, err, here)
        names = {"embedder": embedder, "chat": chat}
        return cls(found_embedder, found_chat, rerankers, missing, checkers, names)


def _reason(name: str, err: ModelError, here: Mapping[str, str | None] | None = None) -> str:
    """Why the model ``name`` is not here, for the page: what its files lack (``here``, from
    ``providers.select``) when they do, else the error without the path it names (a file that is
    there but would not load)."""
    found = (here or {}).get(name)
    return found if found is not None else f"{name}: {err.what}. {err.fix}"


class Runner:
    """Answers questions over one store for every client at once."""

    def __init__(self, store: Store, base: PipelineConfig, models: Models, *, workers: int = 16) -> None:
        self.store = store
        self.base = base
        self.models = models
        self._write = threading.Lock()
        self._load = threading.Lock()
        self._pipelines: OrderedDict[tuple[str, tuple[tuple[str, int], ...]], Pipeline] = OrderedDict()
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="question")
        self.cancelled = 0  # questions stopped because their client went away (tests wait on it)
        self.cancelled_event = threading.Event()
        self._running = 0
        self._quiet = threading.Condition()

    def idle(self, timeout: float) -> bool:
        """Wait until no question is being worked on (a cancelled one has stopped); False on timeout."""
        with self._quiet:
            return self._quiet.wait_for(lambda: self._running == 0, timeout)

    def close(self) -> None:
        self._pool.shutdown(wait=False, cancel_futures=True)

    # -- settings --------------------------------------------------------------------------------

    def config_for(self, overrides: Mapping[str, Any]) -> PipelineConfig:
        """The server's settings with a question's overrides merged in (a nested table key by key),
        checked like any config: an unknown key, a bad value or one above its ceiling (``CEILINGS``)
        is a ``ConfigError`` naming it."""
        config = PipelineConfig.from_mapping(merge(self.base.to_dict(), overrides), source="config")
        for name in CEILINGS:
            asked, ceiling = getattr(config, name), getattr(self.base, name)
            if asked > ceiling:
                raise ConfigError(
                    f"is above this server's ceiling of {ceiling:,}",
                    path="config",
                    field=name,
                    value=asked,
                    fix=f"A request may lower {name}, never raise it: send at most {ceiling:,}, or start "
                    f"the server with a config that sets {name} higher (clear-rag serve --config FILE)",
                )
        return config

    def pipeline(self, config: PipelineConfig) -> Pipeline:
        """The pipeline for ``config``, its indexes loaded once per state of the index files. While an
        ingest is between storing documents and indexing them, a question is answered by the last
        pipeline opened for ``config`` (its generation of the store, whole) rather than kept waiting
        for the ingest; only a config never opened before waits for it."""
        key = (config.hash(), _index_stamp(self.store))
        with self._load:
            found = self._pipelines.get(key)
            if found is None:
                make = self.models.reranker
                reranker = make(config.reranker) if config.rerank and make is not None else None
                try:
                    found = open_pipeline(
                        self.store, config, embedder=self.models.embedder, reranker=reranker, wait=False
                    )
                except IndexBehindError:
                    earlier = [p for (made_for, _), p in self._pipelines.items() if made_for == key[0]]
                    if earlier:
                        return earlier[-1]  # not cached under this stamp: the next question tries again
                    found = open_pipeline(
                        self.store, config, embedder=self.models.embedder, reranker=reranker
                    )
                self._pipelines[key] = found
                while len(self._pipelines) > PIPELINES_KEPT:
                    self._pipelines.popitem(last=False)
            self._pipelines.move_to_end(key)
            return found

    def support(self, config: PipelineConfig) -> SupportChecker | None:
        """The support check for ``config``, or ``None`` where the server has none (its reason is in
        ``/api/config``); a support model that cannot be loaded is a ``ModelError`` naming it."""
        if self.models.support is None or "support" in self.models.missing:
            return None
        return self.models.support(config.support_model)

    def history(self, conversation: str | None) -> list[Message]:
        """The conversation's earlier turns as messages, for the planner's rewrite of a follow-up."""
        if conversation is None:
            return []
        messages: list[Message] = []
        for question, answer, _ in self.store.turns(conversation):
            messages += [Message("user", question), Message("assistant", answer)]
        return messages

    # -- one question ----------------------------------------------------------------------------

    async def stream(self, request: ChatRequest, *, arrived: float | None = None) -> AsyncIterator[Event]:
        """The events of one question: the planner's as they happen, then ``done`` (or ``error``).

        The ``done`` event's timings count milliseconds from ``arrived`` (``time.perf_counter()`` when
        the request came in; else now), so they hold the whole wait the person had: ``open_ms`` until
        this stream began (the request read, the config's indexes and models opened), then the first
        stage, ``context_ms`` (retrieval done), the first token and ``total_ms``.

        Cancelling the consumer (a client that disconnected) sets the question's cancel flag; the
        worker then stops at its next stage or token.
        """
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        cancel = threading.Event()
        conversation = request.conversation or f"c-{secrets.token_hex(6)}"
        began = time.perf_counter()
        started = began if arrived is None else arrived
        timings: dict[str, float] = {"open_ms": round((began - started) * 1000, 3)}

        def emit(event: Event) -> None:
            elapsed = round((time.perf_counter() - started) * 1000, 3)
            if event.kind == "stage":
                timings.setdefault("first_stage_ms", elapsed)
            elif event.kind == "context":
                timings.setdefault("context_ms", elapsed)
            elif event.kind == "token":
                timings.setdefault("first_token_ms", elapsed)
            if event.kind == "query":
                event = Event("query", {**event.data, "conversation": conversation})
            loop.call_soon_threadsafe(queue.put_nowait, event)

        def work() -> None:
            with self._quiet:
                self._running += 1
            try:
                trace = self._answer(request, conversation, emit, cancel)
                timings["total_ms"] = round((time.perf_counter() - started) * 1000, 3)
                emit(Event("done", {"trace_id": trace.id, "conversation": conversation, "timings": timings}))
            except Cancelled:
                pass
            except ClearRagError as err:
                emit(Event("error", {"message": str(err)}))
            except Exception as err:  # a bug must still end the stream with a message, not hang it
                what = f"the question failed unexpectedly ({type(err).__name__}: {err})"
                emit(Event("error", {"message": f"{what}. Please report it with the question"}))
            finally:
                with self._quiet:
                    self._running -= 1
                    self._quiet.notify_all()
                loop.call_soon_threadsafe(queue.put_nowait, None)

        loop.run_in_executor(self._pool, work)
        finished = False
        try:
            while (event := await queue.get()) is not None:
                yield event
            finished = True
        finally:
            if not finished:
                cancel.set()
                self.cancelled += 1
                self.cancelled_event.set()

    def _answer(
        self, request: ChatRequest, conversation: str, emit: Callable[[Event], None], cancel: threading.Event
    ) -> Trace:
        config = self.config_for(request.config)
        planner = Planner(self.pipeline(config), self.models.chat, support=self.support(config))
        trace = planner.run(
            request.question,
            self.history(request.conversation),
            generate=request.generate,
            on_event=emit,
            cancel=cancel,
        )
        if not self.store.read_only:
            with self._write:
                self.store.save_trace(trace, config_hash=config.hash())
                self.store.add_turn(conversation, request.question, trace.answer, trace.id)
        return trace


def _index_stamp(store: Store) -> tuple[tuple[str, int], ...]:
    """When each index's manifest was last written: a changed stamp means reload the indexes."""
    root = store.directory / INDEX_DIR
    manifests = sorted(root.glob("*/manifest.json")) if root.is_dir() else []
    return tuple((path.parent.name, path.stat().st_mtime_ns) for path in manifests)
