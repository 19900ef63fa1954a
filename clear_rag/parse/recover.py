"""Every page of a PDF read one way or another: the text layer where it is, OCR where a page is an
image of text, pdfium where pdfminer fails.

``read_pdf`` is how the ``layout`` and ``flat`` backends read a file. pdfplumber reads each page
(``clear_rag.parse.pdf.read_pages``); then

* a page that looks scanned (a text layer of less than a line while images cover half of it or
  more, ``pdf.looks_scanned``) is rendered and read by tesseract, when it is installed; when it is
  not, the page stays as it was (no text) and a warning names the pages and the apt command, beside
  the hint to run ``ocrmypdf`` the parsers already give;
* a page pdfminer raises on (an ICC colour space without its component count, say) is read by
  pdfium instead, with a warning naming the page and pdfminer's error; only a page neither reader
  can read is left out, and a file none of whose pages either can read is damaged.

The backend says what each page became: ``from_ocr`` and ``from_pdfium`` turn the other readers'
output into the same value ``read`` makes from a pdfplumber page.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Generic, TypeVar

from clear_rag.errors import ModelError, ModelMissing, PdfError
from clear_rag.parse.ocr import DPI, MIN_CONFIDENCE, OcrPage, failed_note, ocr_note, recognise
from clear_rag.parse.pdf import MAX_PAGES, PageRead, PdfPage, damaged, page_list, read_pages
from clear_rag.parse.pdfium import Document, opened
from clear_rag.parse.tesseract import LANGUAGES, Tesseract, available
from clear_rag.types import Block

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class OcrSettings:
    """How scanned pages are read: resolution, languages, the binary (None: ``tesseract`` on PATH),
    the words kept, and how many tesseract processes run at once (None: one per core, up to 4)."""

    dpi: int = DPI
    languages: str = LANGUAGES
    binary: str | None = None
    min_confidence: float = MIN_CONFIDENCE
    workers: int | None = None

    def __post_init__(self) -> None:
        for name, value in (("dpi", self.dpi), ("workers", 1 if self.workers is None else self.workers)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(
                    f"OcrSettings.{name}={value!r} must be a whole number of at least 1, e.g. 300"
                )
        if not 0 <= self.min_confidence <= 100:
            raise ValueError(f"OcrSettings.min_confidence={self.min_confidence!r} must be from 0 to 100")


@dataclass(frozen=True, slots=True)
class Pages(Generic[T]):
    """A file's pages as ``(number, value)`` in page order (pages no reader could read are absent),
    the warnings to pass on, the pages whose value OCR made and the engine that made them, and, where
    scanned pages were left unread for want of tesseract, why (the parsers' error says it too)."""

    read: list[tuple[int, T]]
    warnings: list[str] = field(default_factory=list)
    ocr_pages: tuple[int, ...] = ()
    engine: str = ""
    no_engine: ModelMissing | None = None

    @property
    def or_else(self) -> str:
        """For a file of scans and no OCR engine: the second way out its error offers."""
        if self.no_engine is None:
            return ""
        return f"let clear-rag OCR it ({self.no_engine.what}: {self.no_engine.fix})"


def read_pdf(
    data: bytes,
    source: str,
    read: Callable[[PdfPage], T],
    *,
    from_ocr: Callable[[OcrPage], T],
    from_pdfium: Callable[[Document, int], T],
    ocr: OcrSettings | None = OcrSettings(),
    max_pages: int = MAX_PAGES,
) -> Pages[T]:
    """Every page of the PDF read: by ``read`` from pdfplumber, else as the module docstring says.
    ``ocr=None`` turns OCR off (scanned pages stay empty, as without tesseract)."""
    pages = read_pages(data, source, read, max_pages=max_pages)
    values = {page.number: page.value for page in pages if page.error is None}
    failed = [page for page in pages if page.error is not None]
    scans = [page.number for page in pages if page.scanned]
    engine: Tesseract | None = None
    no_engine: ModelMissing | None = None
    if scans and ocr is not None:
        found = available(ocr.binary, languages=ocr.languages)
        engine, no_engine = (None, found) if isinstance(found, ModelMissing) else (found, None)
    warnings: list[str] = []
    read_by_ocr: list[OcrPage] = []
    if failed or engine is not None:
        try:
            with opened(data, source) as document:
                warnings += _from_pdfium(document, failed, from_pdfium, values, source)
                if engine is not None and ocr is not None:
                    read_by_ocr, ocr_failed = _from_ocr(document, scans, engine, ocr, from_ocr, values)
                    if read_by_ocr:
                        warnings.append(ocr_note(source, read_by_ocr, engine, ocr.dpi, ocr.min_confidence))
                    if ocr_failed:
                        warnings.append(failed_note(source, ocr_failed))
        except PdfError:  # pdfium cannot open what pdfminer could: the pages stay as pdfminer left them
            warnings += _left_out(source, [page for page in failed if page.number not in values])
    if not values:
        raise damaged(source, failed[0].error or ValueError("no page"), " (no page could be read)")
    if no_engine is not None:
        warnings.append(
            f"{source}: {page_list(scans)} {'is an image' if len(scans) == 1 else 'are images'} of text "
            f"that OCR would read, but {no_engine.what}. {no_engine.fix}"
        )
    return Pages(
        read=sorted(
            ((n, value) for n, value in values.items() if value is not None), key=lambda item: item[0]
        ),
        warnings=warnings,
        ocr_pages=tuple(page.number for page in read_by_ocr if page.words),
        engine=engine.name if engine is not None and read_by_ocr else "",
        no_engine=no_engine,
    )


def _from_pdfium(
    document: Document,
    failed: Sequence[PageRead[T]],
    from_pdfium: Callable[[Document, int], T],
    values: dict[int, T | None],
    source: str,
) -> list[str]:
    """The pages pdfminer failed on, read by pdfium into ``values``; warnings for both kinds."""
    recovered, lost = [], []
    for page in failed:
        try:
            values[page.number] = from_pdfium(document, page.number)
            recovered.append(page)
        except Exception:  # pdfium's own failure on a damaged page: the page is lost to both readers
            lost.append(page)
    warnings = _left_out(source, lost)
    if recovered:
        first = recovered[0].error
        warnings.append(
            f"{source}: pdfminer could not read {page_list(p.number for p in recovered)} "
            f"({type(first).__name__}: {str(first)[:120]}); read with pdfium instead, without drawn "
            "lines or font weights"
        )
    return warnings


def _left_out(source: str, lost: Sequence[PageRead[T]]) -> list[str]:
    if not lost:
        return []
    first = lost[0].error
    return [
        f"{source}: {page_list(p.number for p in lost)} could not be read and "
        f"{'was' if len(lost) == 1 else 'were'} left out ({type(first).__name__}: {str(first)[:120]}). "
        "Re-save the file in a PDF viewer to recover them"
    ]


def _from_ocr(
    document: Document,
    scans: Sequence[int],
    engine: Tesseract,
    ocr: OcrSettings,
    from_ocr: Callable[[OcrPage], T],
    values: dict[int, T | None],
) -> tuple[list[OcrPage], list[tuple[int, ModelError]]]:
    """The scanned pages read by tesseract into ``values``; the pages read, and those it failed on
    (left as pdfminer read them)."""
    read: list[OcrPage] = []
    failed: list[tuple[int, ModelError]] = []
    pages = recognise(
        document, scans, engine, dpi=ocr.dpi, min_confidence=ocr.min_confidence, workers=ocr.workers
    )
    for number, page in pages:
        if isinstance(page, ModelError):
            failed.append((number, page))
            continue
        values[number] = from_ocr(page)
        read.append(page)
    return read, failed


def mark_ocr(blocks: Iterable[Block], ocr_pages: Sequence[int], engine: str) -> tuple[Block, ...]:
    """The blocks, those of an OCR'd page (by their ``page``) saying so: ``meta["ocr"]`` names the
    engine, so a citation into them can say its text was read from pixels."""
    pages = {str(number) for number in ocr_pages}
    return tuple(
        replace(block, meta={**block.meta, "ocr": engine}) if block.meta.get("page") in pages else block
        for block in blocks
    )
