"""Pages pdfminer cannot read, read by pdfium instead; and which pages count as scanned.

The fixture reproduces a real pdfminer failure: an ICC-based colour space whose stream lacks its
component count (``/N``), on which pdfminer raises ``PDFKeyError`` for the whole page while pdfium
reads the text (the issue's "colour-space error that refuses a whole file"). Other failures are
injected into the page reader.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from clear_rag.errors import PdfError
from clear_rag.eval.parse.tokens import tokens
from clear_rag.parse import pdf
from clear_rag.parse.layout.geometry import PageGeometry
from clear_rag.parse.pdf import IMAGE_COVER, NEARLY_EMPTY, looks_scanned
from clear_rag.parse.registry import get_parser
from tests.parse.pdfs import Page, paragraph, pdf_bytes
from tests.parse.test_parse_properties import check_blocks

BROKEN_COLOUR = b"/ColorSpace << /CS0 [/ICCBased << >>] >>"
FIRST = ["Ledger totals agree with the bank statement.", "Every invoice was matched by hand."]
SECOND = ["The auditors found no exceptions this year.", "Their letter follows on the next page."]


def page(lines: list[str], *, broken: bool = False) -> Page:
    # well inside the page: a one-page file's line nearest an edge within its margin band is furniture
    return Page(tuple(paragraph(72, 300, lines)), resources=BROKEN_COLOUR if broken else b"")


@pytest.mark.parametrize("backend", ["layout", "flat"])
def test_a_colour_space_pdfminer_fails_on_is_read_by_pdfium(backend: str) -> None:
    data = pdf_bytes([page(FIRST, broken=True)])
    (read,) = pdf.read_pages(data, "cs.pdf", lambda p: p.chars)  # what pdfminer makes of it
    assert read.value is None and "does not have attribute 'N'" in str(read.error)
    parsed = get_parser("pdf", backend).parse(data, source="cs.pdf")
    check_blocks(parsed)
    assert tokens(parsed.text) == tokens(" ".join(FIRST))
    (warning,) = parsed.warnings
    assert warning.startswith("cs.pdf: pdfminer could not read page 1 (PDFKeyError: ")
    assert "read with pdfium instead" in warning


@pytest.mark.parametrize("backend", ["layout", "flat"])
def test_only_the_failing_page_is_read_another_way(backend: str) -> None:
    data = pdf_bytes([page(FIRST), page(SECOND, broken=True)])
    parsed = get_parser("pdf", backend).parse(data, source="two.pdf")
    check_blocks(parsed)
    assert tokens(parsed.text) == tokens(" ".join(FIRST + SECOND))
    assert {b.meta["page"] for b in parsed.blocks} == {"1", "2"}
    assert [w for w in parsed.warnings if "pdfium" in w] == [
        next(w for w in parsed.warnings if w.startswith("two.pdf: pdfminer could not read page 2 "))
    ]


def test_pdfiums_words_read_like_pdfminers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure injected into the glyph reader on page 2 of a two-column report: the page read from
    pdfium's characters gives the layout rules the same words in the same order."""
    from tests.parse.pdfs import report_pdf

    data = report_pdf()
    whole = get_parser("pdf", "layout").parse(data, source="r.pdf")
    real = pdf.page_geometry

    def failing(page: Any, **kwargs: float) -> PageGeometry:
        if page.page_number == 2:
            raise KeyError("injected")
        return real(page, **kwargs)

    monkeypatch.setattr("clear_rag.parse.layout.parser.page_geometry", failing)
    recovered = get_parser("pdf", "layout").parse(data, source="r.pdf")
    check_blocks(recovered)
    body = [b for b in recovered.blocks if b.kind != "furniture"]
    assert tokens(" ".join(recovered.text[b.start : b.end] for b in body)) == tokens(
        " ".join(whole.text[b.start : b.end] for b in whole.blocks if b.kind != "furniture")
    )
    assert any("pdfminer could not read page 2 (KeyError: 'injected')" in w for w in recovered.warnings)


def test_a_page_neither_reader_reads_is_left_out_and_a_file_of_them_is_damaged(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def unreadable(*args: object, **kwargs: object) -> PageGeometry:
        raise ValueError("pdfium too")

    monkeypatch.setattr("clear_rag.parse.layout.parser.page_words", unreadable)
    parsed = get_parser("pdf", "layout").parse(
        pdf_bytes([page(FIRST), page(SECOND, broken=True)]), source="lost.pdf"
    )
    assert tokens(parsed.text) == tokens(" ".join(FIRST))
    left_out = "lost.pdf: page 2 could not be read and was left out (PDFKeyError"
    assert any(w.startswith(left_out) for w in parsed.warnings)
    with pytest.raises(PdfError, match=r"^lost\.pdf: is damaged \(no page could be read\)"):
        get_parser("pdf", "layout").parse(pdf_bytes([page(FIRST, broken=True)]), source="lost.pdf")


# --- which pages are scans ---


def _page(chars: int, *images: tuple[float, float, float, float]) -> Any:
    """A stand-in pdfplumber page: Letter, ``chars`` characters, images as (x0, top, x1, bottom)."""
    return SimpleNamespace(
        bbox=(0, 0, 612, 792),
        chars=[{"text": "x"}] * chars + [{"text": " "}] * 500,
        images=[dict(zip(("x0", "top", "x1", "bottom"), box, strict=True)) for box in images],
    )


def test_a_scan_is_an_image_over_half_the_page_with_less_than_a_line_of_text() -> None:
    full = (0.0, 0.0, 612.0, 792.0)
    assert looks_scanned(_page(0, full))
    assert looks_scanned(_page(NEARLY_EMPTY - 1, full))  # a stamp or a fax header line on a scan
    assert not looks_scanned(_page(NEARLY_EMPTY, full))  # a text layer: kept
    assert not looks_scanned(_page(0))  # blank: nothing to read
    below = 792 * IMAGE_COVER * 0.99
    assert not looks_scanned(_page(0, (0, 0, 612, below)))  # a picture, not a page
    strips = [(0.0, top, 612.0, top + 792 / 4) for top in (0, 792 / 4, 792 / 2)]
    assert looks_scanned(_page(0, *strips))  # a scanner's strips add up
    assert looks_scanned(_page(0, (-100, -100, 700, 900)))  # bleeding off the page counts the page only
