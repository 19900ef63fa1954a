"""Columns: where the page's prose leaves a vertical gap, and the reading order that follows.

Rule: the page's rows are cut into pieces at gaps of 0.8 body sizes or more; pieces of prose
(four or more words, mostly letters, body size) narrower than 0.65 of the text width are column
lines. Their words' horizontal density profile (how many words cover each point of the width)
has a gutter wherever it drops to a quarter of its peak: between the left column's furthest line
end and the right column's left edge in that drop, if at least half a body size wide, with three
or more column lines wholly on each side and hardly any across it (a fifth of those, or one: the
hanging bullets of a list leave a low stretch inside a column, which its items' lines cross).
Rows that put a word into a gutter (titles, wide tables) span the columns: they cut the page into
zones, read top to bottom; inside a columnar zone the columns are read left to right, each top to
bottom, and a stretch with prose on one side only (a wide table whose labels and numbers leave
the gutter empty) is read across.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise

from clear_rag.parse.layout.geometry import Line, Word
from clear_rag.parse.layout.lines import lines_from_words, segments
from clear_rag.parse.layout.tables import Table

PIECE_GAP = 0.8  # of the body size: rows are cut here before the profile is taken
NARROW = 0.65  # of the text width: a prose piece this narrow is a column's line
PROSE_WORDS = 4
PROSE_LETTERS = 0.6  # share of a prose piece's words that hold a letter
SAME_SIZE = 0.15  # of the body size: prose is set within this of it
EMPTY = 0.25  # of the profile's peak (its 90th percentile): a gutter's coverage at most
GUTTER = 0.5  # of the body size: the narrowest gutter
SIDE_LINES = 3  # column lines needed wholly on each side of a gutter
INTO_GUTTER = 0.25  # of the body size: a word reaching less far into a gutter does not cross it
ACROSS = 0.2  # of the column lines on the thinner side: at most this many (or one) may cross a gutter

Band = tuple[float, float]


def is_prose(piece: Line, body: float) -> bool:
    """Four or more words at the body size, most of them holding a letter."""
    words = piece.words
    lettered = sum(1 for word in words if any(ch.isalpha() for ch in word.text))
    return (
        len(words) >= PROSE_WORDS
        and lettered >= PROSE_LETTERS * len(words)
        and abs(piece.size - body) <= SAME_SIZE * body
    )


def column_lines(rows: Sequence[Line], body: float) -> list[Line]:
    """The prose pieces narrow enough to be one column's lines."""
    pieces = [piece for row in rows for piece in segments(row, PIECE_GAP) if is_prose(piece, body)]
    if not pieces:
        return []
    left = min(piece.x0 for piece in pieces)
    right = max(piece.x1 for piece in pieces)
    return [piece for piece in pieces if piece.x1 - piece.x0 <= NARROW * (right - left)]


def gutters(rows: Sequence[Line], body: float) -> list[Band]:
    """The vertical gaps between columns, as ``(left, right)`` x ranges; none on a one-column page."""
    narrow = column_lines(rows, body)
    if len(narrow) < 2 * SIDE_LINES:
        return []
    left = int(min(piece.x0 for piece in narrow))
    right = int(max(piece.x1 for piece in narrow)) + 1
    cover = [0] * (right - left + 1)
    for piece in narrow:
        for word in piece.words:
            cover[int(word.x0) - left] += 1
            cover[int(word.x1) + 1 - left] -= 1
    running = 0
    for x in range(len(cover)):
        running += cover[x]
        cover[x] = running
    peak = sorted(cover)[int(0.9 * (len(cover) - 1))]
    bands: list[Band] = []
    start: int | None = None
    for x, count in enumerate([*cover, peak + 1]):
        if count <= EMPTY * peak:
            start = x if start is None else start
            continue
        if start is not None and start > 0 and x < len(cover):
            band = _between(narrow, left + start, left + x, body)
            sides = _sides(narrow, band)
            across = sum(1 for piece in narrow if _crosses(piece.x0, piece.x1, [band], body))
            if (
                band[1] - band[0] >= GUTTER * body
                and sides >= SIDE_LINES
                and across <= max(1, ACROSS * sides)
            ):
                bands.append(band)
        start = None
    return bands


def _between(narrow: Sequence[Line], start: float, end: float, body: float) -> Band:
    """The gutter inside a low stretch ``[start, end)`` of the profile: from the furthest right a
    left column's line ends to the right column's left edge, the leftmost point where two or more
    of its lines start (within half a body size of each other).

    Ragged-right text thins out well before the gutter, and a line spanning the columns puts a
    word or two into it; measuring the columns' own edges keeps the first from being taken for a
    spanning line and the second from cutting the gutter short. The right column's edge is its
    leftmost shared start, so list markers hanging left of their items' text stay in the column.
    """
    starts = sorted(piece.x0 for piece in narrow if start <= piece.x0 <= end + body)
    right = next((x for x, after in pairwise(starts) if after - x <= 0.5 * body), end)
    ends = [piece.x1 for piece in narrow if start - body <= piece.x1 <= right]
    return max([start, *ends]), right


def _sides(narrow: Sequence[Line], band: Band) -> int:
    """The fewer of the column lines wholly left and wholly right of a band."""
    left = sum(1 for piece in narrow if piece.x1 <= band[0])
    right = sum(1 for piece in narrow if piece.x0 >= band[1])
    return min(left, right)


def _crosses(x0: float, x1: float, bands: Sequence[Band], body: float) -> bool:
    """Reaches into a gutter by more than ``INTO_GUTTER`` body sizes (justified lines overshoot
    their column's edge by a fraction of a point)."""
    margin = INTO_GUTTER * body
    return any(x0 < b1 - margin and x1 > b0 + margin for b0, b1 in bands)


@dataclass(slots=True)
class Zone:
    """A horizontal stretch of the page: spanning (read as one column) or split into columns."""

    spanning: bool
    rows: list[Line] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)

    @property
    def top(self) -> float:
        return min([row.top for row in self.rows] + [table.top for table in self.tables])


def zones(
    rows: Sequence[Line],
    tables: Sequence[Table],
    bands: Sequence[Band],
    body: float,
    *,
    beside_tables: Sequence[Band] = (),
) -> list[Zone]:
    """The page cut into zones at rows and tables that cross a gutter, top to bottom.

    A stretch is read as columns only where column lines stand on both sides of every gutter in
    it: rows of a wide table whose cells happen to leave the gutter empty (prose labels on the
    left, numbers on the right) are read across, as the table they are. The gutters in
    ``beside_tables`` were read off a table standing beside a column of prose
    (``beside.table_gutters``), so prose stands on one side of them only: the table is the other
    column. They are left out of that test, which would otherwise read the table's column and the
    prose beside it across again, in whole rows, each prose line as the table's first cell.
    """
    items: list[tuple[float, bool, Line | Table]] = []
    for row in rows:
        items.append((row.top, any(_crosses(w.x0, w.x1, bands, body) for w in row.words), row))
    for table in tables:
        items.append((table.top, _crosses(table.x0, table.x1, bands, body), table))
    items.sort(key=lambda item: item[0])
    found: list[Zone] = []
    for _, spanning, item in items:
        if not found or found[-1].spanning != spanning:
            found.append(Zone(spanning))
        if isinstance(item, Table):
            found[-1].tables.append(item)
        else:
            found[-1].rows.append(item)
    merged: list[Zone] = []
    for zone in found:
        tested = [band for band in bands if band not in beside_tables]
        if not zone.spanning and not _columns_on_both_sides(zone.rows, tested, body):
            zone.spanning = True
        if merged and merged[-1].spanning and zone.spanning:
            merged[-1].rows += zone.rows
            merged[-1].tables += zone.tables
        else:
            merged.append(zone)
    return merged


def _columns_on_both_sides(rows: Sequence[Line], bands: Sequence[Band], body: float) -> bool:
    """Prose stands wholly on each side of every gutter somewhere in these rows."""
    prose = [piece for row in rows for piece in segments(row, PIECE_GAP) if is_prose(piece, body)]
    return all(_sides(prose, band) >= 1 for band in bands)


def split_columns(zone: Zone, bands: Sequence[Band]) -> list[tuple[list[Line], list[Table]]]:
    """A columnar zone's columns, left to right: each its lines (rebuilt from the zone's words on
    that side of the gutters) and its tables."""
    cuts = [(b0 + b1) / 2 for b0, b1 in bands]
    words: list[list[Word]] = [[] for _ in range(len(cuts) + 1)]
    tables: list[list[Table]] = [[] for _ in range(len(cuts) + 1)]
    for row in zone.rows:
        for word in row.words:
            words[sum(1 for cut in cuts if word.middle > cut)].append(word)
    for table in zone.tables:
        tables[sum(1 for cut in cuts if (table.x0 + table.x1) / 2 > cut)].append(table)
    return [(lines_from_words(side), side_tables) for side, side_tables in zip(words, tables, strict=True)]
