"""A table beside a column of text: the gutter a table shows where the prose alone did not.

``columns.gutters`` finds a gutter from the density of prose lines on each side; a column that holds
mostly a table has few prose lines, its side looks empty, and no gutter is found. The page is then
read in whole rows, and an aligned table in one column took the other column's lines, level with
its rows, as its first (or last) column: "the year and found that most offices kept well | Rent |
1,000". The rule below reads the gutter off such a table instead, so the page is cut into its
columns and the table bounded by its own.
"""

from __future__ import annotations

from collections.abc import Sequence
from statistics import median

from clear_rag.parse.layout.aligned import ALIGN, ROW_GAP, aligned_tables
from clear_rag.parse.layout.blocks import list_marker
from clear_rag.parse.layout.columns import GUTTER, SIDE_LINES, Band, is_prose
from clear_rag.parse.layout.geometry import Line
from clear_rag.parse.layout.lines import segments

PROSE_SHARE = 0.8  # of a table's rows whose outer segment is prose, in a column of text


def table_gutters(rows: Sequence[Line], body: float) -> list[Band]:
    """Gutters shown by aligned tables whose first or last column is the text of a column beside
    them, left to right; none where no table shows one.

    Rule: a table found in whole rows (``aligned.aligned_tables``) whose outer segments (the first
    of each row, or the last) are prose (``columns.is_prose``) in ``PROSE_SHARE`` of its rows,
    start within ``ALIGN`` body sizes of one left edge (a column's edge), and go on past the table as
    at least ``SIDE_LINES`` lines of prose at that edge, within ``ROW_GAP`` body sizes above and
    below it, none reaching the table's next column: the gap between that text and the table's
    other cells, at least ``GUTTER`` body sizes wide, is a gutter.
    """
    is_item = [list_marker(row) is not None for row in rows]
    found: list[Band] = []
    for first, end, _ in aligned_tables(rows, body, is_item):
        for last in (False, True):
            band = _gutter(rows, first, end, body, last=last)
            if band is not None and not any(b0 < band[1] and band[0] < b1 for b0, b1 in found):
                found.append(band)
    return sorted(found)


def _gutter(rows: Sequence[Line], first: int, end: int, body: float, *, last: bool) -> Band | None:
    """The gutter between the table's rows ``first:end`` and a text column at their left edge (or,
    ``last``, their right edge), or ``None``."""
    cut = [parts for parts in (segments(row) for row in rows[first:end]) if len(parts) >= 2]
    if not cut:
        return None
    outer = [parts[-1] if last else parts[0] for parts in cut]
    inner = [parts[-2] if last else parts[1] for parts in cut]
    if sum(1 for part in outer if is_prose(part, body)) < PROSE_SHARE * len(outer):
        return None
    edge = median(part.x0 for part in outer)  # a column of text is set flush left
    # Where the table's own cells begin (the nearest of them to the text column).
    cells = max(part.x1 for part in inner) if last else min(part.x0 for part in inner)
    past = [*_lines_past(rows, first, -1, body), *_lines_past(rows, end - 1, 1, body)]
    text = [
        part
        for part in ((segments(row)[-1] if last else segments(row)[0]) for row in past)
        if is_prose(part, body)
        and abs(part.x0 - edge) <= ALIGN * body
        and ((part.x0 >= cells) if last else (part.x1 <= cells))
    ]
    if len(text) < SIDE_LINES:
        return None
    if last:
        band = (cells, min(part.x0 for part in [*outer, *text]))
    else:
        band = (max(part.x1 for part in [*outer, *text]), cells)
    return band if band[1] - band[0] >= GUTTER * body else None


def _lines_past(rows: Sequence[Line], start: int, step: int, body: float) -> list[Line]:
    """Up to ``SIDE_LINES`` rows from ``start + step`` on in the direction ``step``, each within
    ``ROW_GAP`` body sizes of the one before."""
    found: list[Line] = []
    at = start + step
    while 0 <= at < len(rows) and len(found) < SIDE_LINES:
        above, below = (rows[at], rows[at - step]) if step < 0 else (rows[at - step], rows[at])
        if below.top - above.bottom > ROW_GAP * body:
            break
        found.append(rows[at])
        at += step
    return found
