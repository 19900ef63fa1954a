"""Tables as real-world PDFs set them, the parse suite's table cases (issue 31): empty cells, row
labels outside a ruled grid, a table in one column of two, display equations that are no tables, tables
stacked one under the other, labels wrapped over lines and labels that read like prose. Each builder
returns the PDF and its truth (``clear_rag.eval.drawn.drawn.Drawn``): the table's rows of cells ("" for a
cell left empty), the prose and the equations drawn around it.

Fonts are the standard 14 (Helvetica, Times-Italic, Symbol), never embedded.
"""

from __future__ import annotations

from collections.abc import Sequence

from clear_rag.eval.drawn.canvas import LEADING, SIZE, Drawing
from clear_rag.eval.drawn.drawn import Drawn, Rows, pieces, row_piece

PROSE = (
    "The committee reviewed the spending of every office against the plan it approved at the start "
    "of the year and found that most offices kept well within their budgets while a few moved money "
    "between lines to meet needs that nobody had foreseen when the plan was written down"
)


def _drawn(
    drawing: Drawing, above: Sequence[str], tables: Sequence[Rows], below: Sequence[str] = ()
) -> Drawn:
    """The page's PDF and its truth: prose ``above``, the ``tables``, prose ``below``."""
    rows = [row_piece(row) for table in tables for row in table]
    found = (*pieces("text", above), *rows, *pieces("text", below))
    return Drawn(drawing.pdf(), found, tuple(tables))


def grid(
    drawing: Drawing, left: float, top: float, widths: Sequence[float], rows: Sequence[Sequence[str]]
) -> float:
    """A ruled grid: a rule above and below every row and one at every column edge; cells right-aligned
    (numbers), each row 1.6 leadings tall. Returns the grid's bottom."""
    height = 1.6 * LEADING
    edges = [left]
    for width in widths:
        edges.append(edges[-1] + width)
    bottom = top + height * len(rows)
    for r in range(len(rows) + 1):
        drawing.line(left, top + r * height, edges[-1], top + r * height)
    for x in edges:
        drawing.line(x, top, x, bottom)
    for r, row in enumerate(rows):
        for c, cell in enumerate(row):
            if cell:
                drawing.right(edges[c + 1] - 4, top + r * height + height / 2 + SIZE / 3, cell)
    return bottom


QUARTERS = (
    ("Item", "Q1", "Q2", "Q3"),
    ("Rent", "1,000", "", "1,200"),
    ("Power", "", "300", "310"),
    ("Water", "90", "95", ""),
    ("Gas", "40", "45", "50"),
)


def empty_cells_ruled() -> Drawn:
    """A ruled grid, labels in its first column, with an empty cell in three of its rows."""
    drawing = Drawing()
    grid(drawing, 72, 100, [120, 80, 80, 80], QUARTERS)
    return _drawn(drawing, (), [QUARTERS])


def empty_cells_aligned() -> Drawn:
    """The same table without rules (labels left-aligned, numbers right-aligned), between paragraphs."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 3)
    top = 80 + 3 * LEADING + 20
    for r, row in enumerate(QUARTERS):
        drawing.text(72, top + r * LEADING, row[0])
        for c, cell in enumerate(row[1:]):
            if cell:
                drawing.right(260 + 80 * c, top + r * LEADING, cell)
    below = drawing.prose(72, top + (len(QUARTERS) + 1) * LEADING + 20, 468, PROSE, 3)
    return _drawn(drawing, above, [QUARTERS], below)


BUDGET = (
    ("", "Budget", "Actual", "Variance"),
    ("Staff Travel", "94,000", "20,000", "74,000"),
    ("Office Supplies", "12,500", "13,100", "-600"),
    ("Consultants", "8,000", "7,250", "750"),
    ("Total", "114,500", "40,350", "74,150"),
)


def labels_outside_grid(*, rules_under_labels: bool) -> Drawn:
    """A budget table whose vertical rules start after its label column: the labels are drawn left of
    the grid, level with their rows; its horizontal rules stop at the grid or run on under the labels."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 3)
    top, left = 140.0, 220.0
    bottom = grid(drawing, left, top, [90, 90, 90], [row[1:] for row in BUDGET])
    height = (bottom - top) / len(BUDGET)
    for r, row in enumerate(BUDGET):
        if row[0]:
            drawing.text(72, top + r * height + height / 2 + SIZE / 3, row[0])
        if rules_under_labels:
            drawing.line(72, top + r * height, left, top + r * height)
    if rules_under_labels:
        drawing.line(72, bottom, left, bottom)
    below = drawing.prose(72, bottom + 30, 468, PROSE, 3)
    return _drawn(drawing, above, [BUDGET], below)


GUTTER_X = 306.0  # the middle of a two-column page's gutter: columns 72-288 and 324-540


def ruled_beside_column(right: int = 8) -> Drawn:
    """A two-column page: prose all down the left column; in the right one ``right`` lines of prose,
    a ruled grid (labels inside it) level with the left column's lines, and as many lines again."""
    drawing = Drawing()
    left = drawing.prose(72, 80, 216, PROSE, 40)
    above = drawing.prose(324, 80, 216, PROSE, right)
    top = 80 + right * LEADING + 10
    rows = tuple(row[:3] for row in QUARTERS)
    bottom = grid(drawing, 324, top, [80, 68, 68], rows)
    below = drawing.prose(324, bottom + 20, 216, PROSE, right)
    return _drawn(drawing, (*left, *above), [rows], below)


def aligned_beside_column(right: int = 8) -> Drawn:
    """A two-column page: prose all down the left column; in the right one ``right`` lines of prose,
    a table without rules level with the left column's lines, and as many lines again."""
    drawing = Drawing()
    left = drawing.prose(72, 80, 216, PROSE, 40)
    above = drawing.prose(324, 80, 216, PROSE, right)
    top = 80 + (right + 1) * LEADING + 10
    rows = tuple(row[:3] for row in QUARTERS[1:])
    for r, row in enumerate(rows):
        drawing.text(324, top + r * LEADING, row[0])
        for c, cell in enumerate(row[1:]):
            if cell:
                drawing.right(460 + 70 * c, top + r * LEADING, cell)
    below = drawing.prose(324, top + len(rows) * LEADING + 20, 216, PROSE, right)
    return _drawn(drawing, (*left, *above), [rows], below)


SALES = (
    ("", "2024", "2023", "2022"),
    ("U.S.", "142,196", "138,573", "147,859"),
    ("China", "66,952", "72,559", "74,200"),
    ("Total net sales", "391,035", "383,285", "394,328"),
)
ASSETS = (
    ("", "2024", "2023"),
    ("U.S.", "35,664", "33,276"),
    ("China", "4,797", "5,778"),
    ("Total long-lived assets", "45,680", "43,715"),
)


def stacked_tables() -> Drawn:
    """Two tables without rules one under the other, a blank line apart, each with its own heads
    (the second has one column fewer, its values right-aligned under the first's last two)."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 3)
    y = 80 + 3 * LEADING + 20
    for table in (SALES, ASSETS):
        for row in table:
            if row[0]:
                drawing.text(72, y, row[0])
            for c, cell in enumerate(row[1:]):
                drawing.right(540 - 80 * (len(row) - 2 - c), y, cell)
            y += LEADING
        y += LEADING  # a blank line between them
    below = drawing.prose(72, y, 468, PROSE, 3)
    return _drawn(drawing, above, [SALES, ASSETS], below)


# A statement's rows: each a label (its lines, as wrapped on the page) and its values ("" for none).
STATEMENT: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    (("Operating activities",), ("", "")),
    (("Net income",), ("100,118", "73,795")),
    (("Stockholders' equity:",), ("", "")),
    (
        (
            "Class A, Class B, and Class C stock and additional paid-in capital,",
            "$0.001 par value per share: 300,000 shares authorized; 12,460",
            "and 12,211 shares issued and outstanding",
        ),
        ("76,534", "84,800"),
    ),
    (("Retained earnings",), ("211,247", "245,084")),
)


def wrapped_labels() -> Drawn:
    """A statement without rules whose long label wraps over three lines, its values on the last,
    under a section label with a colon; a section label without one stands over a row of its own."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 3)
    y = 80 + 3 * LEADING + 20
    heads = ("2024", "2023")
    for c, head in enumerate(heads):
        drawing.right(460 + 80 * c, y, head)
    for label, values in STATEMENT:
        for index, part in enumerate(label):
            y += LEADING if index == 0 else SIZE + 1  # a wrapped label's lines set closer
            drawing.text(72, y, part)
        for c, value in enumerate(values):
            if value:
                drawing.right(460 + 80 * c, y, value)
    below = drawing.prose(72, y + LEADING + 20, 468, PROSE, 3)
    rows = (("", *heads), *((" ".join(label), *values) for label, values in STATEMENT))
    return _drawn(drawing, above, [rows], below)


COSTS = (
    ("Research and development expense for the year", "31,370", "29,915"),
    ("Selling, general and administrative expense in total", "26,097", "24,932"),
    ("Depreciation and amortization of property and equipment", "11,445", "11,519"),
    ("Interest and dividend income on marketable securities", "3,750", "3,212"),
)


def wordy_labels() -> Drawn:
    """One column: full-width prose, a table without rules whose labels are prose-like (six or
    more words, set flush left at the prose's margin), and full-width prose: no column beside it."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 4)
    top = 80 + 4 * LEADING + 10
    for r, row in enumerate(COSTS):
        drawing.text(72, top + r * LEADING, row[0])
        for c, cell in enumerate(row[1:]):
            drawing.right(460 + 80 * c, top + r * LEADING, cell)
    below = drawing.prose(72, top + len(COSTS) * LEADING + 10, 468, PROSE, 4)
    return _drawn(drawing, above, [COSTS], below)


TURNED_HEAD = ("Region", "Net sales", "Operating income", "Headcount")
TURNED_ROWS = (
    ("Americas", "167,045", "67,656", "31,200"),
    ("Europe", "101,328", "41,790", "18,400"),
    ("Greater China", "66,952", "27,082", "9,750"),
)


def turned_head() -> Drawn:
    """A ruled grid whose head cells are set turned a quarter round (reading up the page), as narrow
    columns under long heads are; the stub head upright; prose above and below."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 3)
    top, head, height = 80 + 3 * LEADING + 20, 90.0, 1.6 * LEADING
    edges = [72.0, 212.0, 292.0, 372.0, 452.0]
    bottom = top + head + height * len(TURNED_ROWS)
    for y in (top, top + head, *(top + head + height * (r + 1) for r in range(len(TURNED_ROWS)))):
        drawing.line(edges[0], y, edges[-1], y)
    for x in edges:
        drawing.line(x, top, x, bottom)
    drawing.text(edges[0] + 4, top + head - 6, TURNED_HEAD[0])
    for c, label in enumerate(TURNED_HEAD[1:], start=1):
        drawing.turned((edges[c] + edges[c + 1]) / 2 + SIZE / 3, top + head - 6, 90, label)
    for r, row in enumerate(TURNED_ROWS):
        y = top + head + r * height + height / 2 + SIZE / 3
        drawing.text(edges[0] + 4, y, row[0])
        for c, cell in enumerate(row[1:], start=1):
            drawing.right(edges[c + 1] - 4, y, cell)
    below = drawing.prose(72, bottom + 30, 468, PROSE, 3)
    return _drawn(drawing, above, [(TURNED_HEAD, *TURNED_ROWS)], below)
