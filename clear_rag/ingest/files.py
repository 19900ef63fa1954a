"""Ingestion: files in, documents and chunks in the store, only where something changed.

Each file's bytes are hashed first. An unchanged file (same hash, same parser version, same chunker
settings) costs that hash and nothing else; a file whose chunker settings changed is re-chunked from
the stored text without parsing; a changed file is parsed again and replaces its document's chunks in
one transaction. A file that fails leaves what the store had for it untouched and the run goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from clear_rag.chunk.base import Chunker
from clear_rag.errors import ClearRagError, UnreadableFileError
from clear_rag.ingest.walk import Discovery, shown, walk_paths
from clear_rag.parse.base import Parser
from clear_rag.parse.registry import file_type_of, get_parser
from clear_rag.store.reading import DocumentRecord
from clear_rag.store.sqlite import Store
from clear_rag.types import Document

Action = Literal["added", "updated", "rechunked", "unchanged", "failed", "skipped", "pruned"]


@dataclass(frozen=True, slots=True)
class FileOutcome:
    """What happened to one file (or, for ``pruned``, one document whose file is gone).

    ``path`` is printable: bytes of a name that are not UTF-8 appear as ``\\xff`` escapes.
    """

    path: str
    action: Action
    doc_id: str | None = None
    chunks: int = 0
    message: str | None = None
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """One file parsed: the document ``ingest`` would store, which parser made it, its size, warnings.

    A pipeline that parses each file once for several stores (one per chunking) hands these to
    ``ingest``, which then skips the parse wherever the file still has the same bytes.
    """

    document: Document
    parser: str
    size_bytes: int
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class IngestReport:
    outcomes: tuple[FileOutcome, ...]
    gone: tuple[str, ...] = field(default=())  # documents whose files are missing, kept (no --prune)

    def count(self, action: Action) -> int:
        return sum(1 for outcome in self.outcomes if outcome.action == action)

    @property
    def changed_doc_ids(self) -> tuple[str, ...]:
        """Documents whose chunks changed: what an index must update."""
        return tuple(
            o.doc_id for o in self.outcomes if o.doc_id and o.action in ("added", "updated", "rechunked")
        )

    @property
    def removed_doc_ids(self) -> tuple[str, ...]:
        return tuple(o.doc_id for o in self.outcomes if o.doc_id and o.action == "pruned")


def discover(
    paths: Iterable[str | Path], *, follow_links: bool = False
) -> tuple[list[Path], list[FileOutcome]]:
    """The files to ingest under ``paths``, in sorted order, and outcomes for paths that fail or
    are skipped (see ``clear_rag.ingest.walk.walk_paths``)."""
    files, outcomes, _ = _discover(paths, follow_links)
    return files, outcomes


def _discover(
    paths: Iterable[str | Path], follow_links: bool
) -> tuple[list[Path], list[FileOutcome], Discovery]:
    found = walk_paths(paths, follow_links=follow_links)
    outcomes = [
        FileOutcome(p.path, "skipped" if p.skipped else "failed", message=p.message) for p in found.problems
    ]
    return found.files, outcomes, found


def document_id(path: Path, root: Path) -> str:
    """A document's id: its path relative to the store's root, POSIX style (absolute if outside).

    Ids depend on where a file sits in the project, not on the machine, so two fresh stores over the
    same corpus (in two clones, say) give identical document and chunk ids.
    """
    absolute = Path(os.path.abspath(path))
    try:
        return shown(absolute.relative_to(root).as_posix())
    except ValueError:
        return shown(absolute.as_posix())


def chunker_key(chunker: Chunker) -> str:
    return json.dumps(dict(chunker.settings()), sort_keys=True)


def parser_key(parser: Parser) -> str:
    return f"{parser.file_type}/{parser.backend}@{parser.version}"


def ingest(
    store: Store,
    paths: Sequence[str | Path],
    chunker: Chunker,
    *,
    prune: bool = False,
    backends: dict[str, str] | None = None,
    progress: Callable[[Iterable[Path]], Iterable[Path]] | None = None,
    parsed: Mapping[str, ParsedFile] | None = None,
    follow_links: bool = False,
) -> IngestReport:
    """Bring the store up to date with the files under ``paths``.

    ``backends`` picks a parser backend per file type (e.g. ``{"pdf": "layout"}``); ``progress``
    wraps the file iteration (a progress bar); ``prune`` drops documents whose files under ``paths``
    are gone, otherwise they are kept and listed in ``IngestReport.gone``. ``parsed`` holds files
    parsed already (``parse_file``), by document id: one whose content hash and parser still match
    is stored as given instead of being parsed again. ``follow_links`` ingests what symlinks out of
    a folder point to; without it they are skipped with a warning.

    Documents under a folder that could not be listed, or behind a link now skipped, are kept: a
    file that cannot be seen is not a file that is gone.
    """
    files, outcomes, found = _discover(paths, follow_links)
    chunking = chunker_key(chunker)
    seen: set[str] = set()
    given = parsed or {}
    for path in progress(files) if progress is not None else files:
        doc_id = document_id(path, store.root)
        seen.add(doc_id)
        outcomes.append(
            _ingest_file(store, path, doc_id, chunker, chunking, backends or {}, given.get(doc_id))
        )
    hidden = [document_id(path, store.root) for path in (*found.unreadable, *found.skipped)]
    gone = _missing(store, paths, seen, hidden)
    if prune:
        for doc_id in gone:
            store.delete(doc_id)
            outcomes.append(FileOutcome(doc_id, "pruned", doc_id=doc_id))
    return IngestReport(tuple(outcomes), () if prune else tuple(gone))


def parse_file(path: Path, doc_id: str, backends: Mapping[str, str] | None = None) -> ParsedFile:
    """Read, hash and parse one file into the document ``ingest`` stores for it as ``doc_id``.

    Raises ``ClearRagError`` (a file that cannot be read or parsed) naming the file.
    """
    parser = get_parser(file_type_of(path), (backends or {}).get(file_type_of(path)))
    data = _read(path)
    return _parse(parser, data, path, doc_id, hashlib.sha256(data).hexdigest())


def _parse(parser: Parser, data: bytes, path: Path, doc_id: str, content_hash: str) -> ParsedFile:
    parsed = parser.parse(data, source=shown(path))
    source = shown(path.resolve())
    doc = Document(doc_id, source, content_hash, parsed.text, parsed.blocks, parsed.media_type)
    warnings = parsed.warnings
    if source != str(path.resolve()):
        warnings = (f"{shown(path)}: {_ESCAPED_NAME}", *warnings)
    return ParsedFile(doc, parser_key(parser), len(data), warnings)


_ESCAPED_NAME = (
    "its name is not valid UTF-8, so it is shown and stored with \\x escapes. "
    "Rename it in UTF-8 to silence this"
)


def _ingest_file(
    store: Store,
    path: Path,
    doc_id: str,
    chunker: Chunker,
    chunking: str,
    backends: dict[str, str],
    given: ParsedFile | None,
) -> FileOutcome:
    name = shown(path)
    try:
        parser = get_parser(file_type_of(path), backends.get(file_type_of(path)))
        data = _read(path)
        content_hash = hashlib.sha256(data).hexdigest()
        known = store.record(doc_id)
        step = _step(known, content_hash, parser_key(parser), chunking)
        if step == "unchanged":
            return FileOutcome(name, "unchanged", doc_id=doc_id)
        if step == "rechunk":
            chunks = chunker.chunk(store.document(doc_id))
            store.replace_chunks(doc_id, chunks, chunker=chunking)
            return FileOutcome(name, "rechunked", doc_id=doc_id, chunks=len(chunks))
        # What was parsed elsewhere counts only while the file still has those bytes.
        if given is not None and (given.document.content_hash, given.parser) == (
            content_hash,
            parser_key(parser),
        ):
            parsed = given
        else:
            parsed = _parse(parser, data, path, doc_id, content_hash)
        chunks = chunker.chunk(parsed.document)
        store.put(parsed.document, chunks, parser=parsed.parser, chunker=chunking, size_bytes=len(data))
    except ClearRagError as err:
        return _failed(store, name, doc_id, str(err))
    except Exception as err:  # a parser bug on one file must not cost the other files their ingest
        if isinstance(err, sqlite3.DatabaseError) and not isinstance(err, sqlite3.IntegrityError):
            raise  # the store itself failed (damaged, read-only, full): no other file would fare better
        kind = type(err).__name__
        what = f"{name}: parsing failed unexpectedly ({kind}: {err}). Please report it with the file"
        return _failed(store, name, doc_id, what)
    action: Action = "added" if known is None else "updated"
    return FileOutcome(name, action, doc_id=doc_id, chunks=len(chunks), warnings=parsed.warnings)


def _step(
    known: DocumentRecord | None, content_hash: str, parser: str, chunking: str
) -> Literal["unchanged", "rechunk", "write"]:
    """What a document needs: nothing, new chunks from its stored text, or to be written anew."""
    if known is None or (known.content_hash, known.parser) != (content_hash, parser):
        return "write"
    return "unchanged" if known.chunker == chunking else "rechunk"


def ingest_documents(
    store: Store,
    docs: Iterable[Document],
    chunker: Chunker,
    *,
    parser: str,
    progress: Callable[[Iterable[Document]], Iterable[Document]] | None = None,
) -> IngestReport:
    """Bring the store up to date with documents that were parsed elsewhere (a BEIR corpus, say).

    ``parser`` names where they came from, e.g. ``"beir/jsonl@1"``; each document's
    ``content_hash`` decides whether it changed, as a file's bytes do for ``ingest``.
    """
    chunking = chunker_key(chunker)
    outcomes = []
    for doc in progress(docs) if progress is not None else docs:
        known = store.record(doc.id)
        step = _step(known, doc.content_hash, parser, chunking)
        if step == "unchanged":
            outcomes.append(FileOutcome(doc.source, "unchanged", doc_id=doc.id))
            continue
        chunks = chunker.chunk(doc)
        if step == "rechunk":
            store.replace_chunks(doc.id, chunks, chunker=chunking)
        else:
            store.put(doc, chunks, parser=parser, chunker=chunking, size_bytes=len(doc.text.encode()))
        action: Action = "rechunked" if step == "rechunk" else "added" if known is None else "updated"
        outcomes.append(FileOutcome(doc.source, action, doc_id=doc.id, chunks=len(chunks)))
    return IngestReport(tuple(outcomes))


def _failed(store: Store, name: str, doc_id: str, message: str) -> FileOutcome:
    kept = store.record(doc_id) is not None
    note = ". The version ingested before is kept" if kept else ""
    return FileOutcome(name, "failed", doc_id=doc_id, message=f"{message}{note}")


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        reason = err.strerror or type(err).__name__
        fix = (
            f"It is a broken link to {shown(os.path.realpath(path))}: point it at a file or remove it"
            if isinstance(err, FileNotFoundError) and path.is_symlink()
            else "Check that it exists and that you may read it"
        )
        raise UnreadableFileError(f"cannot be read ({reason})", path=shown(path), fix=fix) from err


def _within(doc_id: str, scope: str) -> bool:
    if scope == ".":
        return not doc_id.startswith("/")
    return doc_id == scope or doc_id.startswith(scope.rstrip("/") + "/")


def _missing(store: Store, paths: Sequence[str | Path], seen: set[str], hidden: Sequence[str]) -> list[str]:
    """Stored documents under ``paths`` whose files no longer exist.

    Documents under ``hidden`` (folders that could not be listed, links skipped) are never among
    them, nor is a file whose existence cannot be checked (a folder on its path lost its
    permissions, say).
    """
    scopes = [document_id(Path(p), store.root) for p in paths]
    gone = []
    for record in store.records():
        inside = any(_within(record.id, scope) for scope in scopes)
        if not inside or record.id in seen or any(_within(record.id, folder) for folder in hidden):
            continue
        if _surely_gone(record.source):
            gone.append(record.id)
    return gone


def _surely_gone(source: str) -> bool:
    try:
        os.stat(source)
    except (FileNotFoundError, NotADirectoryError):
        return True
    except OSError:
        return False  # cannot tell (no permission to look): keep it
    return False
