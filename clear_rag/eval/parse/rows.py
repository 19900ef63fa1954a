"""Table cells of the truth recovered with their row: a truth row counts only when its cells stand
together, in order, in one row of a parsed table block.

``cells_in_tables`` (``cells``) credits a truth cell found anywhere in the table block paired with
its table, so a table whose row labels were moved out of it (the block holds ``94,000 | 20,000``, and
``Staff Travel`` follows as a paragraph) still scored 5 of 6 cells a row. This measure loses the whole
row: a number cut from its label says nothing a question can use.

For a truth table T and a parsed table block B (rows of non-empty cells, ``cells.row_cells``):

    whole(T, B) = max over matchings of T's rows to B's rows (each row used at most once) of
                  sum over the matched truth rows r of |r|
    where truth row r may be matched to parsed row p when r's cells are a subsequence of p's cells
    (in order; p may hold more, such as a ``$`` column or a cell the truth left empty).

Truth tables and parsed blocks are paired one to one, greedily by the largest ``whole`` first (ties:
earlier truth table, then earlier block), and ``in_rows`` sums ``whole`` over the pairs:

    cells_in_rows = in_rows / truth cells

A truth row of no cells counts for nothing; no truth cells at all: 1.0. The matching is exact: the
truth rows, heaviest first, each take a parsed row by an augmenting path (Kuhn's algorithm), which for
weights on one side gives a maximum-weight matching (the matched sets form a transversal matroid, on
which the greedy choice by weight is optimal; Edmonds 1971).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clear_rag.eval.parse.cells import Cell, cell, pair_greedily
from clear_rag.eval.parse.tokens import ratio

Row = tuple[Cell, ...]


@dataclass(frozen=True, slots=True)
class RowScore:
    """``in_rows / truth``: truth cells recovered with their whole row (the module's formula)."""

    in_rows: int
    truth: int

    @property
    def rate(self) -> float:
        return ratio(self.in_rows, self.truth, empty=1.0)


def holds(parsed: Row, wanted: Row) -> bool:
    """Whether ``wanted``'s cells are a subsequence of ``parsed``'s, in order."""
    rest = iter(parsed)
    return all(any(c == p for p in rest) for c in wanted)


def whole(truth: Sequence[Row], parsed: Sequence[Row]) -> int:
    """``whole(T, B)``: the most truth cells whose rows can be matched to distinct parsed rows."""
    fits = [[j for j, p in enumerate(parsed) if holds(p, r)] for r in truth]
    owner: dict[int, int] = {}  # parsed row -> truth row

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or place(owner[j], seen):
                    owner[j] = i
                    return True
        return False

    heaviest = sorted((i for i, r in enumerate(truth) if r and fits[i]), key=lambda i: (-len(truth[i]), i))
    return sum(len(truth[i]) for i in heaviest if place(i, set()))


def table_rows(
    truth_tables: Sequence[Sequence[Sequence[str]]], parsed_tables: Sequence[Sequence[Row]]
) -> RowScore:
    """``RowScore`` of ``truth_tables`` (rows of cell strings) against ``parsed_tables`` (each table
    block's rows of non-empty cells)."""
    wanted = [[tuple(c for c in map(cell, row) if c) for row in table] for table in truth_tables]
    offered_cells = [{c for row in table for c in row} for table in parsed_tables]
    weights = {
        (i, j): whole(rows, parsed_tables[j])
        for i, rows in enumerate(wanted)
        for j, has in enumerate(offered_cells)
        if any(c in has for row in rows for c in row)  # no shared cell, no row to match
    }
    return RowScore(pair_greedily(weights), sum(len(r) for rows in wanted for r in rows))
