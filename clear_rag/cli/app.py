"""The ``clear-rag`` application and the options its commands share."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from clear_rag import environ
from clear_rag.errors import ClearRagError, StoreError
from clear_rag.providers.select import CHATS, DEFAULT_TIMEOUT, EMBEDDERS, RERANKERS, TIMEOUT_ENV
from clear_rag.store.sqlite import DB_NAME, DEFAULT_DIR, STORE_ENV, Store

DEFAULT_STORE = DEFAULT_DIR
LIST_UP_TO = 30  # files listed one per line; past this only the ones that need attention

app = typer.Typer(
    help="clear-rag: local retrieval you can watch, with every technique measured.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def store_path(value: str | Path) -> Path:
    """``--store`` as given, refused when empty: ``Path("")`` is the current folder, and the
    predecessor wrote its database there, among the user's files, for ``--store ""``."""
    if str(value) == "":
        err = StoreError(
            "names no folder (an empty path would put the store in the current folder)",
            field="--store",
            value="",
            fix=f"Name the store folder, e.g. --store {DEFAULT_DIR}",
        )
        raise fail(err)
    return Path(value)


StoreOption = Annotated[
    Path,
    typer.Option(
        "--store",
        envvar=STORE_ENV,
        help=f"Store directory (database and indexes). Also ${STORE_ENV}.",
        show_default=True,
        parser=store_path,
    ),
]

EmbedderOption = Annotated[
    str,
    typer.Option(
        "--embedder",
        envvar=environ.EMBEDDER.name,
        help=f"Embedder for the vector index: {', '.join(EMBEDDERS)} (hash is the deterministic fake), or "
        "a folder `clear-rag train embedder --out` wrote.",
    ),
]


ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Pipeline settings (.toml or .yaml); their chunking defaults to the store's.",
    ),
]

ChatOption = Annotated[
    str,
    typer.Option(
        "--chat",
        envvar=environ.CHAT.name,
        help=f"Answerer: {', '.join(CHATS)}. extractive (the default) quotes the context's best sentences, "
        "each cited; smollm2 is the embedded GGUF (needs `make llama`); echo is the fake.",
    ),
]

TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        envvar=TIMEOUT_ENV,
        help="Seconds a model server (ollama:, openai:) may take to connect and to send each next piece "
        f"of an answer; default {DEFAULT_TIMEOUT:g} (a first call loads the model). Also ${TIMEOUT_ENV}. "
        "The whole answer is bounded by answer_deadline_s in --config.",
        show_default=False,
    ),
]

RerankerOption = Annotated[
    str | None,
    typer.Option(
        "--reranker",
        envvar=environ.RERANKER.name,
        help=f"Rerank the shortlist with this cross-encoder: {', '.join(RERANKERS)} (lexical is the fake). "
        "Turns reranking on; in a suite, sets the reranker of the rows that rerank.",
    ),
]

SupportOption = Annotated[
    str | None,
    typer.Option(
        "--support",
        envvar=environ.SUPPORT.name,
        help=f"Check what supports each answer sentence with this cross-encoder: {', '.join(RERANKERS)} "
        "(default: the config's support_model, scifact-minilm-l6; lexical is the fake).",
    ),
]


ResultsDirOption = Annotated[Path, typer.Option("--results-dir", help="Where result files go.")]
SetOption = Annotated[
    list[str] | None, typer.Option("--set", help="Override a setting: key=value (repeatable).")
]
AgainstOption = Annotated[
    str | None,
    typer.Option(
        help="With --save-results: compare the row with this row of the file, not the one before it."
    ),
]


def fail(err: ClearRagError) -> typer.Exit:
    """Print a project error as one line and return the exit to raise."""
    typer.echo(f"error: {err}", err=True)
    return typer.Exit(err.exit_code)


def open_existing(store: Path) -> Store:
    """The store at ``store``, which must exist already (a question is never asked of nothing).

    A store this process may not write is opened read-only: it is read as usual, and a write (a
    trace being saved, say) is refused with a ``StoreError`` naming it.
    """
    if not store.is_dir() or not (store / DB_NAME).exists():
        # Store() names a file given as the folder, and every other way the folder is unusable.
        return Store(store, mode="read")
    return Store(store)
