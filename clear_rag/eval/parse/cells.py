"""Table cells of the truth recovered by a parse: as cells of its table blocks, or anywhere in its body."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from clear_rag.eval.parse.tokens import ratio, tokens

CELL_SEPARATOR = " | "  # between the non-empty cells of a table row, in truth text and table blocks

Cell = tuple[str, ...]


def cell(text: str) -> Cell:
    """A cell as compared: its ``tokens``. A cell of punctuation alone (``$``, ``—``) is empty and left
    out on both sides, so a parser that puts ``$`` in a cell of its own loses nothing by it."""
    return tuple(tokens(text))


def row_cells(line: str) -> list[Cell]:
    """The non-empty cells of one table row written as text, cells separated by ``CELL_SEPARATOR``."""
    return [c for c in map(cell, line.split(CELL_SEPARATOR)) if c]


@dataclass(frozen=True, slots=True)
class CellScore:
    """Truth table cells recovered: ``in_tables / truth`` found as cells of the parse's table blocks,
    ``anywhere / truth`` found as a run of tokens anywhere in its body. No truth cells: both 1.0."""

    in_tables: int
    anywhere: int
    truth: int

    @property
    def in_tables_rate(self) -> float:
        return ratio(self.in_tables, self.truth, empty=1.0)

    @property
    def anywhere_rate(self) -> float:
        return ratio(self.anywhere, self.truth, empty=1.0)


def table_cells(
    truth_tables: Sequence[Sequence[Sequence[str]]],
    parsed_tables: Sequence[Sequence[Cell]],
    body: Sequence[str],
) -> CellScore:
    """Cell recovery of ``truth_tables`` (rows of cell strings) by ``parsed_tables`` (each table block's
    cells, in any order) and by the body's ``tokens``.

    In tables: each truth table is paired with at most one parsed table and each parsed table with at
    most one truth table, greedily by the largest multiset overlap of cells first (ties: earlier truth
    table, then earlier parsed table); ``in_tables`` sums the overlaps of the pairs. A table split in two
    is credited with its larger part, and two tables merged into one block with one of them.

    Anywhere: ``sum_c min(truth count of c, occurrences of c's tokens as a contiguous run in body)`` over
    the distinct truth cells c, all tables together.
    """
    wanted = [Counter(c for row in table for c in map(cell, row) if c) for table in truth_tables]
    offered = [Counter(table) for table in parsed_tables]
    holders: dict[Cell, list[int]] = {}
    for j, cells in enumerate(offered):
        for c in cells:
            holders.setdefault(c, []).append(j)
    pairs = []
    for i, cells in enumerate(wanted):
        overlap: Counter[int] = Counter()
        for c, count in cells.items():
            for j in holders.get(c, ()):
                overlap[j] += min(count, offered[j][c])
        pairs += [(-shared, i, j) for j, shared in overlap.items()]
    used_truth: set[int] = set()
    used_parsed: set[int] = set()
    in_tables = 0
    for negative, i, j in sorted(pairs):
        if i not in used_truth and j not in used_parsed:
            used_truth.add(i)
            used_parsed.add(j)
            in_tables -= negative
    total = sum(wanted, Counter[Cell]())
    found = run_counts(body, total)
    anywhere = sum(min(count, found[c]) for c, count in total.items())
    return CellScore(in_tables, anywhere, sum(total.values()))


def run_counts(sequence: Sequence[str], runs: Iterable[Cell]) -> Counter[Cell]:
    """How often each of ``runs`` occurs as a contiguous run of ``sequence`` (overlapping ones too)."""
    by_first: dict[str, set[Cell]] = {}
    for run in runs:
        if run:
            by_first.setdefault(run[0], set()).add(run)
    found: Counter[Cell] = Counter()
    for i, token in enumerate(sequence):
        for run in by_first.get(token, ()):
            if tuple(sequence[i : i + len(run)]) == run:
                found[run] += 1
    return found
