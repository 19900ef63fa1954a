"""A drawn PDF and its truth: every piece of text drawn, in reading order, and what each piece is.

The truth is kept as drawn (``Drawn.pieces``) so that a test can ask what it needs (the headings with
their levels, the captions, the code lines, the text set apart) and the same record writes the truth
file ``clear-rag parse-eval`` scores against (``Drawn.truth_file``, the format of
``clear_rag.eval.parse.truth``): the visible text in reading order, the tables cell by cell, the
headings, and the furniture (running headers, footers, page numbers, and text at an angle that a
parser sets apart) that must not reach the body.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from clear_rag.eval.parse.cells import CELL_SEPARATOR
from clear_rag.eval.parse.truth import Truth

# text: a body line; heading (with its level); caption and code: body lines that are no heading;
# row: a table row (its non-empty cells joined by " | "); math: a display equation's line; furniture:
# a running header, footer or page number as printed; apart: text at an angle to the body.
Kind = Literal["text", "heading", "caption", "code", "row", "math", "furniture", "apart"]
NOT_BODY = frozenset({"furniture", "apart"})
Rows = tuple[tuple[str, ...], ...]


@dataclass(frozen=True, slots=True)
class Piece:
    kind: Kind
    text: str
    level: int = 0  # a heading's


def pieces(kind: Kind, texts: Sequence[str]) -> list[Piece]:
    return [Piece(kind, text) for text in texts]


def row_piece(row: Sequence[str]) -> Piece:
    """A table row as the truth text writes it: its non-empty cells joined by ``" | "``."""
    return Piece("row", CELL_SEPARATOR.join(cell for cell in row if cell))


@dataclass(frozen=True, slots=True)
class Drawn:
    """A PDF and everything drawn on it: ``pieces`` in reading order, ``tables`` as rows of cells (an
    empty cell as ``""``), each table's rows also among the pieces as ``row`` pieces."""

    pdf: bytes
    pieces: tuple[Piece, ...]
    tables: tuple[Rows, ...] = ()

    def of(self, *kinds: Kind) -> list[str]:
        """The texts of the pieces of ``kinds``, in reading order, repeats kept."""
        return [p.text for p in self.pieces if p.kind in kinds]

    @property
    def body(self) -> list[str]:
        """The body's text lines (no heading, caption, code, table row or equation)."""
        return self.of("text")

    @property
    def headings(self) -> list[tuple[str, int]]:
        return [(p.text, p.level) for p in self.pieces if p.kind == "heading"]

    @property
    def furniture(self) -> list[str]:
        """Running headers, footers and page numbers, each time a page prints one."""
        return self.of("furniture")

    @property
    def apart(self) -> list[str]:
        """Text at an angle to the body, each time it is drawn."""
        return self.of("apart")

    @property
    def rows(self) -> Rows:
        """Every table's rows, one table after another."""
        return tuple(row for table in self.tables for row in table)

    def text(self) -> str:
        """The visible text but the furniture, in reading order: pieces of one kind one a line, a
        blank line where the kind changes (a table's rows are one block)."""
        out: list[str] = []
        last: Kind | None = None
        for piece in self.pieces:
            if piece.kind in NOT_BODY:
                continue
            if out:
                out.append("\n" if piece.kind == last else "\n\n")
            out.append(piece.text)
            last = piece.kind
        return "".join(out)

    def truth(self) -> Truth:
        """The truth the metrics compare with (``clear_rag.eval.parse.truth.Truth``)."""
        furniture = dict.fromkeys(p.text for p in self.pieces if p.kind in NOT_BODY)
        return Truth(self.text(), self.tables, tuple(furniture), tuple(self.of("heading")))

    def truth_file(self, source: str) -> dict[str, Any]:
        """The truth as a truth file's JSON object (site/parse.md, "Ground truth files")."""
        truth = self.truth()
        found: dict[str, Any] = {"source": source, "text": truth.text}
        if truth.tables:
            found["tables"] = [{"rows": [list(row) for row in table]} for table in truth.tables]
        if truth.furniture:
            found["furniture"] = list(truth.furniture)
        if truth.headings:
            found["headings"] = list(truth.headings)
        return found
