"""A tiny PDF writer for tests: text runs, lines and rectangles at exact positions.

Positions are in points from the page's top-left corner, as pdfplumber reports them; a text run's
``y`` is its baseline. Fonts are the standard Helvetica and Helvetica-Bold (no embedding, WinAnsi
encoding, so "•" and "–" are single bytes). The cross-reference table is computed, so the bytes
are a valid PDF that pdfminer reads without falling back to its repair scan.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

LETTER = (612.0, 792.0)


@dataclass(frozen=True, slots=True)
class Text:
    """A run of text whose baseline starts at ``(x, y)``."""

    x: float
    y: float
    text: str
    size: float = 10.0
    bold: bool = False


@dataclass(frozen=True, slots=True)
class Line:
    """A stroked line from ``(x0, y0)`` to ``(x1, y1)``."""

    x0: float
    y0: float
    x1: float
    y1: float
    width: float = 0.5


@dataclass(frozen=True, slots=True)
class Box:
    """A rectangle with its top-left corner at ``(x, y)``, stroked (or filled)."""

    x: float
    y: float
    width: float
    height: float
    fill: bool = False
    gray: float = 0.0  # the fill's grey level, 0 black to 1 white


Item = Text | Line | Box


@dataclass(frozen=True, slots=True)
class Page:
    items: tuple[Item, ...] = ()
    width: float = LETTER[0]
    height: float = LETTER[1]
    raw: bytes = b""  # content-stream operators appended as they are
    resources: bytes = b""  # entries added to the page's resource dictionary as they are


@dataclass(slots=True)
class _Objects:
    bodies: list[bytes] = field(default_factory=list)

    def add(self, body: bytes) -> int:
        self.bodies.append(body)
        return len(self.bodies)

    def set(self, number: int, body: bytes) -> None:
        self.bodies[number - 1] = body


def _string(text: str) -> bytes:
    raw = text.encode("cp1252")
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _num(value: float) -> bytes:
    return f"{value:.3f}".rstrip("0").rstrip(".").encode()


def content(page: Page) -> bytes:
    """The content stream that draws a page's items."""
    ops: list[bytes] = []
    for item in page.items:
        if isinstance(item, Text):
            font = b"/F2" if item.bold else b"/F1"
            ops.append(
                b"BT %s %s Tf 1 0 0 1 %s %s Tm %s Tj ET"
                % (font, _num(item.size), _num(item.x), _num(page.height - item.y), _string(item.text))
            )
        elif isinstance(item, Line):
            ops.append(
                b"%s w %s %s m %s %s l S"
                % (
                    _num(item.width),
                    _num(item.x0),
                    _num(page.height - item.y0),
                    _num(item.x1),
                    _num(page.height - item.y1),
                )
            )
        else:
            bottom = page.height - item.y - item.height
            shape = b"%s %s %s %s re" % (_num(item.x), _num(bottom), _num(item.width), _num(item.height))
            ops.append(b"%s g %s f 0 g" % (_num(item.gray), shape) if item.fill else shape + b" S")
    return b"\n".join(ops) + (b"\n" + page.raw if page.raw else b"")


def pdf_bytes(pages: Sequence[Page], *, encrypt: bool = False, title: str = "test") -> bytes:
    """A whole PDF file holding ``pages`` (none at all if empty).

    ``encrypt`` adds a standard security handler dictionary (RC4, revision 3) whose user password
    is not empty, so no reader can open it without one; the content itself is written in clear,
    which does not matter since a reader stops at the password.
    """
    objects = _Objects()
    catalog = objects.add(b"")
    tree = objects.add(b"")
    regular = objects.add(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
    )
    bold = objects.add(
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold /Encoding /WinAnsiEncoding >>"
    )
    fonts = b"/Font << /F1 %d 0 R /F2 %d 0 R >>" % (regular, bold)
    kids: list[int] = []
    for page in pages:
        resources = b"<< %s %s>>" % (fonts, page.resources + b" " if page.resources else b"")
        stream = content(page)
        drawn = objects.add(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        kids.append(
            objects.add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %s %s] /Resources %s /Contents %d 0 R >>"
                % (tree, _num(page.width), _num(page.height), resources, drawn)
            )
        )
    objects.set(catalog, b"<< /Type /Catalog /Pages %d 0 R >>" % tree)
    kid_refs = b" ".join(b"%d 0 R" % kid for kid in kids)
    objects.set(tree, b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kid_refs, len(kids)))
    info = objects.add(b"<< /Title %s /Producer (tests/parse/pdfs.py) >>" % _string(title))
    file_id = hashlib.md5(title.encode(), usedforsecurity=False).hexdigest().encode()
    trailer = b"/Size %d /Root %d 0 R /Info %d 0 R /ID [<%s> <%s>]" % (
        len(objects.bodies) + 1,
        catalog,
        info,
        file_id,
        file_id,
    )
    if encrypt:
        owner, user = b"1" * 64, b"2" * 64  # any 32 bytes: the empty password will not match /U
        handler = objects.add(
            b"<< /Filter /Standard /V 2 /R 3 /Length 128 /P -3904 /O <%s> /U <%s> >>" % (owner, user)
        )
        trailer = b"/Size %d /Root %d 0 R /Info %d 0 R /ID [<%s> <%s>] /Encrypt %d 0 R" % (
            len(objects.bodies) + 1,
            catalog,
            info,
            file_id,
            file_id,
            handler,
        )
    return _serialise(objects.bodies, trailer)


def _serialise(bodies: Iterable[bytes], trailer: bytes) -> bytes:
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets: list[int] = []
    for number, body in enumerate(bodies, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n" % (trailer, xref)
    return bytes(out)


def paragraph(
    x: float, y: float, lines: Sequence[str], *, size: float = 10, leading: float = 12
) -> list[Text]:
    """Lines of body text, one baseline every ``leading`` points from ``y`` down."""
    return [Text(x, y + n * leading, line, size) for n, line in enumerate(lines)]


def width_of(text: str, size: float = 10.0, *, bold: bool = False) -> float:
    """The advance width of ``text`` in Helvetica (or Helvetica-Bold), from the font's AFM metrics."""
    from pdfminer.fontmetrics import FONT_METRICS

    widths = FONT_METRICS["Helvetica-Bold" if bold else "Helvetica"][1]
    return sum(widths.get(char, 556) for char in text) * size / 1000


def right_aligned(x1: float, y: float, text: str, size: float = 10.0, *, bold: bool = False) -> Text:
    """A text run whose right edge is at ``x1``."""
    return Text(x1 - width_of(text, size, bold=bold), y, text, size, bold)


# --- a two-page report with every structure the layout parser recognises ---

HEADER = "ACME Corp | 2024 Annual Report"
TITLE = "Item 7. Management's Discussion and Analysis"
COLUMN_ONE = [
    "Alpha revenue grew in every region this",
    "year as demand for industrial equip-",
    "ment rose and the company expanded",
    "its manufacturing capacity in Ohio.",
]
COLUMN_ONE_MORE = [
    "Bravo margins held steady because the",
    "cost of materials fell in the second",
    "half while prices stayed where they were.",
]
SUBHEADING = "Liquidity and Capital Resources"
BULLETS = [
    ("•", ["Cash of $4.2 billion at year end,", "up from $3.1 billion a year ago"]),
    ("•", ["A new credit facility of $1 billion"]),
    ("•", ["No borrowings under the facility"]),
]
COLUMN_TWO = [
    "Charlie operations in Europe recovered",
    "after a slow first quarter, and orders",
    "for the new product line exceeded the",
    "plan set at the start of the year by a",
    "wide margin in all three segments.",
]
COLUMN_TWO_MORE = [
    "Delta expenses for research rose as the",
    "company hired engineers for its new",
    "laboratory, which opened in March.",
]
RULED = [("Segment", "Revenue", "Margin"), ("Industrial", "2,150", "18%"), ("Consumer", "1,320", "12%")]
ALIGNED = [("", "2024", "2023"), ("Net sales", "3,470", "3,105"), ("Cost of sales", "2,210", "2,040"),
           ("Operating income", "1,260", "1,065")]  # fmt: skip
PAGE_TWO_TEXT = [
    "Echo the tables above summarise the results for the year, by segment",
    "and for the company as a whole; all amounts are in millions of dollars.",
]


def _two_column_page() -> Page:
    items: list[Item] = [Text(72, 40, HEADER, 8), Text(300, 770, "1", 8), Text(72, 90, TITLE, 16, bold=True)]
    items += paragraph(72, 130, COLUMN_ONE)
    items += paragraph(72, 190, COLUMN_ONE_MORE)
    items.append(Text(72, 240, SUBHEADING, 10, bold=True))
    y = 262.0
    for marker, lines in BULLETS:
        items.append(Text(80, y, marker))
        for n, line in enumerate(lines):
            items.append(Text(92, y + 12 * n, line))
        y += 12 * len(lines) + 4
    items += paragraph(320, 130, COLUMN_TWO)
    items += paragraph(320, 202, COLUMN_TWO_MORE)
    return Page(tuple(items))


def _tables_page() -> Page:
    items: list[Item] = [Text(72, 40, HEADER, 8), Text(300, 770, "2", 8)]
    # a ruled table: three columns, three rows, every cell boxed
    xs, ys = [72.0, 200.0, 300.0, 400.0], [100.0, 120.0, 140.0, 160.0]
    items += [Line(x, ys[0], x, ys[-1]) for x in xs] + [Line(xs[0], y, xs[-1], y) for y in ys]
    for row, cells in enumerate(RULED):
        for col, cell in enumerate(cells):
            items.append(Text(xs[col] + 4, ys[row] + 14, cell, bold=row == 0))
    # an aligned table: labels left-aligned, numbers right-aligned, no rules
    for row, (label, first, second) in enumerate(ALIGNED):
        y = 220 + 14 * row
        if label:
            items.append(Text(72, y, label))
        items += [right_aligned(330, y, first), right_aligned(420, y, second)]
    items += paragraph(72, 320, PAGE_TWO_TEXT)
    return Page(tuple(items))


def report_pages() -> list[Page]:
    return [_two_column_page(), _tables_page()]


def report_pdf() -> bytes:
    return pdf_bytes(report_pages(), title="report")


# --- two columns, a full-width table between their runs, two columns again ---

TOP_LEFT = [
    "Kilo the first column opens the page",
    "with a few lines of plain text that",
    "run down the left side of the page.",
]
TOP_RIGHT = [
    "Lima the second column stands beside",
    "it with its own lines of prose that",
    "fill the right side before the table.",
]
WIDE = [
    ("Region", "Units", "Revenue", "Growth"),
    ("Americas", "1,200", "5,400", "4%"),
    ("Europe", "800", "3,100", "2%"),
]
BOTTOM_LEFT = [
    "Mike after the table the columns go",
    "on, the left one first, as a reader",
    "would take them after the wide table.",
]
BOTTOM_RIGHT = [
    "November the right column ends the",
    "page with its last lines of text, read",
    "after the bottom of the left column.",
]


def spanning_table_page() -> Page:
    items: list[Item] = []
    items += paragraph(72, 100, TOP_LEFT) + paragraph(320, 100, TOP_RIGHT)
    xs, ys = [72.0, 200.0, 300.0, 420.0, 540.0], [150.0, 170.0, 190.0, 210.0]
    items += [Line(x, ys[0], x, ys[-1]) for x in xs] + [Line(xs[0], y, xs[-1], y) for y in ys]
    for row, cells in enumerate(WIDE):
        for col, cell in enumerate(cells):
            items.append(Text(xs[col] + 4, ys[row] + 14, cell))
    items += paragraph(72, 240, BOTTOM_LEFT) + paragraph(320, 240, BOTTOM_RIGHT)
    return Page(tuple(items))


# --- a wide table without rules under two columns, its rows shaded in light grey ---

WIDE_ALIGNED = [
    ("", "2024", "2023"),
    ("Research and development", "31,370", "29,915"),
    ("Selling, general and administrative", "26,097", "24,932"),
    ("Total operating expenses", "57,467", "54,847"),
]


def shaded_wide_table_page() -> Page:
    """Two columns of prose, then a table across the page whose label column ends before the
    gutter and whose numbers start after it, every other row's cells shaded light grey."""
    items: list[Item] = []
    items += paragraph(72, 100, TOP_LEFT) + paragraph(320, 100, TOP_RIGHT)
    for row, (label, first, second) in enumerate(WIDE_ALIGNED):
        y = 160 + 14 * row
        if row % 2:  # shaded cell by cell, as a browser paints a shaded row's cells
            for x0, x1 in ((72, 340), (340, 440), (440, 540)):
                items.append(Box(x0, y - 10, x1 - x0, 13, fill=True, gray=0.94))
        if label:
            items.append(Text(72, y, label))
        items += [right_aligned(430, y, first), right_aligned(540, y, second)]
    items += paragraph(72, 240, BOTTOM_LEFT) + paragraph(320, 240, BOTTOM_RIGHT)
    return Page(tuple(items))
