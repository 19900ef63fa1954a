"""Contextual retrieval: each chunk indexed with a short prefix naming its document and section.

A chunk cut from the middle of a filing ("Net sales increased 2% compared to 2023") does not say
whose net sales, or under which heading it sat; a query naming the company or the section then
misses it. With ``chunking.contextual`` on, both indexes (BM25 and vectors) see
``"<document>. <section>.\\n"`` before the chunk's own text, while the chunk, its span and every
citation stay exactly as they were: the prefix is in what is indexed, never in what is retrieved,
shown or labelled. Written here from the idea (Anthropic, "Introducing Contextual Retrieval",
2024), without the language model that writes their prefixes: ours come from the parsed structure.

- the document: its running header (a ``furniture`` block that is not a page number), else its first
  heading, else its file name;
- the section: the headings in force at the chunk's start, outermost first (a level-2 heading under a
  level-1 one gives ``"Item 7. MD&A > Segment Operating Performance"``).

The flag travels with the chunker's settings (``Contextual`` in ``clear_rag.chunk.factory``), so a
store's documents say whether their chunks are indexed with prefixes, and turning it on or off
re-indexes them like any other chunker change.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Protocol

from clear_rag.store.sqlite import Store
from clear_rag.types import Block, Chunk, Document

MAX_PART = 120  # characters of a title or heading kept in a prefix
_PAGE_NUMBER = re.compile(r"^\W*(page\s*)?\d+(\s*(of|/)\s*\d+)?\W*$", re.I)


class Unit(Protocol):
    """What an index adds: a chunk, or a chunk's id with the prefixed text indexed for it."""

    @property
    def id(self) -> str: ...

    @property
    def doc_id(self) -> str: ...

    @property
    def text(self) -> str: ...


@dataclass(frozen=True, slots=True)
class IndexUnit:
    """What an index adds: an id, the document it belongs to, and the text to index under that id."""

    id: str
    doc_id: str
    text: str


def is_contextual(chunker_settings: str) -> bool:
    """Whether a store's recorded chunker settings (JSON) ask for contextual prefixes."""
    try:
        settings = json.loads(chunker_settings)
    except ValueError:
        return False
    return isinstance(settings, dict) and settings.get("contextual") is True


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_PART else flat[: MAX_PART - 1].rstrip() + "…"


def title(doc: Document) -> str:
    """The document's name in a prefix: its running header, first heading or file name."""
    for block in doc.blocks:
        if block.kind == "furniture":
            text = doc.text[block.start : block.end]
            if not _PAGE_NUMBER.match(text.strip()):
                return _short(text)
    for block in doc.blocks:
        if block.kind == "heading":
            return _short(doc.text[block.start : block.end])
    return PurePosixPath(doc.source or doc.id).stem


def sections(doc: Document, starts: Sequence[int]) -> list[str]:
    """For each offset in ``starts`` (ascending), the headings in force there, outermost first."""
    headings: list[Block] = sorted(
        (b for b in doc.blocks if b.kind == "heading"), key=lambda b: (b.start, b.end)
    )
    found: list[str] = []
    open_: list[tuple[int, str]] = []
    at = 0
    for start in starts:
        while at < len(headings) and headings[at].start <= start:
            heading = headings[at]
            level = heading.level or 1
            open_ = [(lv, text) for lv, text in open_ if lv < level]
            open_.append((level, _short(doc.text[heading.start : heading.end])))
            at += 1
        found.append(" > ".join(text for _, text in open_))
    return found


def prefixed(doc: Document, chunks: Iterable[Chunk]) -> Iterator[IndexUnit]:
    """Each chunk as an index unit whose text is ``"<title>. <section>.\\n<chunk text>"``."""
    listed = list(chunks)
    name = title(doc)
    for chunk, section in zip(listed, sections(doc, [c.start for c in listed]), strict=True):
        head = f"{name}. {section}." if section and section != name else f"{name}."
        yield IndexUnit(chunk.id, chunk.doc_id, f"{head}\n{chunk.text}")


def units(store: Store, doc_id: str) -> Iterable[Unit]:
    """What the indexes add for one stored document: its chunks, prefixed where its chunker says so."""
    chunks = store.chunks(doc_id)
    record = store.record(doc_id)
    if record is not None and is_contextual(record.chunker):
        return prefixed(store.document(doc_id), chunks)
    return chunks
