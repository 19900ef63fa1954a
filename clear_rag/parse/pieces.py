"""Rendered pieces into one canonical text: what the Markdown and HTML parsers share.

Each parser renders its blocks to plain text pieces; :func:`assemble` joins them and computes block
spans that satisfy the parser invariant (in order, non-overlapping, trimmed, covering every visible
character).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from clear_rag.errors import EmptyFileError
from clear_rag.types import Block, BlockKind

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
