"""Table cells of the truth recovered by a parse: as cells of its table blocks (``cells_in_tables``,
wherever in the block: a cell cut from its row still counts; ``rows`` asks for the whole row), or
anywhere in its body (``cells_anywhere``). The formulas are ``CellScore``'s and ``table_cells``'."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
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
    overlaps: dict[tuple[int, int], int] = {}
    for i, cells in enumerate(wanted):
        for c, count in cells.items():
            for j in holders.get(c, ()):
                overlaps[i, j] = overlaps.get((i, j), 0) + min(count, offered[j][c])
    in_tables = pair_greedily(overlaps)
    total = sum(wanted, Counter[Cell]())
    found = run_counts(body, total)
    anywhere = sum(min(count, found[c]) for c, count in total.items())
    return CellScore(in_tables, anywhere, sum(total.values()))


def pair_greedily(weights: Mapping[tuple[int, int], int]) -> int:
    """The sum of the weights of a one-to-one pairing of truth tables ``i`` with parsed tables ``j``,
    chosen greedily by the largest weight first (ties: smaller ``i``, then smaller ``j``)."""
    used_truth: set[int] = set()
    used_parsed: set[int] = set()
    total = 0
    for (i, j), weight in sorted(weights.items(), key=lambda item: (-item[1], item[0])):
        if weight > 0 and i not in used_truth and j not in used_parsed:
            used_truth.add(i)
            used_parsed.add(j)
            total += weight
    return total


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
