"""One parse scored against its truth with every metric, and several documents' scores summed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from clear_rag.chunk.base import indexable
from clear_rag.eval.parse.cells import CellScore, row_cells, table_cells
from clear_rag.eval.parse.furniture import LeakScore, furniture_leakage, on_pages
from clear_rag.eval.parse.headings import HeadingScore, heading_recovery
from clear_rag.eval.parse.order import OrderScore, reading_order
from clear_rag.eval.parse.rows import Row, RowScore, table_rows
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.truth import Truth
from clear_rag.eval.parse.words import WordScore, word_recovery
from clear_rag.types import Block, Document

TABLE = "table"
HEADING = "heading"


def body(text: str, blocks: Sequence[Block]) -> tuple[str, tuple[Block, ...]]:
    """The part of a parse the chunks are cut from, and its blocks: ``clear_rag.chunk.base.indexable``,
    the text before the first furniture block, so that the metrics see what the index will."""
    kept = indexable(Document(id="", source="", content_hash="", text=text, blocks=tuple(blocks)))
    return kept.text, kept.blocks


def table_blocks(text: str, blocks: Iterable[Block]) -> list[list[Row]]:
    """The rows of each ``table`` block (a row per line), each row its non-empty cells; one list per
    block. Lines with no cell are no row."""
    return [
        [row for line in text[b.start : b.end].splitlines() if (row := tuple(row_cells(line)))]
        for b in blocks
        if b.kind == TABLE
    ]


@dataclass(frozen=True, slots=True)
class DocumentScore:
    """Every metric of one document, or of several (``plus`` sums the counts: a micro average)."""

    words: WordScore
    order: OrderScore
    cells: CellScore
    rows: RowScore
    furniture: LeakScore
    headings: HeadingScore
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
            add(self.rows, other.rows),
            add(self.furniture, other.furniture),
            add(self.headings, other.headings),
            self.pages + other.pages,
            self.seconds + other.seconds,
            self.documents + other.documents,
        )

    @property
    def pages_per_second(self) -> float:
        return self.pages / self.seconds if self.seconds > 0 else 0.0

    def to_dict(self) -> dict[str, Any]:
        """The ratios first, rounded to 4 places, then the counts they are computed from. A ratio with
        nothing to measure is ``None`` (not measured): the cells where the truth lists no table, the
        furniture leaked where the pages print none, the headings where the truth lists none."""
        tables = self.cells.truth > 0
        return {
            "words_precision": round(self.words.precision, 4),
            "words_recall": round(self.words.recall, 4),
            "words_f1": round(self.words.f1, 4),
            "order": round(self.order.fidelity, 4),
            "cells_in_tables": round(self.cells.in_tables_rate, 4) if tables else None,
            "cells_anywhere": round(self.cells.anywhere_rate, 4) if tables else None,
            "cells_in_rows": round(self.rows.rate, 4) if tables else None,
            "furniture_leakage": round(self.furniture.leakage, 4) if self.furniture.on_pages else None,
            "headings_recall": _rounded(self.headings.recall),
            "headings_precision": _rounded(self.headings.precision),
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
                "cells_in_rows": self.rows.in_rows,
                "furniture_on_pages": self.furniture.on_pages,
                "furniture_leaked": self.furniture.leaked,
                "headings_truth": self.headings.truth,
                "headings_parsed": self.headings.parsed,
                "headings_matched": self.headings.matched,
            },
        }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def _fields(score: Any) -> tuple[Any, ...]:
    return tuple(getattr(score, f.name) for f in dataclasses.fields(score))


def score_document(text: str, blocks: Sequence[Block], truth: Truth, *, pages: str) -> DocumentScore:
    """Every metric of one parse (``text`` and its ``blocks``) against its ``truth``.

    ``pages`` is a full extraction of the PDF, every word its pages carry: what the furniture the pages
    print is counted in (``furniture.on_pages``). Pages and seconds are left 0 for the caller to fill in.
    """
    kept, kept_blocks = body(text, blocks)
    parsed, wanted = tokens(kept), tokens(truth.text)
    tables = table_blocks(kept, kept_blocks)
    printed = on_pages(pages, truth.text, truth.furniture)
    return DocumentScore(
        words=word_recovery(parsed, wanted),
        order=reading_order(parsed, wanted),
        cells=table_cells(truth.tables, [[c for row in t for c in row] for t in tables], parsed),
        rows=table_rows(truth.tables, tables),
        furniture=furniture_leakage(parsed, wanted, truth.furniture, printed),
        headings=heading_recovery(
            (kept[b.start : b.end] for b in kept_blocks if b.kind == HEADING), truth.headings
        ),
    )


def overall(scores: Iterable[DocumentScore]) -> DocumentScore | None:
    """The micro average of ``scores`` (their counts summed), or ``None`` for none."""
    total: DocumentScore | None = None
    for score in scores:
        total = score if total is None else total.plus(score)
    return total
