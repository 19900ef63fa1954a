"""PDF through pdfplumber: opening a file safely, reading each page, and the ``flat`` backend.

This is the one module that imports pdfplumber. It turns a file's bytes into pages, and every way a
file can fail (not a PDF, truncated, encrypted, no pages, too many pages, damaged) into a
``PdfError`` naming the file and what to do. The ``layout`` backend reads its glyph geometry from
here (``page_geometry``) and does its inference on plain records, without pdfplumber.

``flat`` is the baseline the layout parser is measured against: pdfplumber's ``extract_text`` page
by page, pages joined by a blank line, one paragraph block per blank-line-separated run.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from contextlib import suppress
from io import BytesIO
from typing import Any, TypeVar

import pdfplumber
from pdfminer.pdfdocument import PDFEncryptionError, PDFPasswordIncorrect
from pdfminer.pdftypes import resolve1
from pdfminer.psparser import literal_name
from pdfplumber.page import Page
from pdfplumber.pdf import PDF
from pdfplumber.utils.exceptions import PdfminerException
from pdfplumber.utils.text import extract_words

from clear_rag.errors import EmptyFileError, EncryptedPdfError, ModelMissing, PdfError, ScannedPdfError
from clear_rag.parse.base import Parsed
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
from clear_rag.parse.pieces import Piece, assemble
from clear_rag.parse.rtl import logical_order

MEDIA_TYPE = "application/pdf"
MAX_PAGES = 2000  # a 10-K is 100-300 pages; a file of more is split before ingesting, or the cap raised
# The header may follow up to 1 KB of junk, and %%EOF must be in the last 1 KB: what Acrobat accepts.
_HEADER_WINDOW = _TAIL_WINDOW = 1024
_SHOWN_PAGES = 8

T = TypeVar("T")


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


def damaged(source: str, err: BaseException, where: str = "") -> PdfError:
    """The error for bytes pdfminer cannot read, naming what it said."""
    cause = err.args[0] if isinstance(err, PdfminerException) and err.args else err
    said = f"{type(cause).__name__}: {cause}".rstrip(": ")
    return PdfError(
        f"is damaged{where} and cannot be read ({said[:200]})",
        path=source,
        fix="Open and re-save it in a PDF viewer (or run `qpdf in.pdf out.pdf`) and ingest the copy",
    )


def read_pages(
    data: bytes, source: str, read: Callable[[Page], T], *, max_pages: int = MAX_PAGES
) -> tuple[list[tuple[int, T]], list[str]]:
    """``read`` applied to every page, as ``(page number, result)``, and warnings for pages skipped.

    A page whose content pdfminer cannot read is skipped with a warning naming it; a file whose
    every page fails is damaged. Each page's parsed objects are released once read, so memory
    follows one page, not the file.
    """
    check_bytes(data, source)
    # pdfminer raises dozens of exception types on malformed input (PSSyntaxError, KeyError,
    # TypeError, RecursionError, ...): at this boundary each becomes a PdfError naming the file.
    try:
        pdf = pdfplumber.open(BytesIO(data), raise_unicode_errors=False)
    except PdfminerException as err:
        cause = err.args[0] if err.args else err
        if isinstance(cause, PDFPasswordIncorrect | PDFEncryptionError):
            raise EncryptedPdfError(
                "is encrypted: it needs a password to open",
                path=source,
                fix="Save a copy without the password (e.g. `qpdf --decrypt --password=PW in.pdf out.pdf`) "
                "and ingest that",
            ) from None
        raise damaged(source, err) from None
    except Exception as err:
        raise damaged(source, err) from None
    try:
        read_ok, failed = _each_page(pdf, source, read, max_pages)
    finally:
        _close(pdf)
    if failed and not read_ok:
        raise damaged(source, failed[0][1], " (no page could be read)")
    warnings = []
    if failed:
        warnings.append(
            f"{source}: {_pages(number for number, _ in failed)} could not be read and "
            f"{'was' if len(failed) == 1 else 'were'} left out ({type(failed[0][1]).__name__}: "
            f"{str(failed[0][1])[:120]}). Re-save the file in a PDF viewer to recover them"
        )
    return read_ok, warnings


def _each_page(
    pdf: PDF, source: str, read: Callable[[Page], T], max_pages: int
) -> tuple[list[tuple[int, T]], list[tuple[int, Exception]]]:
    try:
        pages = pdf.pages
    except Exception as err:
        raise damaged(source, err, " (its page tree)") from None
    if not pages:
        raise PdfError("has no pages", path=source, fix="Export it again, or remove it from the folder")
    if len(pages) > max_pages:
        raise PdfError(
            f"has {len(pages)} pages, more than the {max_pages} read from one file (max_pages)",
            path=source,
            fix="Split it (e.g. `qpdf --split-pages`) or raise max_pages for the PDF parser",
        )
    read_ok: list[tuple[int, T]] = []
    failed: list[tuple[int, Exception]] = []
    for page in pages:
        try:
            read_ok.append((page.page_number, read(page)))
        except Exception as err:
            failed.append((page.page_number, err))
        finally:
            page.close()
    return read_ok, failed


def _close(pdf: PDF) -> None:
    """Close without raising: pdfplumber's ``close`` walks the page tree again, and on a damaged
    one raises the very error that is being reported (its ``with`` block did just that, and the
    pdfminer exception replaced the ``PdfError``)."""
    try:
        pdf.close()
    except Exception:
        pdf.stream.close()


def no_text_layer(source: str, pages: int) -> ScannedPdfError:
    """The error for a PDF none of whose pages holds a character: images of pages."""
    return ScannedPdfError(
        f"has no text layer on any of its {pages} page{'s' if pages != 1 else ''}: it looks scanned",
        path=source,
        fix="Add a text layer with OCR, e.g. `ocrmypdf in.pdf out.pdf`, and ingest the copy",
    )


def blank_pages_warning(source: str, blank: list[int]) -> str:
    """A warning naming pages without text in a PDF that has some."""
    return (
        f"{source}: {_pages(blank)} {'has' if len(blank) == 1 else 'have'} no text layer (blank, or "
        "scanned images of text); `ocrmypdf` adds one"
    )


def _pages(numbers: Iterable[int]) -> str:
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

    asides = tuple(
        Aside(relative_angle(other, angle), words(found, frame(other, width, height)))
        for other, found in sorted(groups.items())
        if other != angle
    )
    rules = tuple(drawn_rules(page.lines, page.rects))
    if angle:
        rules = tuple(Rule(*body.box(rule.x0, rule.top, rule.x1, rule.bottom)) for rule in rules)
    found = words(groups.get(angle, []), body)
    return PageGeometry(body.width, body.height, found, rules, glyphs, asides, angle)


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


# --- the flat backend ---

_BLANK_LINE = re.compile(r"\n[ \t]*\n")


class FlatPdfParser:
    """pdfplumber's own ``extract_text``, page by page: the baseline for the layout parser."""

    file_type = "pdf"
    backend = "flat"
    version = "2"  # 2: right-to-left lines in reading order (issue 31)

    def __init__(self, *, max_pages: int = MAX_PAGES) -> None:
        if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
            raise ValueError(f"max_pages={max_pages!r} must be a whole number of at least 1, e.g. 2000")
        self.max_pages = max_pages

    def parse(self, data: bytes, *, source: str) -> Parsed:
        pages, warnings = read_pages(data, source, _page_text, max_pages=self.max_pages)
        pieces: list[Piece] = []
        blank: list[int] = []
        for number, text in pages:
            runs = [run for run in _BLANK_LINE.split(text) if run.strip()]
            if not runs:
                blank.append(number)
            pieces += [Piece("paragraph", run, meta={"page": str(number)}) for run in runs]
        text, blocks = assemble(pieces)
        if not blocks:
            raise no_text_layer(source, len(pages))
        if blank:
            warnings.append(blank_pages_warning(source, blank))
        return Parsed(text=text, blocks=blocks, media_type=MEDIA_TYPE, warnings=tuple(warnings))


def _page_text(page: Page) -> str:
    """The page's text, each line in reading order (right-to-left script too: ``rtl``)."""
    return "\n".join(logical_order(line) for line in str(page.extract_text()).split("\n"))
