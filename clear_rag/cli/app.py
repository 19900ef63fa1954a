"""The ``clear-rag`` application and the options its commands share."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from clear_rag.errors import ClearRagError
from clear_rag.providers.select import EMBEDDERS

DEFAULT_STORE = ".clear-rag"
STORE_ENV = "CLEAR_RAG_STORE"
PROGRESS_FROM = 8  # files; below this a progress bar is only noise
LIST_UP_TO = 30  # files listed one per line; past this only the ones that need attention

app = typer.Typer(
    help="clear-rag: local retrieval you can watch, with every technique measured.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

StoreOption = Annotated[
    Path,
    typer.Option(
        "--store",
        envvar=STORE_ENV,
        help=f"Store directory (database and indexes). Also ${STORE_ENV}.",
        show_default=True,
    ),
]

EmbedderOption = Annotated[
    str,
    typer.Option(
        "--embedder",
        envvar="CLEAR_RAG_EMBEDDER",
        help=f"Embedder for the vector index: {', '.join(EMBEDDERS)} (hash is the deterministic fake).",
    ),
]


def fail(err: ClearRagError) -> typer.Exit:
    """Print a project error as one line and return the exit to raise."""
    typer.echo(f"error: {err}", err=True)
    return typer.Exit(err.exit_code)


class ProgressBar:
    """A progress bar that appears only once there is enough work to watch."""

    def __init__(self, desc: str, unit: str) -> None:
        self._desc, self._unit = desc, unit
        self._bar: Any = None

    def update(self, done: int, total: int) -> None:
        if self._bar is None and total >= 64:
            from tqdm import tqdm

            self._bar = tqdm(total=total, desc=self._desc, unit=self._unit, file=sys.stderr, leave=False)
        if self._bar is not None:
            self._bar.update(done - self._bar.n)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()
