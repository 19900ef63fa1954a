"""OCR: pages rendered by pdfium, read by tesseract, and the ``ocr`` PDF backend.

``recognise`` renders each page asked for at ``dpi`` (300 by default, the resolution tesseract's
documentation asks for: body text then stands about 20 pixels per x-height) and reads the pages in
parallel tesseract processes, one thread each. An ``OcrPage`` is one page's words in pixels; it
becomes the layout backend's word records in points (``geometry``: each word keeps its own left and
right edge and takes its line's top and bottom, so the words tesseract put on one line share a
centre, and the line's height stands for the font size) or plain paragraphs (``paragraphs``, in
tesseract's own reading order, which ``flat`` and ``ocr`` use).

Low-confidence words. Tesseract gives each word a confidence from 0 to 100. A misread word kept costs
precision and a correct one dropped costs recall, so a word is worth keeping while it is more often
right than wrong. Words with a letter or digit are kept at any confidence: on a scanned render of a
10-K, even those under ``MIN_CONFIDENCE`` are nearly all words of the filing (tesseract scores
"Company's" with a curly apostrophe at 0; ``tests/parse/test_ocr_corpus.py`` measures it). Words of
punctuation alone under ``MIN_CONFIDENCE`` are left out: they are specks, ruled lines and bullet
glyphs read as "_—", "¢" or "«", which carry no search term and would otherwise stand as table cells
or column edges to the layout rules. ``dropped`` counts them, and the parse's warning says how many.

The ``ocr`` backend reads every page this way, text layer or not (what ``ocrmypdf --force-ocr``
does): for a PDF whose text layer is garbage, and as the plain-tesseract baseline on scans. The
``layout`` and ``flat`` backends OCR only the pages that look scanned (``clear_rag.parse.recover``).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import groupby

from clear_rag.errors import ModelError, PdfError
from clear_rag.parse.base import Parsed
from clear_rag.parse.layout.geometry import PageGeometry, Word
from clear_rag.parse.layout.lines import join_lines
from clear_rag.parse.pdf import MAX_PAGES, MEDIA_TYPE, check_bytes, page_list, too_many_pages
from clear_rag.parse.pdfium import POINTS_PER_INCH, Document, opened, page_size, render
from clear_rag.parse.pieces import Piece, assemble
from clear_rag.parse.tesseract import LANGUAGES, OcrWord, Tesseract

DPI = 300
MIN_CONFIDENCE = 50.0  # percent: under it, a word of punctuation alone is more likely noise than text
MAX_WORKERS = 4  # tesseract processes at once, at most; fewer on fewer cores


def default_workers() -> int:
    return max(1, min(MAX_WORKERS, os.cpu_count() or 1))


@dataclass(frozen=True, slots=True)
class OcrPage:
    """One page as tesseract read it: the words kept, in its reading order, and how many were not."""

    number: int
    width: float  # points
    height: float
    dpi: int
    words: tuple[OcrWord, ...]
    dropped: int = 0

    def geometry(self) -> PageGeometry:
        """The page as the layout backend's records, in points from the top-left corner."""
        scale = POINTS_PER_INCH / self.dpi
        found: list[Word] = []
        for _, grouped in groupby(self.words, key=lambda word: word.line_key):
            line = list(grouped)
            top = min(word.top for word in line) * scale
            bottom = max(word.top + word.height for word in line) * scale
            found += [
                Word(
                    word.text, word.left * scale, (word.left + word.width) * scale, top, bottom, bottom - top
                )
                for word in line
            ]
        glyphs = sum(len(word.text) for word in found)
        return PageGeometry(self.width, self.height, tuple(found), (), glyphs)

    def paragraphs(self) -> list[list[str]]:
        """Tesseract's paragraphs in its order, each as its lines' texts."""
        return [
            [" ".join(word.text for word in line) for _, line in groupby(paragraph, key=lambda w: w.line)]
            for _, paragraph in groupby(self.words, key=lambda word: word.paragraph_key)
        ]

    def text(self) -> str:
        """The page as plain text: a paragraph's lines on lines of their own, a blank line between
        paragraphs (the shape of pdfplumber's ``extract_text`` that ``flat`` splits)."""
        return "\n\n".join("\n".join(lines) for lines in self.paragraphs())


def confident(words: Sequence[OcrWord], minimum: float = MIN_CONFIDENCE) -> tuple[tuple[OcrWord, ...], int]:
    """The words kept, in order: every word with a letter or digit, and punctuation alone of at
    least ``minimum`` confidence; and how many were left out."""
    kept = tuple(word for word in words if word.confidence >= minimum or _worded(word.text))
    return kept, len(words) - len(kept)


def _worded(text: str) -> bool:
    return any(char.isalnum() for char in text)


def recognise(
    document: Document,
    numbers: Sequence[int],
    engine: Tesseract,
    *,
    dpi: int = DPI,
    min_confidence: float = MIN_CONFIDENCE,
    workers: int | None = None,
) -> Iterator[tuple[int, OcrPage | ModelError]]:
    """Each page of ``numbers`` (1-based) read by OCR, in order: its ``OcrPage``, or the error
    tesseract gave on it. Pages are rendered here, one at a time (pdfium is not thread-safe), and
    read by up to ``workers`` tesseract processes at once, so at most that many images wait."""
    count = workers if workers is not None else default_workers()
    pending: deque[tuple[int, float, float, Future[list[OcrWord]]]] = deque()
    with ThreadPoolExecutor(max_workers=count) as pool:
        for number in numbers:
            try:
                width, height = page_size(document, number)
                image = render(document, number, dpi)
            except Exception as err:  # pdfium's failure on a damaged page: that page, not the file
                yield number, _unrendered(number, err)
                continue
            pending.append((number, width, height, pool.submit(engine.read, image)))
            if len(pending) >= count:
                yield _finished(*pending.popleft(), dpi, min_confidence)
        while pending:
            yield _finished(*pending.popleft(), dpi, min_confidence)


def _unrendered(number: int, err: Exception) -> ModelError:
    return ModelError(
        f"pdfium could not render it for OCR ({type(err).__name__}: {err})",
        field="page",
        value=number,
        fix="Re-save the file in a PDF viewer and ingest the copy",
    )


def _finished(
    number: int, width: float, height: float, future: Future[list[OcrWord]], dpi: int, minimum: float
) -> tuple[int, OcrPage | ModelError]:
    try:
        words, dropped = confident(future.result(), minimum)
    except ModelError as err:
        return number, err
    return number, OcrPage(number, width, height, dpi, words, dropped)


def ocr_note(
    source: str, pages: Sequence[OcrPage], engine: Tesseract, dpi: int, minimum: float = MIN_CONFIDENCE
) -> str:
    """The warning that says which pages were OCR'd, by what, and how many unsure words were left out."""
    dropped = sum(page.dropped for page in pages)
    kept = sum(len(page.words) for page in pages)
    return (
        f"{source}: {page_list(page.number for page in pages)} read by OCR ({engine.name}, {dpi} dpi; "
        f"{kept} words kept, {dropped} marks of punctuation under {minimum:g}% confidence left "
        "out); recognition errors are possible"
    )


def failed_note(source: str, failed: Sequence[tuple[int, ModelError]]) -> str:
    """The warning for pages tesseract failed on, which are left out."""
    return (
        f"{source}: {page_list(n for n, _ in failed)} could not be read by OCR and left out ({failed[0][1]})"
    )


class OcrPdfParser:
    """Every page rendered and read by tesseract; tesseract's paragraphs as blocks, in its order."""

    file_type = "pdf"
    backend = "ocr"
    version = "1"

    def __init__(
        self,
        *,
        dpi: int = DPI,
        languages: str = LANGUAGES,
        binary: str | None = None,
        max_pages: int = MAX_PAGES,
        workers: int | None = None,
    ) -> None:
        for name, value in (
            ("dpi", dpi),
            ("max_pages", max_pages),
            ("workers", 1 if workers is None else workers),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a whole number of at least 1")
        self.engine = Tesseract(binary, languages=languages)  # ModelMissing, naming the apt command
        self.dpi, self.max_pages, self.workers = dpi, max_pages, workers

    def parse(self, data: bytes, *, source: str) -> Parsed:
        check_bytes(data, source)
        with opened(data, source) as document:
            total = len(document)
            if total == 0:
                raise PdfError(
                    "has no pages", path=source, fix="Export it again, or remove it from the folder"
                )
            if total > self.max_pages:
                raise too_many_pages(source, total, self.max_pages)
            found = list(
                recognise(document, range(1, total + 1), self.engine, dpi=self.dpi, workers=self.workers)
            )
        read = [page for _, page in found if isinstance(page, OcrPage)]
        failed = [(number, page) for number, page in found if isinstance(page, ModelError)]
        meta = {"ocr": self.engine.name}
        text, blocks = assemble(
            Piece("paragraph", join_lines(lines), meta={"page": str(page.number), **meta})
            for page in read
            for lines in page.paragraphs()
        )
        if not blocks:
            raise PdfError(
                f"holds no text OCR could read on any of its {total} page{'s' if total != 1 else ''}"
                + (f" ({failed[0][1]})" if failed else ""),
                path=source,
                fix="Check that its pages are images of text, upright, and in the OCR languages",
            )
        warnings = [ocr_note(source, read, self.engine, self.dpi)]
        if failed:
            warnings.append(failed_note(source, failed))
        ocr_pages = tuple(page.number for page in read if page.words)
        return Parsed(text, blocks, MEDIA_TYPE, tuple(warnings), ocr_pages=ocr_pages)
