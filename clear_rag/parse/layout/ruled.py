"""Ruled tables: cell grids drawn with lines and rectangles, and the words inside their cells."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

from clear_rag.parse.layout.columns import Band, gutters
from clear_rag.parse.layout.geometry import Rule, Word
from clear_rag.parse.layout.labels import outside_labels
from clear_rag.parse.layout.lines import join_lines, lines_from_words
from clear_rag.parse.layout.tables import Table

RULE_TOLERANCE = 0.2  # of the body size: rules this close are one rule, and cross when this close
MAX_CROSSINGS = 250_000  # horizontal x vertical rules compared on one page at most


@dataclass(frozen=True, slots=True)
class _Segment:
    at: float  # y of a horizontal rule, x of a vertical one
    lo: float
    hi: float


def merge_rules(rules: Iterable[Rule], *, horizontal: bool, tolerance: float) -> list[_Segment]:
    """Collinear rules joined: those within ``tolerance`` of one position whose extents touch.

    A table drawn cell by cell (each cell its own rectangle) gives one rule per row boundary.
    """
    found = sorted(
        (
            _Segment((r.top + r.bottom) / 2, r.x0, r.x1)
            if horizontal
            else _Segment((r.x0 + r.x1) / 2, r.top, r.bottom)
            for r in rules
            if r.horizontal == horizontal
        ),
        key=lambda segment: (segment.at, segment.lo),
    )
    lines: list[list[_Segment]] = []
    for segment in found:
        if lines and segment.at - lines[-1][0].at <= tolerance:
            lines[-1].append(segment)
        else:
            lines.append([segment])
    merged: list[_Segment] = []
    for line in lines:
        at = median(segment.at for segment in line)
        line.sort(key=lambda segment: segment.lo)
        lo, hi = line[0].lo, line[0].hi
        for segment in line[1:]:
            if segment.lo <= hi + tolerance:
                hi = max(hi, segment.hi)
            else:
                merged.append(_Segment(at, lo, hi))
                lo, hi = segment.lo, segment.hi
        merged.append(_Segment(at, lo, hi))
    return merged


def _find(parent: list[int], i: int) -> int:
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def grids(rules: Sequence[Rule], tolerance: float) -> tuple[list[tuple[list[float], list[float]]], bool]:
    """Grids of crossing rules, each as (row boundaries y, column boundaries x); and whether the
    page had too many rules to compare (``MAX_CROSSINGS``), in which case none are returned.

    Rule: horizontal and vertical rules that cross (within ``tolerance``) belong to one grid; a
    grid with at least 2 columns and 1 row is a table's cell grid. A lone box, or a stack of
    shaded row backgrounds (2 vertical edges), is not.
    """
    across = merge_rules(rules, horizontal=True, tolerance=tolerance)
    down = merge_rules(rules, horizontal=False, tolerance=tolerance)
    if len(across) * len(down) > MAX_CROSSINGS:
        return [], True
    parent = list(range(len(across) + len(down)))
    for i, h in enumerate(across):
        for j, v in enumerate(down):
            if h.lo - tolerance <= v.at <= h.hi + tolerance and v.lo - tolerance <= h.at <= v.hi + tolerance:
                a, b = _find(parent, i), _find(parent, len(across) + j)
                if a != b:
                    parent[a] = b
    members: dict[int, tuple[list[float], list[float]]] = {}
    for i, h in enumerate(across):
        members.setdefault(_find(parent, i), ([], []))[0].append(h.at)
    for j, v in enumerate(down):
        members.setdefault(_find(parent, len(across) + j), ([], []))[1].append(v.at)
    found = []
    for ys, xs in members.values():
        ys, xs = _distinct(ys, tolerance), _distinct(xs, tolerance)
        if len(ys) >= 2 and len(xs) >= 3:
            found.append((ys, xs))
    return found, False


def _distinct(values: list[float], tolerance: float) -> list[float]:
    out: list[float] = []
    for value in sorted(values):
        if not out or value - out[-1] > tolerance:
            out.append(value)
    return out


def ruled_tables(
    words: Sequence[Word], rules: Sequence[Rule], body: float
) -> tuple[list[Table], list[Word], bool]:
    """Tables whose cells are drawn, the words outside them, and whether rules were too many.

    Each word goes to the cell holding its centre; a cell's words are read as lines, joined. Row
    labels set left of the grid's first vertical rule become its first column (``labels``).
    """
    tolerance = RULE_TOLERANCE * body
    found, too_many = grids(rules, tolerance)
    bands: list[Band] | None = None

    def page_bands() -> list[Band]:
        nonlocal bands
        if bands is None:
            bands = gutters(lines_from_words(words), body)
        return bands

    tables: list[Table] = []
    taken: set[int] = set()
    # Words by height, so each grid looks only at the words level with it.
    order = sorted(range(len(words)), key=lambda index: words[index].centre)
    heights = [words[index].centre for index in order]
    for ys, xs in found:
        cells: dict[tuple[int, int], list[Word]] = {}
        for index in order[bisect_right(heights, ys[0]) : bisect_left(heights, ys[-1])]:
            word = words[index]
            if index in taken or not xs[0] < word.middle < xs[-1]:
                continue
            cells.setdefault(
                (bisect_right(ys, word.centre) - 1, bisect_right(xs, word.middle) - 1), []
            ).append(word)
            taken.add(index)
        if not cells:
            continue
        labels = outside_labels(words, taken, ys, xs, cells, body, page_bands)
        taken.update(index for indices in labels.values() for index in indices)
        rows = tuple(
            tuple(_cell_text(cells.get((r, c), [])) for c in range(len(xs) - 1)) for r in range(len(ys) - 1)
        )
        x0 = xs[0]
        if labels:
            rows = tuple(
                (_cell_text([words[index] for index in labels.get(r, [])]), *row)
                for r, row in enumerate(rows)
            )
            x0 = min(words[index].x0 for indices in labels.values() for index in indices)
        tables.append(Table(x0, ys[0], xs[-1], ys[-1], rows, ruled=True))
    return tables, [word for index, word in enumerate(words) if index not in taken], too_many


def _cell_text(words: Sequence[Word]) -> str:
    return join_lines([line.text for line in lines_from_words(words)]) if words else ""
