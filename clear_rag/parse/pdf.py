"""PDF through pdfplumber: opening a file safely, reading each page, and telling scanned pages.

This is the one module that imports pdfplumber. It turns a file's bytes into pages, and every way a
file can fail (not a PDF, truncated, encrypted, no pages, too many pages, damaged) into a
``PdfError`` naming the file and what to do; a page pdfminer fails on is kept as its error, for
``clear_rag.parse.recover`` to read another way. The ``layout`` backend reads its glyph geometry
from here (``page_geometry``) and does its inference on plain records, without pdfplumber; the
``flat`` backend (``clear_rag.parse.flat``) reads each page's ``extract_text``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import suppress
from dataclasses import dataclass
from io import BytesIO
from typing import Any, Generic, TypeAlias, TypeVar

import pdfplumber
from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.pdftypes import resolve1
from pdfminer.psparser import literal_name
from pdfplumber.page import Page
from pdfplumber.pdf import PDF
from pdfplumber.utils.exceptions import PdfminerException
from pdfplumber.utils.text import extract_words

from clear_rag.errors import EmptyFileError, EncryptedPdfError, ModelMissing, PdfError, ScannedPdfError
from clear_rag.parse.layout.asides import in_cells
from clear_rag.parse.layout.drawing import drawn_rules
from clear_rag.parse.layout.fonts import FontStyle, font_style, resource_styles
from clear_rag.parse.layout.geometry import Aside, PageGeometry, Rule, Word
from clear_rag.parse.layout.maths import is_math_font
from clear_rag.parse.layout.rotation import (
    Frame,
    body_angle,
    by_angle,
    frame,
    glyph_in_frame,
    relative_angle,
)

MEDIA_TYPE = "application/pdf"
MAX_PAGES = 2000  # a 10-K is 100-300 pages; a file of more is split before ingesting, or the cap raised
# The header may follow up to 1 KB of junk, and %%EOF must be in the last 1 KB: what Acrobat accepts.
_HEADER_WINDOW = _TAIL_WINDOW = 1024
_SHOWN_PAGES = 8

T = TypeVar("T")
PdfPage: TypeAlias = Page  # what ``read_pages`` hands its reader, named for modules that import no pdfplumber


def check_bytes(data: bytes, source: str) -> None:
    """Refuse what is no PDF, or not all of one, before pdfminer reads it.

    A file without ``%PDF-`` in its first kilobyte is something else with a ``.pdf`` name; one
    without ``%%EOF`` in its last kilobyte was cut short (a download that stopped), and pdfminer's
    repair scan would otherwise read what survived and silently drop the rest.
    """
    if not data.strip():
        raise EmptyFileError(
            "is empty (0 bytes)" if not data else "is empty (only whitespace)",
            path=source,
            fix="Export or download the PDF again, or remove it from the folder",
        )
    if b"%PDF-" not in data[:_HEADER_WINDOW]:
        raise PdfError(
            f"is not a PDF (no %PDF- header; it starts with {data[:16]!r})",
            path=source,
            fix="Give it the extension of its real format, or remove it from the folder",
        )
    if b"%%EOF" not in data[-_TAIL_WINDOW:]:
        raise PdfError(
            f"is truncated (no %%EOF marker at its end; {len(data)} bytes)",
            path=source,
            fix="Download or export it again in full",
        )


def _cause(err: Exception) -> Exception:
    """What pdfminer raised, out of the ``PdfminerException`` pdfplumber wraps it in."""
    cause = err.args[0] if isinstance(err, PdfminerException) and err.args else err
    return cause if isinstance(cause, Exception) else err


def damaged(source: str, err: BaseException, where: str = "") -> PdfError:
    """The error for bytes pdfminer cannot read, naming what it said."""
    cause = err.args[0] if isinstance(err, PdfminerException) and err.args else err
    said = f"{type(cause).__name__}: {cause}".rstrip(": ")
    return PdfError(
        f"is damaged{where} and cannot be read ({said[:200]})",
        path=source,
        fix="Open and re-save it in a PDF viewer (or run `qpdf in.pdf out.pdf`) and ingest the copy",
    )


@dataclass(frozen=True, slots=True)
class PageRead(Generic[T]):
    """What became of one page: ``read``'s result, or the error pdfminer raised on it; and whether it
    looks scanned (``looks_scanned``), so its text is to be read from its pixels."""

    number: int
    value: T | None = None
    error: Exception | None = None
    scanned: bool = False


def read_pages(
    data: bytes, source: str, read: Callable[[Page], T], *, max_pages: int = MAX_PAGES
) -> list[PageRead[T]]:
    """``read`` applied to every page, in page order, with each page's failure kept rather than
    raised (``clear_rag.parse.recover`` decides what becomes of it). Each page's parsed objects are
    released once read, so memory follows one page, not the file.
    """
    check_bytes(data, source)
    # pdfminer raises dozens of exception types on malformed input (PSSyntaxError, KeyError,
    # TypeError, RecursionError, ...): at this boundary each becomes a PdfError naming the file.
    try:
        pdf = pdfplumber.open(BytesIO(data), raise_unicode_errors=False)
    except PdfminerException as err:
        cause = err.args[0] if err.args else err
        if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
            raise EncryptedPdfError.at(source) from None
        raise damaged(source, err) from None
    except Exception as err:
        raise damaged(source, err) from None
    try:
        return _each_page(pdf, source, read, max_pages)
    finally:
        _close(pdf)


def too_many_pages(source: str, pages: int, max_pages: int) -> PdfError:
    return PdfError(
        f"has {pages} pages, more than the {max_pages} read from one file (max_pages)",
        path=source,
        fix="Split it (e.g. `qpdf --split-pages`) or raise max_pages for the PDF parser",
    )


def _each_page(pdf: PDF, source: str, read: Callable[[Page], T], max_pages: int) -> list[PageRead[T]]:
    try:
        pages = pdf.pages
    except Exception as err:
        raise damaged(source, err, " (its page tree)") from None
    if not pages:
        raise PdfError("has no pages", path=source, fix="Export it again, or remove it from the folder")
    if len(pages) > max_pages:
        raise too_many_pages(source, len(pages), max_pages)
    found: list[PageRead[T]] = []
    for page in pages:
        try:
            value = read(page)
            found.append(PageRead(page.page_number, value, scanned=looks_scanned(page)))
        except Exception as err:
            found.append(PageRead(page.page_number, error=_cause(err)))
        finally:
            page.close()
    return found


# A scan's text layer, if any, is a stamp: a page number, a Bates number, a fax header line.
NEARLY_EMPTY = 100  # characters: fewer than a line of text
IMAGE_COVER = 0.5  # of the page's area covered by images


def looks_scanned(page: Page) -> bool:
    """A page to read by OCR: its text layer holds fewer than ``NEARLY_EMPTY`` (100) characters while
    images cover at least ``IMAGE_COVER`` (half) of it, summed over the images, since a scanner may
    cut a page into strips. A page with no image is blank, not scanned: OCR would find nothing."""
    if sum(1 for char in page.chars if not char["text"].isspace()) >= NEARLY_EMPTY:
        return False
    x0, top, x1, bottom = (float(v) for v in page.bbox)
    area = (x1 - x0) * (bottom - top)
    if area <= 0:
        return False
    covered = 0.0
    for image in page.images:
        width = min(float(image["x1"]), x1) - max(float(image["x0"]), x0)
        height = min(float(image["bottom"]), bottom) - max(float(image["top"]), top)
        covered += max(width, 0.0) * max(height, 0.0)
    return covered >= IMAGE_COVER * area


def _close(pdf: PDF) -> None:
    """Close without raising: pdfplumber's ``close`` walks the page tree again, and on a damaged
    one raises the very error that is being reported (its ``with`` block did just that, and the
    pdfminer exception replaced the ``PdfError``)."""
    try:
        pdf.close()
    except Exception:
        pdf.stream.close()


def no_text_layer(source: str, pages: int, *, or_else: str = "") -> ScannedPdfError:
    """The error for a PDF none of whose pages holds a character: images of pages. ``or_else`` is a
    second way out (installing the OCR engine, where the pages are images it could read)."""
    return ScannedPdfError(
        f"has no text layer on any of its {pages} page{'s' if pages != 1 else ''}: it looks scanned",
        path=source,
        fix="Add a text layer with OCR, e.g. `ocrmypdf in.pdf out.pdf`, and ingest the copy"
        + (f"; or {or_else}" if or_else else ""),
    )


def blank_pages_warning(source: str, blank: list[int]) -> str:
    """A warning naming pages without text in a PDF that has some."""
    return (
        f"{source}: {page_list(blank)} {'has' if len(blank) == 1 else 'have'} no text layer (blank, or "
        "scanned images of text); `ocrmypdf` adds one"
    )


def page_list(numbers: Iterable[int]) -> str:
    """``page 3``, ``pages 2, 5`` or ``pages 1, ..., 8 and 4 more``."""
    listed = list(numbers)
    shown = ", ".join(str(n) for n in listed[:_SHOWN_PAGES])
    more = f" and {len(listed) - _SHOWN_PAGES} more" if len(listed) > _SHOWN_PAGES else ""
    return f"page {shown}" if len(listed) == 1 else f"pages {shown}{more}"


def missing_backend(package: str, backend: str, extra: str, models: str) -> ModelMissing:
    """The error for an optional PDF backend whose package is not installed."""
    return ModelMissing(
        f"the {backend} PDF backend needs the {package} package, which is not installed",
        field="backend",
        value=backend,
        fix=f"Install it with `pip install 'clear-rag[{extra}]'` (on first use {backend} downloads "
        f"{models} from Hugging Face, which takes minutes and needs the network), or use the "
        "built-in `layout` backend",
    )


# --- glyph geometry for the layout backend ---


def page_geometry(page: Page, *, word_gap: float, line_tolerance: float) -> PageGeometry:
    """One page's words (with font size, weight, slant and pitch) and drawn rules, as plain records.

    Glyphs are grouped by the direction they run in (``layout.rotation``); the group holding most
    of them is the body, read in the frame where it runs left to right (a landscape table page is
    read turned), and every other group is an ``Aside`` read in its own frame. Words are
    pdfplumber's ``extract_words`` with tolerances relative to the font size: a gap of more than
    ``word_gap`` times the size starts a new word, and characters whose tops differ by more than
    ``line_tolerance`` times the size are on different lines. A change of font or size also ends a
    word (``extra_attrs``), so a bold word followed by a regular comma is two words; the layout rules
    join such touching words without a space.
    """
    chars = page.chars
    glyphs = sum(1 for char in chars if not char["text"].isspace())
    styles: dict[str, FontStyle] = {}
    # pdfminer raises many types on a damaged dictionary; the fonts' names alone then suffice
    with suppress(Exception):
        styles = resource_styles(page.page_obj.resources, resolve1, literal_name)
    groups = by_angle(chars)
    angle = body_angle(groups)
    width, height = float(page.width), float(page.height)
    body = frame(angle, width, height)

    def words(found: list[Any], turned: Frame) -> tuple[Word, ...]:
        placed = found if turned.angle == 0 else [glyph_in_frame(glyph, turned) for glyph in found]
        extracted = extract_words(
            placed,
            x_tolerance_ratio=word_gap,
            y_tolerance_ratio=line_tolerance,
            keep_blank_chars=False,
            extra_attrs=["fontname", "size"],
        )
        return tuple(_word(word, styles) for word in extracted)

    rules = tuple(drawn_rules(page.lines, page.rects))
    if angle:
        rules = tuple(Rule(*body.box(rule.x0, rule.top, rule.x1, rule.bottom)) for rule in rules)
    found = words(groups.get(angle, []), body)
    asides: list[Aside] = []
    for other, group in sorted(groups.items()):
        if other != angle:
            turned, relative = frame(other, width, height), relative_angle(other, angle)
            # a turned column head in a ruled cell is the table's (``asides.in_cells``)
            heads, apart = in_cells(words(group, turned), turned, body, relative, rules)
            found += heads
            asides += [Aside(relative, apart)] if apart else []
    return PageGeometry(body.width, body.height, found, rules, glyphs, tuple(asides), angle)


def _word(found: dict[str, Any], styles: dict[str, FontStyle]) -> Word:
    fontname = str(found.get("fontname", ""))
    style = styles.get(fontname) or font_style(fontname)
    return Word(
        text=str(found["text"]),
        x0=float(found["x0"]),
        x1=float(found["x1"]),
        top=float(found["top"]),
        bottom=float(found["bottom"]),
        size=float(found.get("size") or (found["bottom"] - found["top"])),
        bold=style.bold,
        italic=style.italic,
        mono=style.mono,
        math=is_math_font(fontname.partition("+")[2] or fontname),
    )
