"""Row labels set outside a ruled grid: a financial table whose rules start after its label column.

Such a table draws its horizontal rules (or none) under the labels but its first vertical rule only
after them, so the grid (``ruled.grids``) begins at the numbers: read alone, it held "94,000 |
20,000 | ..." while "Staff Travel" followed it as a paragraph. The rule below gives the grid back
its labels, and is careful not to take the text of a neighbouring column for them.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Collection, Sequence

from clear_rag.parse.layout.columns import Band
from clear_rag.parse.layout.geometry import Word
from clear_rag.parse.layout.lines import SAME_LINE, lines_from_words

MIN_LABELS = 2  # grid rows that must carry a label outside it
LABELLED_SHARE = 0.5  # of the grid rows that have cells: at least this many carry a label
CENTRED_SHARE = 0.8  # of the labelled rows with cells: the label on the line of the row's cells
RUNS_ON = 2.0  # of the body size: text this close above and below the grid continues past it


def outside_labels(
    words: Sequence[Word],
    taken: Collection[int],
    ys: Sequence[float],
    xs: Sequence[float],
    cells: dict[tuple[int, int], list[Word]],
    body: float,
    bands: Callable[[], Sequence[Band]],
) -> dict[int, list[int]]:
    """The words (indices into ``words``) that label the grid's rows from outside it, by row; none
    where they do not make a label column.

    Rule: the words wholly left of the grid's first vertical rule, level with the grid, right of
    any column gutter left of it (``columns.gutters``, called only when there are such words) are
    row labels when each of their lines lies inside one grid row (crossing no horizontal rule by
    more than ``SAME_LINE`` of its size), at least ``MIN_LABELS`` rows and ``LABELLED_SHARE`` of
    the rows with cells carry one, ``CENTRED_SHARE`` of the labelled rows with cells have the
    label's first line level with their cells (centres within ``SAME_LINE`` of the size), and no
    text wholly left of the grid runs on both above and below it within ``RUNS_ON`` body sizes
    (that is a column of the page running past the grid, not its labels).
    """
    left = [
        index
        for index, word in enumerate(words)
        if index not in taken and word.x1 <= xs[0] and ys[0] < word.centre < ys[-1]
    ]
    if len(left) < MIN_LABELS:
        return {}
    edge = max((b1 for _, b1 in bands() if b1 <= xs[0]), default=float("-inf"))
    left = [index for index in left if words[index].x0 >= edge]
    by_row: dict[int, list[int]] = {}
    for index in left:
        by_row.setdefault(bisect_right(ys, words[index].centre) - 1, []).append(index)
    with_cells = {row for row, _ in cells}
    centred = 0
    for row, indices in by_row.items():
        lines = lines_from_words([words[index] for index in indices])
        slack = SAME_LINE * min(line.size for line in lines)
        if lines[0].top < ys[row] - slack or lines[-1].bottom > ys[row + 1] + slack:
            return {}
        level = [word.centre for (r, _), found in cells.items() if r == row for word in found]
        first = (lines[0].top + lines[0].bottom) / 2
        centred += any(abs(first - centre) <= slack for centre in level)
    labelled = [row for row in by_row if row in with_cells]
    if (
        len(by_row) < MIN_LABELS
        or len(labelled) < LABELLED_SHARE * len(with_cells)
        or centred < CENTRED_SHARE * len(labelled)
        or _runs_past(words, taken, ys, xs, min(words[index].x0 for index in left), body)
    ):
        return {}
    return by_row


def _runs_past(
    words: Sequence[Word],
    taken: Collection[int],
    ys: Sequence[float],
    xs: Sequence[float],
    x0: float,
    body: float,
) -> bool:
    """Text wholly left of the grid, over the labels' x range, stands just above and just below it."""
    near = [
        word
        for index, word in enumerate(words)
        if index not in taken and x0 - body < word.x1 <= xs[0] and word.x0 < xs[0]
    ]
    above = any(ys[0] - RUNS_ON * body <= word.bottom <= ys[0] for word in near)
    below = any(ys[-1] <= word.top <= ys[-1] + RUNS_ON * body for word in near)
    return above and below
