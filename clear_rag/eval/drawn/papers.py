"""Headings in TeX's fonts, text at an angle, and right-to-left scripts: three of the parse suite's
cases (issue 31), each drawn with its truth (``clear_rag.eval.drawn.drawn.Drawn``)."""

from __future__ import annotations

from clear_rag.eval.drawn.canvas import Drawing, font
from clear_rag.eval.drawn.drawn import Drawn, Piece, pieces

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


# --- headings in a paper set in TeX's fonts ---


def paper() -> Drawn:
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
    drawn: list[Piece] = []
    d = Drawing()
    d.text(72, 80, "Dense Passage Retrieval for Questions", title, 14)
    drawn.append(Piece("heading", "Dense Passage Retrieval for Questions", 1))
    d.text(72, 100, "Ada Author and Ben Writer, Example University", body)
    drawn.append(Piece("text", "Ada Author and Ben Writer, Example University"))
    y = 130.0
    for number, heading, face, lines in (
        ("1", "Introduction", section, prose("Alpha", 4)),
        ("2", "Method", flagged, prose("Bravo", 3)),
    ):
        d.text(72, y, f"{number} {heading}", face, 11)
        drawn.append(Piece("heading", f"{number} {heading}", 2))
        y = d.fill(72, y + 18, lines, body) + 8
        drawn += pieces("text", lines)
        sub = f"{number}.1 {'Motivation' if number == '1' else 'Training'}"
        d.text(72, y, sub, subsection)
        drawn.append(Piece("heading", sub, 3))
        more = prose("Charlie" if number == "1" else "Echo", 3)
        y = d.fill(72, y + 14, more, body) + 8
        drawn += pieces("text", more)
        if number == "1":
            end = d.text(72, y, "1.2 Overview", runin)
            first = "Our dense passage retriever encodes each passage"
            d.text(end + 5, y, first, body)
            rest = prose("Delta", 2)
            y = d.fill(72, y + 12, rest, body) + 10
            drawn += [Piece("heading", "1.2 Overview", 3), *pieces("text", [first, *rest])]
    caption = "Figure 3: The retriever and the reader."
    d.text(72, y, caption, subsection)
    drawn.append(Piece("caption", caption))
    y += 20
    for line in ("$ pip install dense-retriever", "$ retrieve --index wiki.idx"):
        d.text(72, y, line, "Courier-Bold")
        drawn.append(Piece("code", line))
        y += 12
    code = "def retrieve(query): return index.search(query)"
    d.text(72, y, code, mono)
    drawn.append(Piece("code", code))
    d.page()
    return Drawn(d.pdf(), tuple(drawn))


# --- text at an angle: margin stamps, a watermark, a landscape page ---

ARXIV = "arXiv:2004.04906v3 [cs.CL] 30 Sep 2020"
STAMP = "VerDate Sep 11 2014 Jkt 253001 PO 00000 Frm 00001 Fmt 4701"
WATERMARK = "DRAFT COPY"
UPSIDE_DOWN = "Printed upside down"


def turned() -> Drawn:
    """Three pages of prose with text at angles: an arXiv stamp up the left margin of page 1 (90
    degrees), a production stamp down the right margin of every page (-90), a diagonal watermark on
    page 2 (45) and a line upside down at its foot (180); page 3 is a landscape page, all its text
    turned 90 degrees, as a sideways table is set."""
    drawn: list[Piece] = []
    d = Drawing()
    for page, seed in enumerate(("Foxtrot", "Golf")):
        lines = prose(seed, 12)
        d.fill(72, 100, lines, "Helvetica")
        drawn += pieces("text", lines)
        d.turned(590, 120, -90, STAMP, "Helvetica", 7)
        drawn.append(Piece("apart", STAMP))
        if page == 0:
            d.turned(40, 560, 90, ARXIV, "Times-Roman", 18)
            drawn.append(Piece("apart", ARXIV))
        else:
            d.turned(200, 600, 45, WATERMARK, "Helvetica-Bold", 48)
            d.turned(400, 700, 180, UPSIDE_DOWN, "Helvetica", 9)
            drawn += pieces("apart", [WATERMARK, UPSIDE_DOWN])
        d.page()
    # landscape: the page's text drawn turned 90 degrees, reading up the page, lines left to right
    d.turned(590, 120, -90, STAMP, "Helvetica", 7)
    drawn.append(Piece("apart", STAMP))
    lines = prose("Hotel", 8)
    for n, line in enumerate(lines):
        d.turned(80 + 12 * n, 720, 90, line, "Helvetica", 10)
    drawn += pieces("text", lines)
    d.page()
    return Drawn(d.pdf(), tuple(drawn))


# --- right-to-left: Arabic and Persian drawn as a PDF producer draws them, in visual order ---

ARABIC = [
    "البحث عن المعلومات في الوثائق العربية",
    "يستخدم النظام فهرسا للكلمات ومتجهات للمعاني",
    "بلغت الإيرادات 391 مليار دولار في عام 2024",
    "نموذج BM25 هو الأساس (الكلمات المفتاحية) للبحث",
]
PERSIAN = ["این یک سند فارسی برای آزمایش جستجو است", "گزارش سالانه شرکت در چهار بخش نوشته شد"]
ENGLISH = "An English line that quotes the word كتاب in passing."


def right_to_left() -> Drawn:
    """A page of Arabic and Persian prose, right-aligned, each line drawn left to right in the order
    it is seen (python-bidi's ``get_display`` of the line as read), as a PDF producer lays it out; an
    English line quoting one Arabic word. The truth is the lines as read."""
    from bidi import get_display

    face = font("DejaVuSans", "regular")
    drawn: list[Piece] = []
    d = Drawing()
    y = 100.0
    for lines in (ARABIC, PERSIAN):
        for line in lines:
            d.right(540, y, str(get_display(line, base_dir="R")), face, 12)
            drawn.append(Piece("text", line))
            y += 16
        y += 20
    d.text(72, y, str(get_display(ENGLISH, base_dir="L")), face, 12)
    drawn.append(Piece("text", ENGLISH))
    d.page()
    return Drawn(d.pdf(), tuple(drawn))
