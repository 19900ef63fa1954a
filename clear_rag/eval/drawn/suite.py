"""The parse suite's cases: each failure mode of issue 31 drawn as a PDF with its truth, written as a
folder ``clear-rag parse-eval`` scores like any other (``pdf/<case>.pdf`` beside ``truth/<case>.json``,
the truth in the documented format), and scored per case by every backend.

The tests draw the same cases (``tests/parse/test_layout_*.py``, ``test_rtl.py``) from the same
builders, so a case in the results is the PDF a test checks. One case is a scan: the two-page memo
rendered as page images (``clear_rag.eval.scanned``, the renderer of the 10-K scans), scored against the
memo's truth, its furniture counted on the memo's own text layer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clear_rag.errors import ModelMissing
from clear_rag.eval.drawn import equations, pages, papers, tabled
from clear_rag.eval.drawn.drawn import Drawn
from clear_rag.eval.parse.corpus import evaluate
from clear_rag.eval.scanned import SCAN_DPI, scan_pdf

SOURCE = "clear_rag.eval.drawn"


@dataclass(frozen=True, slots=True)
class Case:
    """A case's name (its file names), what it draws, and the builder that draws it."""

    name: str
    what: str
    draw: Callable[[], Drawn]


CASES: tuple[Case, ...] = (
    Case(
        "headings-tex",
        "a paper's headings in TeX's and URW's bold fonts, some just above the body size, one run in; "
        "a bold caption and code lines that are no headings",
        papers.paper,
    ),
    Case(
        "furniture-manual",
        '12 pages: a running header, chapter footers whose text changes ("Chapter 3. Indexing 3-2"), '
        "a continued table's head row and a sentence repeated in the body",
        pages.manual,
    ),
    Case("furniture-latex", "3 pages, LaTeX page numbers 97 pt up", lambda: pages.latex_pages(3)),
    Case("furniture-latex-1-page", "the same on one page: nothing repeats", lambda: pages.latex_pages(1)),
    Case("furniture-memo-1-page", 'a header and "Page 1 of 1" on one page', lambda: pages.memo(1)),
    Case("furniture-memo-2-pages", "the same over two pages", lambda: pages.memo(2)),
    Case(
        "turned",
        "stamps up and down the margins, a diagonal watermark, a line upside down, a landscape page",
        papers.turned,
    ),
    Case(
        "right-to-left",
        "Arabic and Persian lines drawn in visual order; an English line quoting an Arabic word",
        papers.right_to_left,
    ),
    Case("table-empty-cells-ruled", "a ruled grid with empty cells", tabled.empty_cells_ruled),
    Case(
        "table-empty-cells-aligned", "the same without rules, between paragraphs", tabled.empty_cells_aligned
    ),
    Case(
        "table-labels-outside-grid",
        "row labels left of a ruled grid",
        lambda: tabled.labels_outside_grid(rules_under_labels=False),
    ),
    Case(
        "table-labels-outside-grid-ruled",
        "the same with the rules running on under the labels",
        lambda: tabled.labels_outside_grid(rules_under_labels=True),
    ),
    Case("table-beside-prose-ruled", "a ruled grid in one column of two", tabled.ruled_beside_column),
    Case(
        "table-beside-prose-aligned",
        "a table without rules in one column of two",
        tabled.aligned_beside_column,
    ),
    Case("tables-stacked", "two tables one under the other, each with its heads", tabled.stacked_tables),
    Case("table-wrapped-labels", "a statement whose label wraps over three lines", tabled.wrapped_labels),
    Case("table-wordy-labels", "labels that read like prose, on a one-column page", tabled.wordy_labels),
    Case(
        "table-turned-head",
        "a ruled grid whose column heads are turned a quarter round",
        tabled.turned_head,
    ),
    Case(
        "equation-symbol",
        "a display equation in Symbol and Times-Italic: no table",
        equations.display_equation,
    ),
    Case(
        "equation-times",
        "the same in Times alone",
        lambda: equations.display_equation(symbol_font=False),
    ),
)
SCANNED = ("scanned-memo", "furniture-memo-2-pages")  # the scan, and the case it is made from
SCANNED_WHAT = "the two-page memo as page images at {dpi} dpi, no text layer: read by OCR"


@dataclass(frozen=True, slots=True)
class Written:
    """The suite as written: its PDFs in case order, what each case draws, the PDF a scan was made
    from (whose text counts the pages' furniture), and the cases that could not be drawn and why."""

    pdfs: tuple[Path, ...]
    what: dict[str, str]
    originals: dict[Path, Path]
    not_drawn: dict[str, str]


def write_suite(folder: Path, *, cases: Sequence[Case] | None = None, dpi: int = SCAN_DPI) -> Written:
    """Each case (default ``CASES``) drawn into ``folder/pdf/<case>.pdf`` with its truth in
    ``folder/truth/<case>.json``, and the memo's scan beside them; a case whose fonts or reportlab are
    missing is left out, its reason in ``not_drawn``."""
    (folder / "pdf").mkdir(parents=True, exist_ok=True)
    (folder / "truth").mkdir(parents=True, exist_ok=True)
    pdfs: list[Path] = []
    what: dict[str, str] = {}
    drawn: dict[str, Drawn] = {}
    not_drawn: dict[str, str] = {}
    for case in CASES if cases is None else cases:
        try:
            drawn[case.name] = case.draw()
        except ModelMissing as err:
            not_drawn[case.name] = str(err)
            continue
        pdfs.append(_write(folder, case.name, drawn[case.name].pdf, drawn[case.name]))
        what[case.name] = case.what
    originals: dict[Path, Path] = {}
    scan, original = SCANNED
    if original in drawn:
        data = scan_pdf(drawn[original].pdf, source=f"{original}.pdf", dpi=dpi)
        pdfs.append(_write(folder, scan, data, drawn[original]))
        originals[pdfs[-1]] = folder / "pdf" / f"{original}.pdf"
        what[scan] = SCANNED_WHAT.format(dpi=dpi)
    return Written(tuple(pdfs), what, originals, not_drawn)


def _write(folder: Path, name: str, data: bytes, drawn: Drawn) -> Path:
    pdf = folder / "pdf" / f"{name}.pdf"
    pdf.write_bytes(data)
    truth = json.dumps(drawn.truth_file(f"{SOURCE}: {name}"), ensure_ascii=False, indent=1)
    (folder / "truth" / f"{name}.json").write_text(truth + "\n", encoding="utf-8")
    return pdf


def evaluate_cases(folder: Path, backends: Sequence[str], *, dpi: int = SCAN_DPI) -> dict[str, Any]:
    """The result file's ``cases`` part: the suite written to ``folder`` and each case scored by each
    backend (``clear_rag.eval.parse.corpus.evaluate``: per backend its version, the cases' micro average
    as ``overall`` and a row per case under ``documents``, or why it was not run)."""
    written = write_suite(folder, dpi=dpi)
    scores = evaluate(
        list(written.pdfs), folder / "truth", backends, folder / "pdf", originals=written.originals
    )
    return {
        "folder": folder.as_posix(),
        "cases": written.what,
        "backends": scores,
    } | ({"not_drawn": written.not_drawn} if written.not_drawn else {})
