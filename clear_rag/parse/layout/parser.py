"""The ``layout`` PDF backend: the rules of this package applied page by page, then assembled.

Per file: read every page's words and rules (``clear_rag.parse.pdf``); find running headers,
footers and page numbers across pages (``furniture``); take the body font size (most characters);
then per page: ruled tables, columns and zones, and per column aligned tables, headings, lists and
paragraphs. Paragraphs cut by a column or page break are joined; heading levels are ranked over
the whole file; furniture blocks follow all body blocks in the canonical text.

Work per page is bounded: a page of more than ``max_glyphs`` characters is read in plain reading
order (lines top to bottom, paragraphs at wide gaps) with a warning, and one with more drawn rules
than the table finder compares skips ruled tables, also with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

from clear_rag.parse.base import Parsed
from clear_rag.parse.layout.aligned import aligned_tables
from clear_rag.parse.layout.asides import angle_warnings, aside_pieces
from clear_rag.parse.layout.beside import table_gutters
from clear_rag.parse.layout.blocks import Element, list_marker, region_elements, runs_on
from clear_rag.parse.layout.columns import Band, gutters, split_columns, zones
from clear_rag.parse.layout.furniture import find_furniture
from clear_rag.parse.layout.geometry import Line, PageGeometry, Word, dominant_size, median_or
from clear_rag.parse.layout.lines import join_lines, lines_from_words
from clear_rag.parse.layout.ruled import ruled_tables
from clear_rag.parse.layout.tables import Table
from clear_rag.parse.ocr import OcrPage
from clear_rag.parse.pdf import MAX_PAGES, MEDIA_TYPE, blank_pages_warning, no_text_layer, page_geometry
from clear_rag.parse.pdfium import page_words
from clear_rag.parse.pieces import Piece, assemble
from clear_rag.parse.recover import OcrSettings, mark_ocr, read_pdf

MAX_GLYPHS = 30_000  # per page: a dense 10-K table page holds about 8,000
WORD_GAP = 0.2  # of the font size: a wider gap between glyphs separates words
LINE_TOLERANCE = 0.3  # of the font size: glyph tops further apart are on different lines
MAX_HEADING_LEVEL = 6
_SPACING_SAMPLE = 1.5  # of the body size: gaps between lines up to this count towards the line spacing
_DEFAULT_SPACING = 0.25  # of the body size, where a page has too few lines to measure it


@dataclass(frozen=True, slots=True)
class _Page:
    number: int
    geometry: PageGeometry
    rows: list[Line]  # every body word's line across the whole page, top to bottom
    furniture: set[int]  # indices into rows


class LayoutPdfParser:
    """PDF read from glyph geometry: columns, headings, lists, ruled and aligned tables, furniture."""

    file_type = "pdf"
    backend = "layout"
    # 2: weight and pitch from TeX's font names and descriptor flags, headings by size from 1.05 of
    # the body, run-in headings, captions and code; furniture from the margins; turned text (issue 31)
    # 3: scanned pages OCR'd, pages pdfminer fails on read by pdfium
    # 4: a column head turned a quarter round in a ruled cell is the table's, not furniture
    version = "4"

    def __init__(
        self,
        *,
        max_pages: int = MAX_PAGES,
        max_glyphs: int = MAX_GLYPHS,
        ocr: OcrSettings | None = OcrSettings(),  # noqa: B008 - frozen, so one shared default is safe
    ) -> None:
        for name, value in (("max_pages", max_pages), ("max_glyphs", max_glyphs)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name}={value!r} must be a whole number of at least 1")
        self.max_pages = max_pages
        self.max_glyphs = max_glyphs
        self.ocr = ocr

    def parse(self, data: bytes, *, source: str) -> Parsed:
        # A scanned page's words come from OCR and a page pdfminer fails on from pdfium: the same
        # records, so the rules below read every page alike (``clear_rag.parse.recover``).
        recovered = read_pdf(
            data,
            source,
            lambda page: page_geometry(page, word_gap=WORD_GAP, line_tolerance=LINE_TOLERANCE),
            from_ocr=OcrPage.geometry,
            from_pdfium=page_words,
            ocr=self.ocr,
            max_pages=self.max_pages,
        )
        read, warnings = recovered.read, recovered.warnings
        if not any(geometry.words for _, geometry in read):
            raise no_text_layer(source, len(read), or_else=recovered.or_else)
        read = typewritten(read)
        rows = [lines_from_words(geometry.words) for _, geometry in read]
        furniture = find_furniture(
            rows,
            [geometry.width for _, geometry in read],
            [geometry.height for _, geometry in read],
            dominant_size(word for page_rows in rows for row in page_rows for word in row.words),
        )
        pages = [
            _Page(number, geometry, page_rows, chosen)
            for (number, geometry), page_rows, chosen in zip(read, rows, furniture, strict=True)
        ]
        body = dominant_size(
            word
            for page in pages
            for i, row in enumerate(page.rows)
            if i not in page.furniture
            for word in row.words
        )
        elements: list[Element] = []
        furniture_pieces: list[Piece] = []
        blank: list[int] = []
        for page in pages:
            if not page.geometry.words:
                blank.append(page.number)
                continue
            found, page_warnings = self._page(page, body, source)
            elements += found
            warnings += page_warnings
            furniture_pieces += [
                Piece("furniture", row.text, meta={"page": str(page.number)})
                for i, row in enumerate(page.rows)
                if i in page.furniture
            ]
            furniture_pieces += aside_pieces(page.number, page.geometry.asides)
        if blank:
            warnings.append(blank_pages_warning(source, blank))
        warnings += angle_warnings(
            source,
            {page.number: page.geometry.angle for page in pages if page.geometry.angle},
            [page.number for page in pages if page.geometry.asides],
        )
        text, blocks = assemble([*_pieces(_run_on(elements)), *furniture_pieces])
        if not blocks:
            raise no_text_layer(source, len(read), or_else=recovered.or_else)
        blocks = mark_ocr(blocks, recovered.ocr_pages, recovered.engine)
        return Parsed(text, blocks, MEDIA_TYPE, tuple(warnings), ocr_pages=recovered.ocr_pages)

    def _page(self, page: _Page, body: float, source: str) -> tuple[list[Element], list[str]]:
        """One page's body blocks in reading order, each marked with its page number."""
        warnings: list[str] = []
        words = [word for i, row in enumerate(page.rows) if i not in page.furniture for word in row.words]
        if page.geometry.glyphs > self.max_glyphs:
            warnings.append(
                f"{source}: page {page.number} has {page.geometry.glyphs} characters, more than the "
                f"{self.max_glyphs} analysed per page (max_glyphs); its text is kept in plain reading "
                "order, without columns, tables or headings"
            )
            found = plain_reading_order(words, body)
        else:
            found, too_many = page_elements(words, page.geometry, body)
            if too_many:
                warnings.append(
                    f"{source}: page {page.number} draws too many lines to look for ruled tables in; "
                    "its tables are read from text alignment only"
                )
        meta = {"page": str(page.number)}
        return [
            replace(element, meta={**element.meta, **meta}, opens=element.opens or index == 0)
            for index, element in enumerate(found)
        ], warnings


MONO_BODY = 0.5  # share of characters: a file set mostly in a typewriter font


def typewritten(read: list[tuple[int, PageGeometry]]) -> list[tuple[int, PageGeometry]]:
    """A file set mostly (over half its characters) in a typewriter font has that font for its
    text, not for code: its words lose the mark, so it is read as prose (``blocks`` reads a run of
    typewriter lines in a proportional text as code)."""
    mono = sum(len(word.text) for _, geometry in read for word in geometry.words if word.mono)
    total = sum(len(word.text) for _, geometry in read for word in geometry.words)
    if mono <= MONO_BODY * total:
        return read
    return [
        (number, replace(geometry, words=tuple(replace(word, mono=False) for word in geometry.words)))
        for number, geometry in read
    ]


def page_elements(words: Sequence[Word], geometry: PageGeometry, body: float) -> tuple[list[Element], bool]:
    """A page's blocks in reading order; and whether it had too many rules for ruled tables."""
    tables, rest, too_many = ruled_tables(words, geometry.rules, body)
    rows = lines_from_words(rest)
    bands = gutters(rows, body) or table_gutters(rows, body)
    spacing = line_spacing(rows, body)
    if not bands:
        return region_elements(rows, tables, body, spacing), too_many
    rows, wide = wide_tables(rows, bands, body)
    found: list[Element] = []
    for zone in zones(rows, [*tables, *wide], bands, body):
        if zone.spanning:
            found += region_elements(zone.rows, zone.tables, body, spacing)
        else:
            for lines, column_tables in split_columns(zone, bands):
                found += region_elements(lines, column_tables, body, spacing)
    return found, too_many


def wide_tables(rows: Sequence[Line], bands: Sequence[Band], body: float) -> tuple[list[Line], list[Table]]:
    """Aligned tables read from whole rows, before the page is cut into columns, that reach across a
    gutter; and the rows left. Such a table's label column and value columns can leave the gutter
    empty, and cut at it they would be read as two columns (``aligned_tables``, ``across``)."""
    is_item = [list_marker(row) is not None for row in rows]
    taken: set[int] = set()
    found: list[Table] = []
    for first, end, table in aligned_tables(rows, body, is_item, across=True):
        if any(table.x0 < b0 and table.x1 > b1 for b0, b1 in bands):
            found.append(table)
            taken.update(range(first, end))
    return [row for index, row in enumerate(rows) if index not in taken], found


def line_spacing(rows: Sequence[Line], body: float) -> float:
    """The usual blank space between one line and the next on this page (the median of the gaps
    up to 1.5 body sizes), or a quarter of the body size where fewer than three gaps are measured."""
    gaps = [
        below.top - above.bottom
        for above, below in pairwise(rows)
        if 0 <= below.top - above.bottom <= _SPACING_SAMPLE * body
    ]
    return median_or(gaps, _DEFAULT_SPACING * body) if len(gaps) >= 3 else _DEFAULT_SPACING * body


def plain_reading_order(words: Sequence[Word], body: float) -> list[Element]:
    """Lines top to bottom, a paragraph break at every gap wider than the line spacing plus half a
    body size: the bounded reading for a page too dense to analyse (one sort, one pass)."""
    rows = lines_from_words(words)
    spacing = line_spacing(rows, body)
    found: list[Element] = []
    run: list[Line] = []
    for row in [*rows, None]:
        if run and (row is None or row.top - run[-1].bottom > spacing + 0.5 * body):
            found.append(Element("paragraph", join_lines([line.text for line in run]), run[0].top))
            run = []
        if row is not None:
            run.append(row)
    return found


def _run_on(elements: Sequence[Element]) -> list[Element]:
    """Paragraphs (and list items) cut by a column or page break joined back into one
    (``blocks.runs_on``)."""
    out: list[Element] = []
    for element in elements:
        if out and runs_on(out[-1], element):
            out[-1] = replace(out[-1], text=join_lines([out[-1].text, element.text]))
        else:
            out.append(element)
    return out


def _pieces(elements: Sequence[Element]) -> list[Piece]:
    """Elements as pieces, heading levels ranked over the file: larger first, then bold before
    regular, then upright before italic."""
    keys = sorted(
        {_style(e) for e in elements if e.kind == "heading"},
        key=lambda key: (-key[0], not key[1], key[2]),
    )
    rank = {key: min(index + 1, MAX_HEADING_LEVEL) for index, key in enumerate(keys)}
    pieces = []
    for element in elements:
        level = rank[_style(element)] if element.kind == "heading" else 0
        level = 1 if element.kind == "list" else level
        pieces.append(Piece(element.kind, element.text, level=level, meta=dict(element.meta)))
    return pieces


def _style(element: Element) -> tuple[float, bool, bool]:
    return round(element.size * 2) / 2, element.bold, element.italic
