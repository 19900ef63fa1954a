"""One parse scored against its truth with every metric, and several documents' scores summed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clear_rag.chunk.base import indexable
from clear_rag.eval.parse.cells import Cell, CellScore, row_cells, table_cells
from clear_rag.eval.parse.furniture import LeakScore, furniture_leakage
from clear_rag.eval.parse.order import OrderScore, reading_order
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.words import WordScore, word_recovery
from clear_rag.types import Block, Document

TABLE = "table"


@dataclass(frozen=True, slots=True)
class Truth:
    """What a document's pages hold: ``text`` in reading order (blocks separated by a blank line, table
    rows one per line with their non-empty cells separated by ``" | "``), ``tables`` as rows of cells,
    and the ``furniture`` strings (running headers, footers, page numbers) that must not reach the body."""

    text: str
    tables: tuple[tuple[tuple[str, ...], ...], ...]
    furniture: tuple[str, ...]

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str) -> Truth:
        """A truth file's content; ``ValueError`` naming ``source`` and the field when it has another
        shape."""
        text, tables, furniture = data.get("text"), data.get("tables", []), data.get("furniture", [])
        if not isinstance(text, str):
            raise ValueError(f"{source}: 'text' is {type(text).__name__}, expected a string")
        if not isinstance(tables, list) or not all(
            isinstance(t, dict)
            and isinstance(t.get("rows"), list)
            and all(isinstance(r, list) and all(isinstance(c, str) for c in r) for r in t["rows"])
            for t in tables
        ):
            raise ValueError(f"{source}: 'tables' must be a list of {{\"rows\": [[cell, ...], ...]}}")
        if not isinstance(furniture, list) or not all(isinstance(f, str) for f in furniture):
            raise ValueError(f"{source}: 'furniture' must be a list of strings")
        rows = tuple(tuple(tuple(r) for r in t["rows"]) for t in tables)
        return cls(text, rows, tuple(furniture))


def body(text: str, blocks: Sequence[Block]) -> tuple[str, tuple[Block, ...]]:
    """The part of a parse the chunks are cut from, and its blocks: ``clear_rag.chunk.base.indexable``,
    the text before the first furniture block, so that the metrics see what the index will."""
    kept = indexable(Document(id="", source="", content_hash="", text=text, blocks=tuple(blocks)))
    return kept.text, kept.blocks


def table_blocks(text: str, blocks: Iterable[Block]) -> list[list[Cell]]:
    """The non-empty cells of each ``table`` block, row by row, one list per block."""
    return [
        [c for line in text[b.start : b.end].splitlines() for c in row_cells(line)]
        for b in blocks
        if b.kind == TABLE
    ]


@dataclass(frozen=True, slots=True)
class DocumentScore:
    """Every metric of one document, or of several (``plus`` sums the counts: a micro average)."""

    words: WordScore
    order: OrderScore
    cells: CellScore
    furniture: LeakScore
    pages: int = 0
    seconds: float = 0.0
    documents: int = 1

    def plus(self, other: DocumentScore) -> DocumentScore:
        def add(a: Any, b: Any) -> Any:
            return type(a)(*(x + y for x, y in zip(_fields(a), _fields(b), strict=True)))

        return DocumentScore(
            add(self.words, other.words),
            add(self.order, other.order),
            add(self.cells, other.cells),
            add(self.furniture, other.furniture),
            self.pages + other.pages,
            self.seconds + other.seconds,
            self.documents + other.documents,
        )

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ratios first, rounded to 4 places, then the counts they are computed from."""
        return {
            "words_precision": round(self.words.precision, 4),
            "words_recall": round(self.words.recall, 4),
            "words_f1": round(self.words.f1, 4),
            "order": round(self.order.fidelity, 4),
            "cells_in_tables": round(self.cells.in_tables_rate, 4),
            "cells_anywhere": round(self.cells.anywhere_rate, 4),
            "furniture_leakage": round(self.furniture.leakage, 4),
            "pages": self.pages,
            "seconds": round(self.seconds, 3),
            "pages_per_second": round(self.pages_per_second, 2),
            "counts": {
                "tokens_parsed": self.words.parsed,
                "tokens_truth": self.words.truth,
                "tokens_matched": self.words.overlap,
                "tokens_in_order": self.order.in_order,
                "cells_truth": self.cells.truth,
                "cells_in_tables": self.cells.in_tables,
                "cells_anywhere": self.cells.anywhere,
                "furniture_on_pages": self.furniture.on_pages,
                "furniture_leaked": self.furniture.leaked,
            },
        }


def _fields(score: Any) -> tuple[Any, ...]:
    return tuple(getattr(score, f.name) for f in dataclasses.fields(score))


def score_document(
    text: str, blocks: Sequence[Block], truth: Truth, *, furniture_on_pages: int
) -> DocumentScore:
    """Every metric of one parse (``text`` and its ``blocks``) against its ``truth``.

    ``furniture_on_pages`` counts the furniture occurrences the PDF's pages carry (see
    ``furniture_leakage``); pages and seconds are left 0 for the caller to fill in.
    """
    kept, kept_blocks = body(text, blocks)
    parsed, wanted = tokens(kept), tokens(truth.text)
    return DocumentScore(
        words=word_recovery(parsed, wanted),
        order=reading_order(parsed, wanted),
        cells=table_cells(truth.tables, table_blocks(kept, kept_blocks), parsed),
        furniture=furniture_leakage(kept, truth.furniture, on_pages=furniture_on_pages),
    )


def overall(scores: Iterable[DocumentScore]) -> DocumentScore | None:
    """The micro average of ``scores`` (their counts summed), or ``None`` for none."""
    total: DocumentScore | None = None
    for score in scores:
        total = score if total is None else total.plus(score)
    return total
