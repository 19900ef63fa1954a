"""``clear-rag ingest`` and ``clear-rag status``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import (
    DEFAULT_STORE,
    LIST_UP_TO,
    EmbedderOption,
    StoreOption,
    TimeoutOption,
    app,
    fail,
)
from clear_rag.config import PipelineConfig
from clear_rag.errors import ClearRagError
from clear_rag.index.files import DamagedIndexError
from clear_rag.index.places import IndexHealth, existing_places, health
from clear_rag.index.sync import SyncReport, missing_lines, report_lines
from clear_rag.ingest import IngestReport, ingest
from clear_rag.ingest.walk import shown
from clear_rag.providers.select import DEFAULT_EMBEDDER
from clear_rag.store.opening import store_failure
from clear_rag.store.sqlite import Store

FILES_FOR_PROGRESS = 8
IndexConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config",
        help="Pipeline settings (.toml or .yaml): their chunking, and the indexes they search "
        "(the Porter BM25 index with stem = true, vectors when they search vectors).",
    ),
]  # below this a progress bar is only noise


@app.command("ingest")
def ingest_command(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to ingest (folders recursively).")],
    store: StoreOption = Path(DEFAULT_STORE),
    config: IndexConfigOption = None,
    chunker: Annotated[
        str | None,
        typer.Option(help="Chunker: structural (default), fixed or whole (one chunk per document)."),
    ] = None,
    size: Annotated[
        int | None, typer.Option(help="Chunk size in tokens of the embedder's tokenizer (256).")
    ] = None,
    overlap: Annotated[
        int | None, typer.Option(help="Overlap in tokens (default: about 12% of the size).")
    ] = None,
    prune: Annotated[bool, typer.Option("--prune", help="Drop documents whose files are gone.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every file.")] = False,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    timeout: TimeoutOption = None,
    index: Annotated[bool, typer.Option(help="Bring the keyword and vector indexes up to date too.")] = True,
    follow_links: Annotated[
        bool,
        typer.Option(
            "--follow-links",
            help="Ingest what symlinks out of a folder point to (skipped with a warning otherwise).",
        ),
    ] = False,
) -> None:
    """Parse, chunk and store documents, then bring the indexes up to date for what changed.

    Unchanged files are skipped at the cost of a hash; only changed documents are re-indexed and
    only their new chunks embedded. Questions never index: `clear-rag ask` loads what this leaves.
    """
    from clear_rag.chunk.factory import chunker_for

    try:
        settings = ingest_config(config, chunker=chunker, size=size, overlap=overlap)
        chunking = settings.chunking
        cutter = chunker_for(chunking)
        with Store(store, mode="write") as opened:
            try:
                report = ingest(
                    opened,
                    paths,
                    cutter,
                    prune=prune,
                    backends=dict(chunking.parsers),
                    progress=_files,
                    follow_links=follow_links,
                )
                _print_report(report, store, verbose=verbose)
                if index:
                    _update_indexes(opened, settings, embedder, timeout)
            except sqlite3.DatabaseError as err:
                # Raised past the per-file handling on purpose: the store failed (damaged pages found
                # only now, a full disk), not one file, and no other file would fare better.
                raise store_failure(err, opened.db_path) from err
    except ClearRagError as err:
        raise fail(err) from None
    if report.count("failed"):
        raise typer.Exit(1)


def ingest_config(
    config: Path | None, *, chunker: str | None, size: int | None, overlap: int | None
) -> PipelineConfig:
    """The settings an ingest works to: the config file's (or the defaults), the flags overriding its
    chunking, checked like any config (an unknown chunker or a bad size is named)."""
    settings = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
    flags = {"chunker": chunker, "size": size, "overlap": overlap}
    given = {key: value for key, value in flags.items() if value is not None}
    if given:
        chunking = {**settings.chunking.model_dump(), **given}
        settings = PipelineConfig.from_mapping(
            {**settings.to_dict(), "chunking": chunking}, source="ingest flags"
        )
    return settings


def _update_indexes(
    store: Store,
    settings: PipelineConfig,
    embedder_name: str,
    timeout: float | None,
    *,
    rebuild: bool = False,
) -> None:
    """Bring the indexes ``settings`` search up to date (``rebuild``: build them again), and say how."""
    from clear_rag.progress import Progress
    from clear_rag.providers.select import make_embedder
    from clear_rag.session import sync_indexes

    embedder = make_embedder(embedder_name, timeout=timeout) if "vector" in settings.retrievers else None
    with Progress("embed", "chunk") as bar:
        reports = sync_indexes(store, [settings], embedder, progress=bar.update, rebuild=rebuild)
    _print_syncs(reports)


def _files(files: Iterable[Path]) -> Iterable[Path]:
    from clear_rag.progress import tracked

    return tracked(files, "ingest", "file", min_total=FILES_FOR_PROGRESS)


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
        for action in ("added", "updated", "rechunked", "unchanged", "failed", "skipped", "pruned")
        if report.count(action) or action in ("unchanged", "failed")
    )
    typer.echo(f"ingest into {shown(store)}: {counts}")


@app.command("status")
def status_command(store: StoreOption = Path(DEFAULT_STORE)) -> None:
    """Show what the store holds: documents, chunks, its path and sizes, and each index beside it
    (checked against its manifest), with the documents an index had to leave out and why."""
    if not (store / "clear-rag.db").exists():
        typer.echo(
            f"error: no store at {store}. Run `clear-rag ingest PATH` first, or pass --store", err=True
        )
        raise typer.Exit(3)
    try:
        with Store(store) as opened:
            stats = opened.stats()
            chunkers = opened.chunkers()
            root = opened.root
            indexes = _index_health(opened)
    except ClearRagError as err:
        raise fail(err) from None
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
    for found in indexes:
        typer.echo(f"index      {_health_line(found)}")
    for found in indexes:
        for line in missing_lines(found.label, found.missing):
            typer.echo(line)


def _size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"


# -- clear-rag index, and the index lines of ingest and status ---------------------------------------


@app.command("index")
def index_command(
    store: StoreOption = Path(DEFAULT_STORE),
    config: IndexConfigOption = None,
    embedder: EmbedderOption = DEFAULT_EMBEDDER,
    timeout: TimeoutOption = None,
    rebuild: Annotated[
        bool,
        typer.Option("--rebuild", help="Build every index again from the store (re-embeds every chunk)."),
    ] = False,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="Hash every index file whole, even one whose size, times and inode are as its manifest "
            "recorded them: finds damage that leaves those alone, such as bit rot on the disk.",
        ),
    ] = False,
) -> None:
    """Check the store's indexes; with --rebuild, build them again from the store.

    Each index file is checked against the size and SHA-256 its manifest recorded (a file whose
    size, modification and change times and inode are still those recorded is taken as written, as
    when a question opens it; --full hashes it anyway), and the ids in the files against the chunks
    the manifest lists; the exit status is 0 only when every index can answer questions. `clear-rag
    ingest` rebuilds an index that fails its check as well.
    """
    from clear_rag.cli.app import open_existing
    from clear_rag.providers.select import make_embedder
    from clear_rag.session import check_indexes

    try:
        settings = PipelineConfig.from_file(config) if config is not None else PipelineConfig()
        with open_existing(store) as opened:
            if rebuild:
                _update_indexes(opened, settings, embedder, timeout, rebuild=True)
                return
            model = make_embedder(embedder, timeout=timeout) if "vector" in settings.retrievers else None
            found = check_indexes(opened, [settings], model, full=full)
        for checked in found:
            typer.echo(f"index {_health_line(checked)}")
            for line in missing_lines(checked.label, checked.missing):
                typer.echo(line)
        problems = [checked.problem for checked in found if checked.problem is not None]
        if problems:
            raise problems[0]
    except ClearRagError as err:
        raise fail(err) from None


def _print_syncs(reports: Iterable[SyncReport]) -> None:
    for report in reports:
        for line in report_lines(report):
            typer.echo(line)


def _index_health(store: Store) -> list[IndexHealth]:
    return [health(place, store) for place in existing_places(store)]


def _health_line(found: IndexHealth) -> str:
    """One index as its check found it: its size, or what is wrong and the command that mends it."""
    if isinstance(found.problem, DamagedIndexError):
        mend = "run `clear-rag ingest PATH` or `clear-rag index --rebuild`"
        return f"{found.label}: damaged ({found.problem.reason}); {mend}"
    if found.state == "absent":
        return f"{found.label}: not built; run `clear-rag ingest PATH`"
    line = f"{found.label}: {found.chunks} chunks of {found.documents} documents"
    if found.missing:
        line += f", {len(found.missing)} left out"
    if found.state == "behind":
        line += "; behind the store, run `clear-rag ingest PATH`"
    return line
