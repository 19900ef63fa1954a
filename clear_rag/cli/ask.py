"""``clear-rag ask`` and ``clear-rag replay``: one question's stages, live or from the store."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import DEFAULT_STORE, EmbedderOption, StoreOption, app, fail
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError, StoreError
from clear_rag.generate.answer import Answerer
from clear_rag.providers.select import DEFAULT_CHAT, DEFAULT_EMBEDDER
from clear_rag.store.sqlite import Store
from clear_rag.trace import from_dict, render, render_citations
from clear_rag.types import Trace

TopOption = Annotated[int, typer.Option("--top", help="Candidates shown per stage.")]


def _open_existing(store: Path) -> Store:
    if not (store / "clear-rag.db").exists():
        raise StoreError(
            "holds no store",
            path=str(store),
            fix="Run `clear-rag ingest PATH` first, or pass --store / CLEAR_RAG_STORE",
        )
    return Store(store)


ChatOption = Annotated[
    str,
    typer.Option(
        "--chat",
        envvar="CLEAR_RAG_CHAT",
        help="Chat model: smollm2 (embedded GGUF), ollama:MODEL, or openai:MODEL (OpenAI-compatible server).",
    ),
]


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    store: StoreOption = Path(DEFAULT_STORE),
    config: Annotated[
        Path | None, typer.Option("--config", help="Pipeline settings (.toml or .yaml).")
    ] = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    chat: ChatOption = DEFAULT_CHAT,
    no_generate: Annotated[
        bool, typer.Option("--no-generate", help="Stop after retrieval: print the stages, no answer.")
    ] = False,
    stages: Annotated[bool, typer.Option("--stages", help="Also print the stages when answering.")] = False,
    top: TopOption = 5,
) -> None:
    """Answer a question from the store, streaming the answer, then list the cited spans.

    With --no-generate, print each stage's top candidates and how their ranks moved instead. Either
    way the trace is stored; `clear-rag replay ID` prints it again without any model.
    """
    from clear_rag.providers.select import make_chat, make_embedder
    from clear_rag.session import open_pipeline

    try:
        settings = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
        with _open_existing(store) as opened:
            model = make_embedder(embedder) if "vector" in settings.retrievers else None
            pipeline, _ = open_pipeline(opened, settings, embedder=model)
            if no_generate:
                trace, _ = pipeline.retrieve(question)
                opened.save_trace(trace, config_hash=settings.hash())
            else:
                chat_model = make_chat(chat)
                try:
                    answerer = Answerer(pipeline, chat_model, store=opened)
                    trace = _answer(answerer, question, stages=stages, top=top)
                finally:
                    _close(chat_model)
            texts = {
                c.chunk_id: pipeline.chunk_text(c.chunk_id) for s in trace.stages for c in s.candidates[:top]
            }
            cited = render_citations(trace, opened.document_text)
    except ClearRagError as err:
        raise fail(err) from None
    if no_generate:
        typer.echo(render(trace, top=top, texts=texts))
    else:
        typer.echo("\n" + cited)
    typer.echo(f"\ntrace {trace.id} stored; `clear-rag replay {trace.id}` prints it again without a model")


def _close(provider: object) -> None:
    """Close a provider that holds a connection (the HTTP ones do); others have nothing to close."""
    close = getattr(provider, "close", None)
    if callable(close):
        close()


def _answer(answerer: Answerer, question: str, *, stages: bool = False, top: int = 5) -> Trace:
    """Print the stages (when asked) as the events bring them, then stream the answer; the trace."""
    events = answerer.events(question)
    seen: list[dict[str, object]] = []
    while True:
        try:
            event = next(events)
        except StopIteration as finished:
            trace: Trace = finished.value
            return trace
        if event.kind == "query" and event.data["question"] != question:
            typer.echo(f"(searched as: {event.data['question']})")
        elif event.kind == "stage":
            seen.append(event.data)
        elif event.kind == "context" and stages:
            so_far = from_dict({"id": "", "query": question, "stages": seen})
            texts = {
                c.chunk_id: answerer.pipeline.chunk_text(c.chunk_id)
                for s in so_far.stages
                for c in s.candidates[:top]
            }
            typer.echo("\n".join(render(so_far, top=top, texts=texts).splitlines()[1:]) + "\n\nanswer:")
        elif event.kind == "token":
            sys.stdout.write(event.data["text"])
            sys.stdout.flush()
        elif event.kind == "citations":
            sys.stdout.write("\n")


@app.command("replay")
def replay_command(
    trace_id: Annotated[
        str | None, typer.Argument(help="A stored trace id (a unique prefix will do).")
    ] = None,
    store: StoreOption = Path(DEFAULT_STORE),
    list_: Annotated[bool, typer.Option("--list", help="List the newest stored traces.")] = False,
    top: TopOption = 5,
) -> None:
    """Print a stored trace: every stage, its candidates and rank moves. Needs no model."""
    try:
        with _open_existing(store) as opened:
            if list_ or trace_id is None:
                for found, created, query in opened.traces():
                    typer.echo(f"{found}  {created}  {query}")
                return
            trace = opened.load_trace(trace_id)
            texts = {}
            for stage in trace.stages:
                for cand in stage.candidates[:top]:
                    try:
                        texts[cand.chunk_id] = opened.document_text(cand.doc_id)[cand.start : cand.end]
                    except KeyError:
                        texts[cand.chunk_id] = "(document no longer in the store)"
            cited = render_citations(trace, opened.document_text) if trace.answer else ""
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(render(trace, top=top, texts=texts))
    if cited:
        typer.echo("\n" + cited)
