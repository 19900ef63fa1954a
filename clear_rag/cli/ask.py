"""``clear-rag ask`` and ``clear-rag replay``: one question's stages, live or from the store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import DEFAULT_STORE, EmbedderOption, StoreOption, app, fail
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError, StoreError
from clear_rag.providers.select import DEFAULT_EMBEDDER
from clear_rag.store.sqlite import Store
from clear_rag.trace import render

TopOption = Annotated[int, typer.Option("--top", help="Candidates shown per stage.")]


def _open_existing(store: Path) -> Store:
    if not (store / "clear-rag.db").exists():
        raise StoreError(
            "holds no store",
            path=str(store),
            fix="Run `clear-rag ingest PATH` first, or pass --store / CLEAR_RAG_STORE",
        )
    return Store(store)


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help="The question to retrieve for.")],
    store: StoreOption = Path(DEFAULT_STORE),
    config: Annotated[
        Path | None, typer.Option("--config", help="Pipeline settings (.toml or .yaml).")
    ] = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    no_generate: Annotated[
        bool, typer.Option("--no-generate", help="Stop after retrieval: print the stages, no answer.")
    ] = False,
    top: TopOption = 5,
) -> None:
    """Retrieve for a question; print each stage's top candidates and how their ranks moved.

    The trace is stored; `clear-rag replay ID` prints it again without any model.
    """
    from clear_rag.providers.select import make_embedder
    from clear_rag.session import open_pipeline

    try:
        settings = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
        if not no_generate:
            raise ClearRagError(
                "answer generation needs a chat model, and no chat provider is configured in this version",
                fix="Pass --no-generate to see retrieval alone",
            )
        with _open_existing(store) as opened:
            model = make_embedder(embedder) if "vector" in settings.retrievers else None
            pipeline, _ = open_pipeline(opened, settings, embedder=model)
            trace, _ = pipeline.retrieve(question)
            opened.save_trace(trace, config_hash=settings.hash())
            texts = {
                c.chunk_id: pipeline.chunk_text(c.chunk_id) for s in trace.stages for c in s.candidates[:top]
            }
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(render(trace, top=top, texts=texts))
    typer.echo(f"\ntrace {trace.id} stored; `clear-rag replay {trace.id}` prints it again without a model")


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
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(render(trace, top=top, texts=texts))
