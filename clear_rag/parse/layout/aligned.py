"""Tables without rules: consecutive lines whose segments line up on shared columns.

Numbers are right-aligned and labels left-aligned, so a column is recognised by any of its cells'
left edges, right edges or centres lining up; column heads are centred over their columns and are
judged apart from the rows below them.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from statistics import median

from clear_rag.parse.layout.geometry import Line
from clear_rag.parse.layout.lines import SIGNS, segments
from clear_rag.parse.layout.maths import is_math
from clear_rag.parse.layout.tables import Table
from clear_rag.parse.layout.wrapped import join_wrapped

ROW_GAP = 2.5  # of the body size: a wider vertical gap between lines ends an aligned table
MIN_ROWS = 3  # lines with two or more cells an aligned table needs, heads included
BODY_ROWS = 2  # of them below its heads, which alone are tested for alignment
ALIGN = 0.5  # of the body size: a cell edge this close to its column's edge is aligned with it
ALIGNED_SHARE = 0.8  # of the cells that must align with their column's left, right or centre
PROSE_CELL_WORDS = 8  # a column whose cells hold this many words (median) holds prose
NUMERIC_SHARE = 0.5  # of a column's cells that are numbers, in a column of numbers
HEAD_LINES = 2  # column-head lines a table may have above its aligned rows
LABEL_LINES = 4  # single-segment lines between two rows: labels ("Current assets:"), wrapped labels
RESTARTS = 8  # starts tried inside one run of lines before it is given up
TABLE_BREAK = 1.0  # of the body size: a gap this much wider than a run's usual gap between rows ends it
MIN_GAPS = 2  # gaps between a run's rows measured before its usual gap is trusted


def aligned_tables(
    lines: Sequence[Line], body: float, is_item: Sequence[bool], *, across: bool = False
) -> list[tuple[int, int, Table]]:
    """Runs of lines that form a table without rules: ``(first, end, table)``, ``end`` exclusive.

    Rule: at least ``MIN_ROWS`` lines, no more than ``ROW_GAP`` body sizes apart, that each split
    into two or more segments (gaps of an em or more) and are not list items; a single-segment
    line between two such lines (a row label like "Operating expenses:") belongs to the run. The
    run is a table when its columns (from the lines with the most common segment count) number
    two or more, at least ``ALIGNED_SHARE`` of the segments line up with their column's left
    edge, right edge (numbers are right-aligned) or centre, and not two columns hold prose
    (cells of ``PROSE_CELL_WORDS`` words, median): those are two columns of text. A table read
    ``across`` a page's text columns (from whole rows, before they are cut at the gutter) may hold
    no prose column at all and needs a column of numbers, so that a column of text beside a table
    in the other column is never taken for its first column.

    Column heads are centred over their columns rather than aligned with them, so up to
    ``HEAD_LINES`` lines at the top of a run are left out of that test, and up to as many lines
    just above it that sit wholly over the value columns ("Years ended") are taken in as heads.
    """
    cut = [segments(line) for line in lines]
    multi = [len(parts) >= 2 and not item for parts, item in zip(cut, is_item, strict=True)]
    found: list[tuple[int, int, Table]] = []
    i = 0
    run_end, tries = 0, 0  # the run being tried, and how often a start inside it has been
    while i < len(lines):
        if not multi[i]:
            i += 1
            continue
        end = _run_end(lines, cut, multi, is_item, i, body)
        tries = tries + 1 if end == run_end else 1
        run_end = end
        rows = sum(1 for k in range(i, end) if multi[k])
        for heads in range(min(HEAD_LINES, end - i - BODY_ROWS) + 1 if rows >= MIN_ROWS else 0):
            columns = _columns(cut[i + heads : end], body)
            if columns is None:
                continue
            first = _heads_above(lines, cut, is_item, i, columns, body, floor=found[-1][1] if found else 0)
            table = _as_table(lines[first:end], cut[first:end], columns, across, body)
            if table is not None:
                found.append((first, end, table))
                break
        # A run that is no table is tried again from its next line, up to RESTARTS times: the
        # table may start a few lines in, and the work stays linear in the page's lines.
        i = end if (found and found[-1][1] == end) or tries >= RESTARTS else i + 1
    return found


def _run_end(
    lines: Sequence[Line],
    cut: Sequence[list[Line]],
    multi: Sequence[bool],
    is_item: Sequence[bool],
    i: int,
    body: float,
) -> int:
    """Where the run of table rows starting at ``i`` ends (exclusive): rows of two or more segments,
    and up to ``LABEL_LINES`` single-segment lines between two of them that end left of the value
    columns (row labels such as "Current assets:", and the first lines of a label wrapped over
    three or four lines, as a filing's share capital rows are: 2, as before, cut such a statement
    in two).

    The run also ends at a row of column heads (no label: its first segment starts over the value
    columns) after a gap ``TABLE_BREAK`` body sizes wider than the median of the run's own gaps
    (once ``MIN_GAPS`` are measured): two tables set one under the other, the second with heads of
    its own ("2024 | 2023" under "2024 | 2023 | 2022"), were read as one, and the second table was
    credited to neither. A section gap before a labelled row ("Cost of sales:") stays inside.
    """
    end = i + 1
    values = cut[i][1].x0  # where the leftmost value column starts
    gaps: list[float] = []

    def near(k: int) -> bool:
        gap = lines[k].top - lines[k - 1].bottom
        heads = multi[k] and cut[k][0].x0 >= values - ALIGN * body
        return _close(lines[k - 1], lines[k], body) and not (
            heads and len(gaps) >= MIN_GAPS and gap > median(gaps) + TABLE_BREAK * body
        )

    while end < len(lines) and near(end):
        if multi[end]:
            values = min(values, cut[end][1].x0)
            gaps.append(lines[end].top - lines[end - 1].bottom)
            end += 1
            continue
        labels = end
        while (
            labels < len(lines)
            and labels - end < LABEL_LINES
            and not multi[labels]
            and not is_item[labels]
            and lines[labels].x1 < values
            and near(labels)
        ):
            labels += 1
        if end < labels < len(lines) and multi[labels] and near(labels):
            gaps += [lines[k].top - lines[k - 1].bottom for k in range(end, labels + 1)]
            end = labels + 1
            values = min(values, cut[labels][1].x0)
        else:
            break
    return end


def _heads_above(
    lines: Sequence[Line],
    cut: Sequence[list[Line]],
    is_item: Sequence[bool],
    i: int,
    columns: Sequence[tuple[float, float]],
    body: float,
    floor: int,
) -> int:
    """The first line of the table: ``i``, or a line or two above it that sit over the value columns."""
    first = i
    while (
        first > max(floor, i - HEAD_LINES)
        and not is_item[first - 1]
        and _close(lines[first - 1], lines[first], body)
        and all(part.x0 >= columns[0][1] for part in cut[first - 1])
    ):
        first -= 1
    return first


def _close(above: Line, below: Line, body: float) -> bool:
    return below.top - above.bottom <= ROW_GAP * body


def _columns(cut: Sequence[list[Line]], body: float) -> list[tuple[float, float]] | None:
    """The column x ranges of a table's body rows (``BODY_ROWS`` or more with two or more segments),
    or ``None`` where they do not make a table."""
    rows = [parts for parts in cut if len(parts) >= 2]
    if len(rows) < BODY_ROWS:
        return None
    counts = Counter(len(parts) for parts in rows)
    modal = max(counts, key=lambda count: (counts[count], count))
    columns = _union([(part.x0, part.x1) for parts in rows if len(parts) == modal for part in parts])
    if len(columns) < 2:
        return None
    placed = [[_column_of(part, columns) for part in parts] for parts in rows]
    return columns if _aligned(rows, placed, body) else None


def _as_table(
    lines: Sequence[Line],
    cut: Sequence[list[Line]],
    columns: Sequence[tuple[float, float]],
    across: bool,
    body: float,
) -> Table | None:
    """The lines as a table with these columns, each segment in the column it overlaps most, labels
    wrapped over lines joined (``wrapped``); none where columns hold prose, or (``across``) no
    column holds numbers, or the lines are an equation (``maths``)."""
    cells: list[list[list[str]]] = [[[] for _ in columns] for _ in cut]
    for row, parts in enumerate(cut):
        for part in parts:
            cells[row][_column_of(part, columns)].append(part.text)
    grid = merge_heads(
        join_wrapped([tuple(" ".join(cell) for cell in row) for row in cells], lines, ALIGN * body)
    )
    prose = sum(1 for c in range(len(columns)) if _median_words(grid, c) >= PROSE_CELL_WORDS)
    if prose > (0 if across else 1) or (across and not any(_numeric(grid, c) for c in range(len(columns)))):
        return None
    if is_math(lines, grid):
        return None
    return Table(
        min(line.x0 for line in lines),
        lines[0].top,
        max(line.x1 for line in lines),
        lines[-1].bottom,
        grid,
        ruled=False,
    )


def merge_heads(rows: Sequence[tuple[str, ...]]) -> tuple[tuple[str, ...], ...]:
    """Column heads wrapped over two lines made one row: rule, among the rows above the first with
    a label (first column filled), consecutive rows filling the very same columns are one row
    whose cells join with a space ("September 28," over "2024" is "September 28, 2024")."""
    heads = 0
    while heads < len(rows) and not rows[heads][0]:
        heads += 1
    merged: list[tuple[str, ...]] = []
    for index, row in enumerate(rows):
        filled = [bool(cell) for cell in row]
        if index < heads and merged and [bool(cell) for cell in merged[-1]] == filled:
            merged[-1] = tuple(f"{a} {b}".strip() for a, b in zip(merged[-1], row, strict=True))
        else:
            merged.append(row)
    return tuple(merged)


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if merged and lo <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], hi))
        else:
            merged.append((lo, hi))
    return merged


def _column_of(part: Line, columns: Sequence[tuple[float, float]]) -> int:
    """The column a segment overlaps most, or the nearest one if it falls in a gap."""

    def overlap(column: tuple[float, float]) -> float:
        return min(part.x1, column[1]) - max(part.x0, column[0])

    best = max(range(len(columns)), key=lambda c: overlap(columns[c]))
    if overlap(columns[best]) > 0:
        return best
    middle = (part.x0 + part.x1) / 2
    return min(
        range(len(columns)), key=lambda c: min(abs(middle - columns[c][0]), abs(middle - columns[c][1]))
    )


def _aligned(rows: Sequence[list[Line]], placed: Sequence[list[int]], body: float) -> bool:
    """At least ``ALIGNED_SHARE`` of the segments line up with their column's median left edge,
    right edge or centre, within ``ALIGN`` body sizes; a segment is measured by its words other
    than currency signs and closing "%" or ")" (``$ 29,749`` and ``24.1 %`` align on their digits).
    """
    by_column: dict[int, list[tuple[float, float]]] = {}
    for parts, where in zip(rows, placed, strict=True):
        for part, column in zip(parts, where, strict=True):
            by_column.setdefault(column, []).append(_core(part))
    aligned = total = 0
    for spans in by_column.values():
        left = median(x0 for x0, _ in spans)
        right = median(x1 for _, x1 in spans)
        centre = median((x0 + x1) / 2 for x0, x1 in spans)
        for x0, x1 in spans:
            total += 1
            aligned += (
                abs(x0 - left) <= ALIGN * body
                or abs(x1 - right) <= ALIGN * body
                or abs((x0 + x1) / 2 - centre) <= ALIGN * body
            )
    return total > 0 and aligned >= ALIGNED_SHARE * total


def _core(part: Line) -> tuple[float, float]:
    words = [word for word in part.words if word.text not in SIGNS] or list(part.words)
    return words[0].x0, max(word.x1 for word in words)


_NUMBER = re.compile(r"[$€£(]*[-–—]?[$€£(]*\d[\d,.]*%?\)?%?|[-–—]")


def _numeric(grid: Sequence[Sequence[str]], column: int) -> bool:
    """Most of the column's non-empty cells are numbers (a dash is the filings' zero)."""
    cells = [row[column].replace(" ", "") for row in grid if column < len(row) and row[column]]
    return bool(cells) and sum(1 for cell in cells if _NUMBER.fullmatch(cell)) >= NUMERIC_SHARE * len(cells)


def _median_words(grid: Sequence[Sequence[str]], column: int) -> float:
    counts = [len(row[column].split()) for row in grid if column < len(row) and row[column]]
    return float(median(counts)) if counts else 0.0
