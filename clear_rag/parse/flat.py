"""The ``flat`` PDF backend: pdfplumber's own ``extract_text``, page by page.

The baseline the layout parser is measured against: pages joined by a blank line, one paragraph
block per blank-line-separated run. A scanned page is read by OCR (tesseract's paragraphs, lines
kept as lines) and a page pdfminer fails on by pdfium (``clear_rag.parse.recover``).
"""

from __future__ import annotations

import re

from clear_rag.parse.base import Parsed
from clear_rag.parse.ocr import OcrPage
from clear_rag.parse.pdf import MAX_PAGES, MEDIA_TYPE, PdfPage, blank_pages_warning, no_text_layer
from clear_rag.parse.pdfium import page_text
from clear_rag.parse.pieces import Piece, assemble
from clear_rag.parse.recover import OcrSettings, mark_ocr, read_pdf
from clear_rag.parse.rtl import logical_order

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


class FlatPdfParser:
    """pdfplumber's own ``extract_text``, page by page: the baseline for the layout parser."""

    file_type = "pdf"
    backend = "flat"
    # 2: right-to-left lines in reading order; 3: scanned pages OCR'd, pages pdfminer fails on read by pdfium
    version = "3"

    def __init__(self, *, max_pages: int = MAX_PAGES, ocr: OcrSettings | None = OcrSettings()) -> None:  # noqa: B008
        if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
            raise ValueError(f"max_pages={max_pages!r} must be a whole number of at least 1, e.g. 2000")
        self.max_pages = max_pages
        self.ocr = ocr

    def parse(self, data: bytes, *, source: str) -> Parsed:
        pages = read_pdf(
            data,
            source,
            _page_text,
            from_ocr=OcrPage.text,
            from_pdfium=page_text,
            ocr=self.ocr,
            max_pages=self.max_pages,
        )
        warnings = list(pages.warnings)
        pieces: list[Piece] = []
        blank: list[int] = []
        for number, text in pages.read:
            runs = [run for run in _BLANK_LINE.split(text) if run.strip()]
            if not runs:
                blank.append(number)
            pieces += [Piece("paragraph", run, meta={"page": str(number)}) for run in runs]
        text, blocks = assemble(pieces)
        if not blocks:
            raise no_text_layer(source, len(pages.read), or_else=pages.or_else)
        if blank:
            warnings.append(blank_pages_warning(source, blank))
        blocks = mark_ocr(blocks, pages.ocr_pages, pages.engine)
        return Parsed(text, blocks, MEDIA_TYPE, tuple(warnings), ocr_pages=pages.ocr_pages)


def _page_text(page: PdfPage) -> str:
    """The page's text, each line in reading order (right-to-left script too: ``rtl``)."""
    return "\n".join(logical_order(line) for line in str(page.extract_text()).split("\n"))
