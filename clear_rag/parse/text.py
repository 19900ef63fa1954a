"""Plain text: the decoded file is the canonical text; blank lines separate its blocks.

This module also holds :func:`assemble`, which the Markdown and HTML parsers use to join the
pieces they render into one canonical text with block spans that satisfy the parser invariant.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from clear_rag.errors import EmptyFileError
from clear_rag.parse.base import Parsed, decode_text
from clear_rag.types import Block, BlockKind

# A list item starts with a bullet or a number, then a space: `- a`, `* a`, `+ a`, `1. a`, `1) a`.
# ASCII digits only: `\d` would also take other scripts' digits, which nobody numbers a list with.
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*+]|[0-9]{1,9}[.)])[ \t]")

BLOCK_SEPARATOR = "\n\n"


@dataclass(frozen=True, slots=True)
class Piece:
    """One rendered block before assembly: its kind, its text, and the facts its `Block` records."""

    kind: BlockKind
    text: str
    level: int = 0
    meta: Mapping[str, str] = field(default_factory=dict)


def assemble(pieces: Iterable[Piece]) -> tuple[str, tuple[Block, ...]]:
    """Join pieces with a blank line between them; return the text and one block per piece.

    Pieces with no visible character are left out. Each block's span is trimmed of surrounding
    whitespace, so blocks are in order, never overlap, and cover every non-whitespace character.
    Code keeps the indentation of its first line in the text (only the span skips it).
    """
    parts: list[str] = []
    blocks: list[Block] = []
    offset = 0
    for piece in pieces:
        text = _trim(piece.text, keep_indent=piece.kind == "code")
        if not text:
            continue
        if parts:
            offset += len(BLOCK_SEPARATOR)
        lead = len(text) - len(text.lstrip())
        blocks.append(Block(piece.kind, offset + lead, offset + len(text), piece.level, dict(piece.meta)))
        parts.append(text)
        offset += len(text)
    return BLOCK_SEPARATOR.join(parts), tuple(blocks)


def _trim(text: str, *, keep_indent: bool) -> str:
    if not text.strip():
        return ""
    if not keep_indent:
        return text.strip()
    lines = text.rstrip().split("\n")
    while not lines[0].strip():
        lines.pop(0)
    return "\n".join(lines)


def no_text_error(source: str, what: str) -> EmptyFileError:
    """The error for a file whose bytes decode but leave nothing a person could read."""
    return EmptyFileError(
        f"has no text once parsed ({what})",
        path=source,
        fix="Add text to it or remove it from the folder",
    )


class TextParser:
    """Plain text as written: runs of lines between blank lines become paragraphs or lists."""

    file_type = "text"
    backend = "plain"
    version = "1"

    def parse(self, data: bytes, *, source: str) -> Parsed:
        text, warnings = decode_text(data, source=source)
        blocks = tuple(_blocks(text))
        if not blocks:
            raise no_text_error(source, "only whitespace")
        return Parsed(text=text, blocks=blocks, media_type="text/plain", warnings=warnings)


def _blocks(text: str) -> Iterable[Block]:
    # Split on "\n" only: str.splitlines would also break at form feeds and U+2028, and the
    # offsets it implies would then disagree with the text.
    run: list[str] = []
    run_start = offset = 0
    for line in [*text.split("\n"), ""]:
        if line.strip():
            if not run:
                run_start = offset
            run.append(line)
        elif run:
            yield _run_block(run, run_start)
            run = []
        offset += len(line) + 1


def _run_block(lines: list[str], start: int) -> Block:
    body = "\n".join(lines)
    lead = len(body) - len(body.lstrip())
    end = start + len(body.rstrip())
    if all(_LIST_ITEM.match(line) for line in lines):
        return Block("list", start + lead, end, level=1)
    return Block("paragraph", start + lead, end)
