"""The ``clear-rag`` command line. Errors of the project become one line and an exit code."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from clear_rag.errors import ClearRagError
from clear_rag.ingest import IngestReport, ingest
from clear_rag.store.sqlite import Store

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


def _fail(err: ClearRagError) -> typer.Exit:
    typer.echo(f"error: {err}", err=True)
    return typer.Exit(err.exit_code)


@app.command("ingest")
def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to ingest (folders recursively).")],
    store: StoreOption = Path(DEFAULT_STORE),
    chunker: Annotated[str, typer.Option(help="Chunker: fixed or structural.")] = "structural",
    size: Annotated[int, typer.Option(help="Chunk size in tokens of the embedder's tokenizer.")] = 256,
    overlap: Annotated[
        int | None, typer.Option(help="Overlap in tokens (default: about 12% of the size).")
    ] = None,
    prune: Annotated[bool, typer.Option("--prune", help="Drop documents whose files are gone.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every file.")] = False,
) -> None:
    """Parse, chunk and store documents; unchanged files are skipped at the cost of a hash."""
    from clear_rag.chunk.factory import make_chunker

    try:
        cutter = make_chunker(chunker, size=size, overlap=overlap)
        with Store(store) as opened:
            report = ingest(opened, paths, cutter, prune=prune, progress=_progress)
    except ClearRagError as err:
        raise _fail(err) from None
    except ValueError as err:
        typer.echo(f"error: {err}", err=True)
        raise typer.Exit(2) from None
    _print_report(report, store, verbose=verbose)
    if report.count("failed"):
        raise typer.Exit(1)


def _progress(files: Iterable[Path]) -> Iterable[Path]:
    items = list(files)
    if len(items) < PROGRESS_FROM:
        return items
    from tqdm import tqdm

    return tqdm(items, desc="ingest", unit="file", file=sys.stderr, leave=False)


def _print_report(report: IngestReport, store: Path, *, verbose: bool) -> None:
    listed = verbose or len(report.outcomes) <= LIST_UP_TO
    for outcome in report.outcomes:
        if listed or outcome.action != "unchanged":
            detail = f"  ({outcome.chunks} chunks)" if outcome.chunks else ""
            line = f"  {outcome.action:<10} {outcome.path}{detail}"
            typer.echo(line if outcome.message is None else f"  {outcome.action:<10} {outcome.message}")
        for warning in outcome.warnings:
            typer.echo(f"  {'warning':<10} {warning}")
    for doc_id in report.gone:
        typer.echo(f"  {'gone':<10} {doc_id} (its file is missing; run with --prune to drop it)")
    counts = ", ".join(
        f"{report.count(action)} {action}"
        for action in ("added", "updated", "rechunked", "unchanged", "failed", "pruned")
        if report.count(action) or action in ("unchanged", "failed")
    )
    typer.echo(f"ingest into {store}: {counts}")


@app.command("status")
def status_command(store: StoreOption = Path(DEFAULT_STORE)) -> None:
    """Show what the store holds: documents, chunks, its path and sizes."""
    if not (store / "clear-rag.db").exists():
        typer.echo(
            f"error: no store at {store}. Run `clear-rag ingest PATH` first, or pass --store", err=True
        )
        raise typer.Exit(3)
    try:
        with Store(store) as opened:
            stats = opened.stats()
            chunkers = sorted({record.chunker for record in opened.records()})
            root = opened.root
    except ClearRagError as err:
        raise _fail(err) from None
    kinds = ", ".join(f"{kind} {n}" for kind, n in stats.by_media_type.items())
    mean = stats.chunk_tokens / stats.chunks if stats.chunks else 0.0
    typer.echo(f"store      {store.resolve()}")
    typer.echo(f"root       {root}  (document ids are paths relative to it)")
    typer.echo(f"database   {_size(stats.db_bytes)}")
    typer.echo(f"documents  {stats.documents}" + (f"  ({kinds})" if kinds else ""))
    typer.echo(f"blocks     {stats.blocks}")
    typer.echo(
        f"chunks     {stats.chunks}  (tokens: {stats.chunk_tokens} in all, mean {mean:.0f}, "
        f"max {stats.max_chunk_tokens})"
    )
    for key in chunkers:
        typer.echo(f"chunker    {key}")


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


def main() -> None:
    app()


if __name__ == "__main__":
    main()
