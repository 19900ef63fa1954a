"""``clear-rag ask`` and ``clear-rag replay``: one question's stages, live or from the store."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from clear_rag.cli.app import (
    DEFAULT_STORE,
    ChatOption,
    ConfigOption,
    EmbedderOption,
    RerankerOption,
    StoreOption,
    SupportOption,
    TimeoutOption,
    app,
    fail,
    open_existing,
)
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError, ModelMissing
from clear_rag.ingest.walk import shown
from clear_rag.providers.base import close_provider
from clear_rag.providers.select import DEFAULT_CHAT, DEFAULT_EMBEDDER
from clear_rag.store.sqlite import Store
from clear_rag.trace import (
    StageRenderer,
    render,
    render_citations,
    render_query,
    render_support,
    stage_from_dict,
    support_from_dict,
)
from clear_rag.types import Candidate, Trace

if TYPE_CHECKING:
    from clear_rag.generate.events import Event

INCOMPLETE = "(answer incomplete: it was stopped by the error below, and no trace was stored)"
NOT_UTF8 = "the question is not valid UTF-8, so it is asked and stored with \\x escapes"

TopOption = Annotated[int, typer.Option("--top", help="Candidates shown per stage.")]

# When the process began loading clear-rag's commands, set by the console script's entry point
# (clear_rag.cli.main): the wait `ask --stages` reports then begins there, not at the command.
process_began: float | None = None


def run_config(
    store: Store, config: Path | None, reranker: str | None, support: str | None = None
) -> PipelineConfig:
    """The config of a question over ``store``: the file's settings (or the defaults), with the
    store's own chunking where the file names none, ``--reranker`` turning reranking on and
    ``--support`` naming the support check's model."""
    from clear_rag.session import store_chunking

    settings = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
    if "chunking" not in settings.model_fields_set:
        settings = settings.replace(chunking=store_chunking(store))
    if reranker is not None:
        settings = settings.replace(rerank=True, reranker=reranker)
    if support is not None:
        settings = settings.replace(support_model=support)
    return settings


@app.command("ask")
def ask_command(
    question: Annotated[str, typer.Argument(help="The question to answer.")],
    store: StoreOption = Path(DEFAULT_STORE),
    config: ConfigOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    chat: ChatOption = DEFAULT_CHAT,
    reranker: RerankerOption = None,
    support: SupportOption = None,
    timeout: TimeoutOption = None,
    no_generate: Annotated[
        bool,
        typer.Option(
            "--no-generate", help="Stop after retrieval: print the stages and the context, no answer."
        ),
    ] = False,
    stages: Annotated[bool, typer.Option("--stages", help="Also print the stages when answering.")] = False,
    top: TopOption = 5,
) -> None:
    """Answer a question from the store, streaming the answer, then list the cited spans.

    With --stages (or --no-generate) each stage is printed the moment it finishes: its top
    candidates, the search that found each, how their ranks moved. Either way the trace is stored;
    `clear-rag replay ID` prints it again without any model.

    An answer cut short (a model server too slow, a reply past answer_deadline_s or max_answer_chars)
    is said to be incomplete, and no trace is stored for it.

    With --stages (or --no-generate) the last lines say how long the question took in all, from when
    clear-rag began loading: loading it, opening the store, its indexes and the models, retrieval, the
    answer, storing the trace.
    """
    started = time.perf_counter()  # the command's part of the wait begins here, these imports in it
    from clear_rag.generate.planner import Planner
    from clear_rag.providers.select import make_chat, make_embedder, server_timeout, support_checker
    from clear_rag.session import open_pipeline

    question = escaped_question(question)
    chat_model = None
    pipeline = None
    printer: _Printer | None = None
    try:
        seconds = server_timeout(timeout)  # checked even when no model behind a server is used
        with open_existing(store) as opened:
            settings = run_config(opened, config, reranker, support)
            model = make_embedder(embedder, timeout=seconds) if "vector" in settings.retrievers else None
            pipeline = open_pipeline(opened, settings, embedder=model)
            if not no_generate or settings.needs_chat():
                chat_model = make_chat(chat, timeout=seconds)
            printer = _Printer(question, pipeline.chunk_text, show_stages=stages or no_generate, top=top)
            try:
                checker = support_checker(settings.support_model)
            except ModelMissing as err:
                if support is not None:  # asked for by name: that model, or nothing
                    raise
                typer.echo(f"note: the answer is not checked for support here: {err}", err=True)
                checker = None
            # the texts of the snapshot the pipeline read, not the store's now: an ingest may have moved on
            printer.document_text = pipeline.document_text
            asked = time.perf_counter()
            trace = Planner(pipeline, chat_model, support=checker).run(
                question, generate=not no_generate, on_event=printer
            )
            answered = time.perf_counter()
            retrieved = printer.retrieved_at or answered
            stored = not opened.read_only
            if stored:
                opened.save_trace(trace, config_hash=settings.hash())
            cited = render_citations(trace, pipeline.document_text) if not no_generate else ""
    except ClearRagError as err:
        if printer is not None and printer.answering:
            # The tokens printed so far are not the answer; say so, on a line of its own.
            typer.echo(f"\n{INCOMPLETE}")
        raise fail(err) from None
    finally:
        if chat_model is not None:
            close_provider(chat_model)
        if pipeline is not None:
            pipeline.close()
    if no_generate:
        typer.echo(
            f"\ncontext: {len(trace.context)} characters, {trace.stages[-1].detail.get('tokens', 0)} tokens"
        )
    else:
        typer.echo("\n" + cited)
    if stages or no_generate:
        loading = [("loading clear-rag", started - process_began)] if process_began is not None else []
        parts = [
            *loading,
            ("opening the store, indexes and models", asked - started),
            ("retrieval", retrieved - asked),
            *([("answer", answered - retrieved)] if not no_generate else []),
            ("storing the trace" if stored else "the rest", time.perf_counter() - answered),
        ]
        typer.echo("\n" + waited(parts))
    if stored:
        replay = f"`clear-rag replay {trace.id}` prints it again without a model"
        typer.echo(f"\ntrace {trace.id} stored; {replay}")
    else:
        typer.echo(f"\ntrace {trace.id} not stored: {store} is read-only (this process may not write it)")


def escaped_question(question: str) -> str:
    """The question as text that can be searched, printed and stored: bytes of it that are not UTF-8
    (which Python carries as lone surrogates, as it does in file names) written as ``\\xff`` escapes,
    with a warning. The predecessor answered such a question and then failed to store its trace with
    a ``UnicodeEncodeError`` traceback (and the shipped cross-encoder refused it with a ``TypeError``)."""
    escaped = shown(question)
    if escaped != question:
        typer.echo(f"warning: {NOT_UTF8}: {escaped}", err=True)
    return escaped


def waited(parts: Sequence[tuple[str, float]]) -> str:
    """``waited 1.23 s in all (opening ... 0.80 s, retrieval 0.30 s, ...)``: back-to-back spans of the
    wait, each in seconds, and their sum, so the parts add up to the whole."""
    shown = [(name, round(seconds, 2)) for name, seconds in parts]
    said = ", ".join(f"{name} {seconds:.2f} s" for name, seconds in shown)
    return f"waited {sum(seconds for _, seconds in shown):.2f} s in all ({said})"


class _Printer:
    """Prints the planner's events as they come: the query steps and stages (when asked), the answer;
    notes when retrieval ended (the ``context`` event), for the wait's parts."""

    def __init__(
        self, question: str, chunk_text: Callable[[str], str], *, show_stages: bool, top: int
    ) -> None:
        self.question = question
        self.show_stages = show_stages
        self.stage = StageRenderer(top=top, text=lambda c: chunk_text(c.chunk_id))
        self.answering = False
        self.document_text: Callable[[str], str] | None = None
        self.retrieved_at: float | None = None  # perf_counter at the context event

    def __call__(self, event: Event) -> None:
        data = event.data
        if event.kind == "query":
            if data["searched"] != self.question:
                typer.echo(f"(searched as: {data['searched']})")
            if self.show_stages:
                for line in render_query(data["steps"], [data["searched"], *data["phrasings"]]):
                    typer.echo(line)
        elif event.kind == "stage" and self.show_stages:
            typer.echo("\n" + self.stage(stage_from_dict(data)))
        elif event.kind == "token":
            if not self.answering:
                typer.echo("\nanswer:" if self.show_stages else "")
                self.answering = True
            sys.stdout.write(data["text"])
            sys.stdout.flush()
        elif event.kind == "context":
            self.retrieved_at = time.perf_counter()
            weak = data.get("retrieval", {})
            if weak.get("weak"):
                typer.echo(f"\n! retrieval looks weak: {weak['weak_reason']}")
        elif event.kind == "citations":
            sys.stdout.write("\n")
        elif event.kind == "support":
            typer.echo("\n" + render_support(support_from_dict(data), self.document_text))


@app.command("replay")
def replay_command(
    trace_id: Annotated[
        str | None, typer.Argument(help="A stored trace id (a unique prefix will do).")
    ] = None,
    store: StoreOption = Path(DEFAULT_STORE),
    list_: Annotated[bool, typer.Option("--list", help="List the newest stored traces.")] = False,
    top: TopOption = 5,
) -> None:
    """Print a stored trace: every stage, its candidates and rank moves, what supports each sentence of
    the answer. Needs no model."""
    from clear_rag.generate.verdicts import judge

    try:
        with open_existing(store) as opened:
            if list_ or trace_id is None:
                for found, created, query in opened.traces():
                    typer.echo(f"{found}  {created}  {query}")
                return
            trace: Trace = opened.load_trace(trace_id)

            def text(cand: Candidate) -> str:
                try:
                    return opened.document_text(cand.doc_id)[cand.start : cand.end]
                except KeyError:
                    return "(document no longer in the store)"

            shown = render(trace, top=top, text=text)
            cited = render_citations(trace, opened.document_text) if trace.answer else ""
            # the verdicts taken again from the stored evidence, by the same rules, with no model
            support = judge(trace.support, trace.answer) if trace.support is not None else None
            checked = render_support(support, opened.document_text) if support is not None else ""
    except ClearRagError as err:
        raise fail(err) from None
    typer.echo(shown)
    if cited:
        typer.echo("\n" + cited)
    if checked:
        typer.echo("\n" + checked)
