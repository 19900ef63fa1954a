"""Scanned PDFs for tests, made here: text pages drawn (``tests/parse/pdfs.py``), rendered by pdfium,
and saved by Pillow as image-only PDF pages, so their text exists only as pixels; each with its truth.

Independent of ``clear_rag.eval.scanned`` (the renders the parse suite scores), so a fault there
cannot hide in the fixtures that test the parsers.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pypdfium2  # type: ignore[import-untyped]
import pytest
from PIL import Image

from clear_rag.errors import ModelMissing
from clear_rag.parse.tesseract import available
from tests.parse.pdfs import Page, Text, paragraph, pdf_bytes

DPI = 300

TITLE = "Quarterly Review of Operations"
PARAGRAPHS = (
    (
        "The harbour authority reported that freight volumes grew",
        "during the spring, while passenger traffic stayed level with",
        "the previous year. Crane maintenance moved to the night shift.",
    ),
    (
        "Dredging of the northern channel finished two weeks early",
        "and under budget. The board approved a second berth for",
        "refrigerated cargo, which opens next summer.",
    ),
    (
        "Customs checks now take eleven minutes on average, down",
        "from nineteen, after the new scanners were installed at",
        "the western gate.",
    ),
)
# The one fact only the scanned page holds, for the end-to-end test's question.
FACT = ("The lighthouse keeper counted seventeen pelicans on the breakwater", "every morning in October.")


def report_page(title: str = TITLE, paragraphs: Sequence[Sequence[str]] = PARAGRAPHS) -> Page:
    """A page with a title and paragraphs of body text, as a person would print it."""
    items: list[Text] = [Text(72, 96, title, 18, bold=True)]
    y = 140.0
    for lines in paragraphs:
        items += paragraph(72, y, list(lines), size=11, leading=15)
        y += 15 * len(lines) + 14
    return Page(tuple(items))


def truth_of(title: str = TITLE, paragraphs: Sequence[Sequence[str]] = PARAGRAPHS) -> str:
    """The page's visible text in reading order."""
    return "\n\n".join([title, *(" ".join(lines) for lines in paragraphs)])


def scanned(data: bytes, dpi: int = DPI) -> bytes:
    """Every page of ``data`` rendered in grey at ``dpi`` and saved by Pillow as an image-only PDF."""
    document = pypdfium2.PdfDocument(data)
    try:
        images = [page.render(scale=dpi / 72, grayscale=True).to_pil() for page in document]
    finally:
        document.close()
    out = io.BytesIO()
    first: Image.Image = images[0]
    first.save(out, "PDF", save_all=True, append_images=images[1:], resolution=float(dpi))
    return out.getvalue()


def joined(*files: bytes) -> bytes:
    """The pages of ``files`` in one PDF, in order (pdfium imports them and saves the whole)."""
    document = pypdfium2.PdfDocument(files[0])
    try:
        for other in files[1:]:
            document.import_pages(pypdfium2.PdfDocument(other))
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()
    finally:
        document.close()


def scanned_report() -> bytes:
    """One scanned page: the report page as pixels only."""
    return scanned(pdf_bytes([report_page()]))


def mixed_report() -> bytes:
    """Page 1 with a text layer, page 2 scanned (holding ``FACT``)."""
    text_page = pdf_bytes([report_page()])
    scan = scanned(pdf_bytes([report_page("Harbour Notes", (FACT,))]))
    return joined(text_page, scan)


def _no_engine() -> str:
    found = available()
    return str(found) if isinstance(found, ModelMissing) else ""


# Tests that read pixels need tesseract; without it they skip, saying how to install it.
needs_tesseract = pytest.mark.skipif(bool(_no_engine()), reason=_no_engine() or "tesseract is here")
