"""``clear-rag text``: the canonical text a document parses to, which golden quotes must match."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Annotated

import typer

from clear_rag.cli.app import DEFAULT_STORE, StoreOption, app, fail
from clear_rag.errors import ClearRagError, InputError, UnreadableFileError
from clear_rag.store.sqlite import DB_NAME, STORE_ENV, Store
from clear_rag.types import Block

PREVIEW = 60  # characters of a block's text shown by --blocks
SUGGEST = 5  # document ids offered when the one given is not in the store


@app.command("text")
def text_command(
    target: Annotated[str, typer.Argument(help="A file to parse, or the id of a document in the store.")],
    blocks: Annotated[
        bool, typer.Option("--blocks", help="List the typed blocks and their spans instead of the text.")
    ] = False,
    store: StoreOption = Path(DEFAULT_STORE),
) -> None:
    """Print the canonical text a file parses to, or a stored document's: the text quotes must match.

    A golden quote must match this text exactly, whitespace runs collapsed (markup is not part of it).
    A file is parsed afresh; anything else is looked up as a document id in the store.
    """
    try:
        if Path(target).exists():
            text, typed = _from_file(Path(target))
        else:
            text, typed = _from_store(target, store, blocks=blocks)
    except ClearRagError as err:
        raise fail(err) from None
    if blocks:
        for line in block_lines(text, typed):
            typer.echo(line)
    else:
        typer.echo(text, nl=not text.endswith("\n"))


def block_lines(text: str, blocks: tuple[Block, ...]) -> list[str]:
    """One line per block: kind, level, ``[start, end)`` and the start of its text, whitespace collapsed."""
    spans = [f"[{block.start}, {block.end})" for block in blocks]
    width = max((len(span) for span in spans), default=len("span"))
    lines = [f"{'kind':<9}  level  {'span':<{width}}  text"]
    for block, span in zip(blocks, spans, strict=True):
        preview = " ".join(text[block.start : block.end].split())
        if len(preview) > PREVIEW:
            preview = preview[: PREVIEW - 3] + "..."
        lines.append(f"{block.kind:<9}  {block.level:>5}  {span:<{width}}  {preview}")
    return lines


def _from_file(path: Path) -> tuple[str, tuple[Block, ...]]:
    from clear_rag.ingest import parse_file

    if not path.is_file():
        raise InputError("is a folder", path=str(path), fix="Name one file in it")
    parsed = parse_file(path, path.as_posix())
    for warning in parsed.warnings:  # on stderr, so the text on stdout stays exactly the document's
        typer.echo(f"warning: {warning}", err=True)
    return parsed.document.text, parsed.document.blocks


def _from_store(target: str, directory: Path, *, blocks: bool) -> tuple[str, tuple[Block, ...]]:
    """The stored document ``target`` names, as given or as a path relative to the store's root.

    Its blocks are read only when ``blocks`` asks for them.
    """
    from clear_rag.ingest import document_id

    if not (directory / DB_NAME).exists():
        raise UnreadableFileError(
            f"is not a file, and there is no store at {directory} to look it up in as a document id",
            path=target,
            fix=f"Check the path, or name the store with --store (or ${STORE_ENV})",
        )
    with Store(directory) as opened:
        for doc_id in dict.fromkeys([target, document_id(Path(target), opened.root)]):
            if opened.record(doc_id) is not None:
                typed = opened.document(doc_id).blocks if blocks else ()
                return opened.document_text(doc_id), typed
        ids = [record.id for record in opened.records()]
    raise InputError(
        f"is neither a file nor a document id in the store at {directory}",
        path=target,
        fix=_suggest(target, ids),
    )


def _suggest(target: str, ids: list[str]) -> str:
    """What to pass instead: ids that contain ``target`` or look like it, else a few of those there are."""
    if not ids:
        return "The store holds no documents: run `clear-rag ingest PATH` first, or pass a file's path"
    close = [i for i in ids if target in i] + difflib.get_close_matches(target, ids, n=SUGGEST, cutoff=0.6)
    if close:
        return f"Pass a file's path or a stored id; did you mean {', '.join(dict.fromkeys(close[:SUGGEST]))}?"
    shown = ", ".join(ids[:SUGGEST])
    return f"Pass a file's path or a stored id, such as {shown} ({len(ids)} in the store)"
