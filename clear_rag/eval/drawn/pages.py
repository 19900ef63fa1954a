"""Page furniture, one of the parse suite's cases (issue 31): running headers and footers, page
numbers where LaTeX and a manual put them, short files, and lines that repeat on every page inside the
body, which are text. Each builder returns the PDF and its truth (``clear_rag.eval.drawn.drawn.Drawn``)."""

from __future__ import annotations

from clear_rag.eval.drawn.canvas import Drawing
from clear_rag.eval.drawn.drawn import Drawn, Piece, Rows, pieces, row_piece
from clear_rag.eval.drawn.papers import prose

GUIDE = "Clear RAG Operations Guide"
CHAPTERS = ("Getting started", "Installing", "Indexing", "Asking", "Measuring", "Troubleshooting")
TABLE_HEAD = ("Study", "Year", "Method", "Score")
REPEATED_BODY = "Results for this region follow in the table below."
TABLE_SOURCE = "Source: survey of published retrieval studies."


def _row(d: Drawing, y: float, cells: tuple[str, ...]) -> tuple[str, ...]:
    for x, cell in zip((72, 200, 300, 420), cells, strict=True):
        d.text(x, y, cell)
    return cells


def manual() -> Drawn:
    """Twelve pages of a manual, two per chapter. Each page: the guide's title as a running header;
    a survey table continued from page to page, its head row repeated at the top of the body; prose
    with one sentence repeated at the same height on every page; the table's source line as the
    body's last line; and a footer naming the chapter, with a chapter-page number ("3-2") at the
    right, whose text changes with the chapter (so no one text repeats on a fifth of the pages)."""
    drawn: list[Piece] = []
    tables: list[Rows] = []
    d = Drawing()
    for n in range(12):
        chapter, page = n // 2 + 1, n % 2 + 1
        d.text(72, 46, GUIDE, "Helvetica", 8)
        drawn.append(Piece("furniture", GUIDE))
        y = 96.0
        rows = [_row(d, y, TABLE_HEAD)]
        for k in range(3):
            y += 13
            cells = (
                f"Study {chr(65 + n)}{k}",
                str(2015 + (n + k) % 9),
                ("BM25", "Dense", "Hybrid")[k],
                f"0.{60 + n + k}",
            )
            rows.append(_row(d, y, cells))
        tables.append(tuple(rows))
        drawn += map(row_piece, rows)
        lines = prose(CHAPTERS[chapter - 1] + str(page), 6)
        y = d.fill(72, y + 30, lines[:3], "Helvetica")
        d.text(72, y, REPEATED_BODY)
        y = d.fill(72, y + 12, lines[3:], "Helvetica")
        d.text(72, y, TABLE_SOURCE)
        drawn += pieces("text", [*lines[:3], REPEATED_BODY, *lines[3:], TABLE_SOURCE])
        footer = f"Chapter {chapter}. {CHAPTERS[chapter - 1]}"
        d.text(72, 752, footer, "Helvetica", 8)
        d.right(540, 752, f"{chapter}-{page}", "Helvetica", 8)
        drawn.append(Piece("furniture", f"{footer} {chapter}-{page}"))
        d.page()
    return Drawn(d.pdf(), tuple(drawn), tuple(tables))


def latex_pages(pages: int) -> Drawn:
    """Pages of a LaTeX article: a text block ending 130 points above the page's foot and the page
    number centred below it, its baseline 97 points up, outside the old fixed 95-point band (which
    only repetition over pages made up for, so one page kept its number in the text)."""
    drawn: list[Piece] = []
    d = Drawing()
    for n in range(pages):
        lines = prose(("India", "Juliet", "Kilo")[n], 40)
        d.fill(72, 84, lines, "Times-Roman", 10)  # the last baseline at 84 + 39 * 12 = 552
        d.centred(306, 792 - 97, str(n + 1), "Times-Roman", 10)
        drawn += [*pieces("text", lines), Piece("furniture", str(n + 1))]
        d.page()
    return Drawn(d.pdf(), tuple(drawn))


def memo(pages: int) -> Drawn:
    """A memo of one or two pages: a small header in the top margin, a title, prose, and "Page 1 of
    2" at the foot. Nothing repeats on a one-page file: the header goes by its position alone."""
    drawn: list[Piece] = []
    d = Drawing()
    for n in range(pages):
        d.text(72, 40, "ACME Corp internal memo", "Helvetica", 8)
        drawn.append(Piece("furniture", "ACME Corp internal memo"))
        if n == 0:
            d.text(72, 100, "Quarterly planning notes", "Helvetica-Bold", 14)
            drawn.append(Piece("heading", "Quarterly planning notes", 1))
        lines = prose(("Lima", "Mike")[n], 10)
        d.fill(72, 130, lines, "Helvetica")
        drawn += pieces("text", lines)
        d.centred(306, 760, f"Page {n + 1} of {pages}", "Helvetica", 8)
        drawn.append(Piece("furniture", f"Page {n + 1} of {pages}"))
        d.page()
    return Drawn(d.pdf(), tuple(drawn))
