"""PDF through pdfium (pypdfium2): pages as pixels for OCR, and text where pdfminer fails.

This is the one module that imports pypdfium2. pdfplumber (pdfminer) stays the glyph reader; pdfium
is the second reader for what pdfminer cannot give: a page rendered to a greyscale image for
tesseract (``render``), and the characters of a page whose content pdfminer raises on, such as a
colour space it cannot resolve (``page_text``, ``page_words``). Coordinates come out as pdfplumber's:
points from the page's top-left corner.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeAlias

import pypdfium2  # type: ignore[import-untyped]  # no py.typed; pdfplumber's own dependency
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from clear_rag.errors import EncryptedPdfError, PdfError
from clear_rag.parse.layout.geometry import PageGeometry, Word

Document: TypeAlias = pypdfium2.PdfDocument  # an open PDF, for modules that import no pypdfium2
POINTS_PER_INCH = 72.0
WORD_GAP = 0.2  # of the font size, as the layout backend reads words: a wider gap ends a word
LINE_SHIFT = 0.3  # of the font size: a character whose baseline moves more starts a new line


@dataclass(frozen=True, slots=True)
class GreyImage:
    """A page rendered at ``dpi``: ``width`` x ``height`` pixels, one byte each, rows top to bottom."""

    width: int
    height: int
    dpi: int
    pixels: bytes

    def pgm(self) -> bytes:
        """The image as a binary PGM file, which tesseract (leptonica) reads from standard input."""
        return b"P5\n%d %d\n255\n" % (self.width, self.height) + self.pixels


@contextmanager
def opened(data: bytes, source: str) -> Iterator[Document]:
    """The PDF opened by pdfium, closed after use; a ``PdfError`` naming the file if pdfium cannot."""
    try:
        document = pypdfium2.PdfDocument(data)
    except pypdfium2.PdfiumError as err:
        if getattr(err, "err_code", None) == pdfium_c.FPDF_ERR_PASSWORD:
            raise EncryptedPdfError.at(source) from None
        raise PdfError(
            f"cannot be opened by pdfium ({err})",
            path=source,
            fix="Open and re-save it in a PDF viewer (or run `qpdf in.pdf out.pdf`) and ingest the copy",
        ) from None
    try:
        yield document
    finally:
        document.close()


def page_size(document: Document, number: int) -> tuple[float, float]:
    """Page ``number``'s (1-based) width and height in points."""
    page = document[number - 1]
    try:
        return float(page.get_width()), float(page.get_height())
    finally:
        page.close()


def render(document: Document, number: int, dpi: int) -> GreyImage:
    """Page ``number`` (1-based) rasterised in greyscale at ``dpi`` pixels per inch."""
    page = document[number - 1]
    try:
        bitmap = page.render(scale=dpi / POINTS_PER_INCH, grayscale=True)
        array = bitmap.to_numpy()  # height x width, the row padding already cut
        height, width = array.shape[:2]
        return GreyImage(int(width), int(height), dpi, array.tobytes())
    finally:
        page.close()


def page_text(document: Document, number: int) -> str:
    """Page ``number``'s text as pdfium reads it, lines ending in ``\\n``."""
    page = document[number - 1]
    try:
        textpage = page.get_textpage()
        try:
            text = str(textpage.get_text_range())
        finally:
            textpage.close()
    finally:
        page.close()
    return text.replace("\r\n", "\n").replace("\r", "\n")


def document_text(data: bytes, *, source: str) -> tuple[int, str]:
    """A PDF's page count and its whole text, pages joined by a newline."""
    with opened(data, source) as document:
        texts = [page_text(document, number) for number in range(1, len(document) + 1)]
    return len(texts), "\n".join(texts)


def page_words(document: Document, number: int) -> PageGeometry:
    """Page ``number``'s words from pdfium's characters, as the layout backend's records.

    Characters join into a word until a space, a line break, a gap wider than ``WORD_GAP`` of the
    font size or a baseline move of more than ``LINE_SHIFT`` of it. pdfium says nothing of weight
    here, and drawn lines are not read: the page's tables are found from alignment alone.
    """
    page = document[number - 1]
    try:
        width, height = float(page.get_width()), float(page.get_height())
        textpage = page.get_textpage()
        try:
            chars = list(_chars(textpage, height))
        finally:
            textpage.close()
    finally:
        page.close()
    words: list[Word] = []
    run: list[_Char] = []
    for char in [*chars, None]:
        if run and (char is None or char.text.isspace() or _breaks(run[-1], char)):
            words.append(_word(run))
            run = []
        if char is not None and not char.text.isspace():
            run.append(char)
    glyphs = sum(len(word.text) for word in words)
    return PageGeometry(width, height, tuple(words), (), glyphs)


@dataclass(frozen=True, slots=True)
class _Char:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float


def _chars(textpage: pypdfium2.PdfTextPage, height: float) -> Iterator[_Char]:
    for index in range(textpage.count_chars()):
        code = pdfium_c.FPDFText_GetUnicode(textpage, index)
        text = chr(code) if 0 < code < 0x110000 else " "
        if text.isspace() or pdfium_c.FPDFText_IsGenerated(textpage, index) == 1:
            yield _Char(" ", 0, 0, 0, 0, 0)  # pdfium's own space or line break: a word boundary
            continue
        left, bottom, right, top = textpage.get_charbox(index, loose=True)
        size = float(pdfium_c.FPDFText_GetFontSize(textpage, index)) or top - bottom
        yield _Char(text, left, right, height - top, height - bottom, size)


def _breaks(last: _Char, char: _Char) -> bool:
    size = max(min(last.size, char.size), 1.0)
    return char.x0 - last.x1 > WORD_GAP * size or abs(char.bottom - last.bottom) > LINE_SHIFT * size


def _word(run: list[_Char]) -> Word:
    return Word(
        text="".join(char.text for char in run),
        x0=min(char.x0 for char in run),
        x1=max(char.x1 for char in run),
        top=min(char.top for char in run),
        bottom=max(char.bottom for char in run),
        size=max(char.size for char in run),
    )
