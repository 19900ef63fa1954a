"""PDFs drawn with reportlab at test time for the layout parser's real-world cases (issue 31), each
with its truth: the text that was drawn, and what each piece of it is.

Positions are in points from the page's top-left corner (as pdfplumber reports them); a text's ``y``
is its baseline. Fonts that must carry a given name (TeX's "CMBX10", URW's "NimbusRomNo9L-Medi") are
DejaVu's TrueType files registered under that PostScript name, with the descriptor's ForceBold flag
cleared, so that the name alone says the weight; one is left with the flag and a name that says
nothing ("F37"), so that the flag alone says it. DejaVu Sans also draws Arabic. Debian's
``fonts-dejavu-core`` installs the files (``make fonts``); without them the tests that need them skip.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from io import BytesIO
from pathlib import Path

import pytest
from reportlab.pdfbase import pdfmetrics
from reportlab.pdfbase.ttfonts import TTFont
from reportlab.pdfgen.canvas import Canvas

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
FILES = {"regular": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf", "mono": "DejaVuSansMono.ttf"}
LETTER = (612.0, 792.0)
FORCE_BOLD = 1 << 18


def require_fonts() -> None:
    """Skip the calling test, saying how to install them, when DejaVu's fonts are missing."""
    missing = [name for name in FILES.values() if not (DEJAVU / name).exists()]
    if missing:
        pytest.skip(
            f"{', '.join(missing)} missing from {DEJAVU}: `make fonts` installs Debian's fonts-dejavu-core "
            "(apt-get install -y fonts-dejavu-core)"
        )


def font(name: str, face: str, *, force_bold: bool = False) -> str:
    """DejaVu's ``face`` ("regular", "bold", "mono") registered as the PostScript font ``name``."""
    require_fonts()
    if name not in pdfmetrics.getRegisteredFontNames():
        found = TTFont(name, str(DEJAVU / FILES[face]))
        found.face.name = name.encode()
        found.face.flags = found.face.flags | FORCE_BOLD if force_bold else found.face.flags & ~FORCE_BOLD
        pdfmetrics.registerFont(found)
    return name


class Drawing:
    """A reportlab canvas addressed top-down, one page after another."""

    def __init__(self, size: tuple[float, float] = LETTER) -> None:
        self.buffer = BytesIO()
        self.width, self.height = size
        self.canvas = Canvas(self.buffer, pagesize=size, invariant=True)

    def text(self, x: float, y: float, text: str, face: str = "Helvetica", size: float = 10) -> float:
        """``text`` with its baseline at ``(x, y)``; returns where it ends."""
        self.canvas.setFont(face, size)
        self.canvas.drawString(x, self.height - y, text)
        return x + pdfmetrics.stringWidth(text, face, size)

    def right(self, x1: float, y: float, text: str, face: str = "Helvetica", size: float = 10) -> None:
        self.canvas.setFont(face, size)
        self.canvas.drawRightString(x1, self.height - y, text)

    def centred(self, x: float, y: float, text: str, face: str = "Helvetica", size: float = 10) -> None:
        self.canvas.setFont(face, size)
        self.canvas.drawCentredString(x, self.height - y, text)

    def turned(
        self, x: float, y: float, angle: float, text: str, face: str = "Helvetica", size: float = 10
    ) -> None:
        """``text`` starting at ``(x, y)``, its baseline turned ``angle`` degrees counter-clockwise."""
        self.canvas.saveState()
        self.canvas.translate(x, self.height - y)
        self.canvas.rotate(angle)
        self.canvas.setFont(face, size)
        self.canvas.drawString(0, 0, text)
        self.canvas.restoreState()

    def page(self) -> None:
        self.canvas.showPage()

    def pdf(self) -> bytes:
        self.canvas.save()
        return self.buffer.getvalue()


@dataclass(slots=True)
class Truth:
    """What was drawn: headings with their levels, body lines, furniture lines, text set apart."""

    headings: list[tuple[str, int]] = field(default_factory=list)
    body: list[str] = field(default_factory=list)
    furniture: list[str] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)
    code: list[str] = field(default_factory=list)
    apart: list[str] = field(default_factory=list)


_VOCABULARY = (
    "river", "stone", "maple", "copper", "lantern", "harbor", "meadow", "violet", "thunder", "orchard",
    "canyon", "ember", "falcon", "glacier", "willow", "saffron", "quartz", "beacon", "cedar", "tundra",
    "marble", "comet", "prairie", "indigo", "summit", "lagoon", "pebble", "aurora", "thistle", "cobalt",
    "juniper", "basalt", "heron", "mosaic", "cinder", "fjord", "tamarind", "nectar",
)  # fmt: skip


def prose(seed: str, count: int) -> list[str]:
    """``count`` lines of plain prose starting with ``seed``; no two lines alike, even with their
    digits ignored (as furniture is compared), since each draws other words."""
    lines = []
    for n in range(count):
        picked = [_VOCABULARY[(len(seed) * 7 + n * 5 + k * 3) % len(_VOCABULARY)] for k in range(4)]
        lines.append(f"{seed} {picked[0]} and {picked[1]} lead the {picked[2]} past the {picked[3]} today.")
    return lines


def paragraph(drawing: Drawing, y: float, lines: list[str], face: str, size: float = 10) -> float:
    """Lines one ``1.2 * size`` apart from baseline ``y``; returns the baseline after the last."""
    for line in lines:
        drawing.text(72, y, line, face, size)
        y += 1.2 * size
    return y


# --- headings in a paper set in TeX's fonts ---


def paper() -> tuple[bytes, Truth]:
    """A page of a paper: a 14 pt title, 11 pt section headings (1.1 times the 10 pt body, bold only
    by the name "NimbusRomNo9L-Medi" or by the ForceBold flag of "F37"), 10 pt subsections in CMBX10,
    a run-in subsection in SFBX1000 ("1.2 Overview" then the paragraph on the same line), a bold
    caption and bold typewriter code, which are no headings."""
    body = font("CMR10", "regular")
    title, section, flagged = (
        font("CMBX12", "bold"),
        font("NimbusRomNo9L-Medi", "bold"),
        font("F37", "bold", force_bold=True),
    )
    subsection, runin, mono = font("CMBX10", "bold"), font("SFBX1000", "bold"), font("CMTT10", "mono")
    truth = Truth()
    d = Drawing()
    d.text(72, 80, "Dense Passage Retrieval for Questions", title, 14)
    truth.headings.append(("Dense Passage Retrieval for Questions", 1))
    d.text(72, 100, "Ada Author and Ben Writer, Example University", body)
    truth.body.append("Ada Author and Ben Writer, Example University")
    y = 130.0
    for number, heading, face, lines in (
        ("1", "Introduction", section, prose("Alpha", 4)),
        ("2", "Method", flagged, prose("Bravo", 3)),
    ):
        d.text(72, y, f"{number} {heading}", face, 11)
        truth.headings.append((f"{number} {heading}", 2))
        y = paragraph(d, y + 18, lines, body) + 8
        truth.body += lines
        sub = f"{number}.1 {'Motivation' if number == '1' else 'Training'}"
        d.text(72, y, sub, subsection)
        truth.headings.append((sub, 3))
        more = prose("Charlie" if number == "1" else "Echo", 3)
        y = paragraph(d, y + 14, more, body) + 8
        truth.body += more
        if number == "1":
            end = d.text(72, y, "1.2 Overview", runin)
            first = "Our dense passage retriever encodes each passage"
            d.text(end + 5, y, first, body)
            truth.headings.append(("1.2 Overview", 3))
            rest = prose("Delta", 2)
            y = paragraph(d, y + 12, rest, body) + 10
            truth.body += [first, *rest]
    caption = "Figure 3: The retriever and the reader."
    d.text(72, y, caption, subsection)
    truth.captions.append(caption)
    y += 20
    for line in ("$ pip install dense-retriever", "$ retrieve --index wiki.idx"):
        d.text(72, y, line, "Courier-Bold")
        truth.code.append(line)
        y += 12
    code = "def retrieve(query): return index.search(query)"
    d.text(72, y, code, mono)
    truth.code.append(code)
    d.page()
    return d.pdf(), truth


# --- text at an angle: margin stamps, a watermark, a landscape page ---

ARXIV = "arXiv:2004.04906v3 [cs.CL] 30 Sep 2020"
STAMP = "VerDate Sep 11 2014 Jkt 253001 PO 00000 Frm 00001 Fmt 4701"
WATERMARK = "DRAFT COPY"
UPSIDE_DOWN = "Printed upside down"


def turned() -> tuple[bytes, Truth]:
    """Three pages of prose with text at angles: an arXiv stamp up the left margin of page 1 (90
    degrees), a production stamp down the right margin of every page (-90), a diagonal watermark on
    page 2 (45) and a line upside down at its foot (180); page 3 is a landscape page, all its text
    turned 90 degrees, as a sideways table is set."""
    truth = Truth(apart=[ARXIV, STAMP, WATERMARK, UPSIDE_DOWN])
    d = Drawing()
    for page, seed in enumerate(("Foxtrot", "Golf")):
        lines = prose(seed, 12)
        paragraph(d, 100, lines, "Helvetica")
        truth.body += lines
        d.turned(590, 120, -90, STAMP, "Helvetica", 7)
        if page == 0:
            d.turned(40, 560, 90, ARXIV, "Times-Roman", 18)
        else:
            d.turned(200, 600, 45, WATERMARK, "Helvetica-Bold", 48)
            d.turned(400, 700, 180, UPSIDE_DOWN, "Helvetica", 9)
        d.page()
    # landscape: the page's text drawn turned 90 degrees, reading up the page, lines left to right
    d.turned(590, 120, -90, STAMP, "Helvetica", 7)
    lines = prose("Hotel", 8)
    for n, line in enumerate(lines):
        d.turned(80 + 12 * n, 720, 90, line, "Helvetica", 10)
    truth.body += lines
    d.page()
    return d.pdf(), truth


# --- right-to-left: Arabic and Persian drawn as a PDF producer draws them, in visual order ---

ARABIC = [
    "البحث عن المعلومات في الوثائق العربية",
    "يستخدم النظام فهرسا للكلمات ومتجهات للمعاني",
    "بلغت الإيرادات 391 مليار دولار في عام 2024",
    "نموذج BM25 هو الأساس (الكلمات المفتاحية) للبحث",
]
PERSIAN = ["این یک سند فارسی برای آزمایش جستجو است", "گزارش سالانه شرکت در چهار بخش نوشته شد"]
ENGLISH = "An English line that quotes the word كتاب in passing."


def right_to_left() -> tuple[bytes, Truth]:
    """A page of Arabic and Persian prose, right-aligned, each line drawn left to right in the order
    it is seen (python-bidi's ``get_display`` of the line as read), as a PDF producer lays it out; an
    English line quoting one Arabic word. The truth is the lines as read."""
    from bidi import get_display

    face = font("DejaVuSans", "regular")
    truth = Truth()
    d = Drawing()
    y = 100.0
    for lines in (ARABIC, PERSIAN):
        for line in lines:
            d.right(540, y, str(get_display(line, base_dir="R")), face, 12)
            truth.body.append(line)
            y += 16
        y += 20
    d.text(72, y, str(get_display(ENGLISH, base_dir="L")), face, 12)
    truth.body.append(ENGLISH)
    d.page()
    return d.pdf(), truth
