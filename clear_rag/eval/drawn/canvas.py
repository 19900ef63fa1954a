"""The one canvas the parse suite's cases are drawn on, and the fonts they are set in.

Positions are in points from the page's top-left corner (as pdfplumber reports them); a text's ``y``
is its baseline. The canvas is reportlab's with ``invariant=True`` (no date, no random identifier), so
a case draws the same bytes every time with the same reportlab and font files.

Fonts are reportlab's standard 14 (never embedded), or DejaVu's TrueType files from Debian's
``fonts-dejavu-core`` registered under the PostScript name a case needs (TeX's "CMBX10", URW's
"NimbusRomNo9L-Medi"), with the descriptor's ForceBold flag cleared so that the name alone says the
weight, or set under a name that says nothing ("F37") so that the flag alone says it. DejaVu Sans also
draws Arabic. Without the files, or without reportlab (the ``suite`` extra), drawing raises
``ModelMissing`` saying how to install them.
"""

from __future__ import annotations

from io import BytesIO
from pathlib import Path
from typing import TYPE_CHECKING

from clear_rag.errors import ModelMissing

if TYPE_CHECKING:
    from reportlab.pdfgen.canvas import Canvas

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
FILES = {"regular": "DejaVuSans.ttf", "bold": "DejaVuSans-Bold.ttf", "mono": "DejaVuSansMono.ttf"}
LETTER = (612.0, 792.0)
FORCE_BOLD = 1 << 18
SIZE = 10.0
LEADING = 13.0


def _reportlab() -> None:
    try:
        import reportlab  # noqa: F401
    except ImportError:
        raise ModelMissing(
            "the parse suite's PDFs are drawn with reportlab, which is not installed",
            field="suite",
            fix="Install it with `pip install 'clear-rag[suite]'`, or skip the cases with --no-suite",
        ) from None


def require_fonts() -> None:
    """A ``ModelMissing`` naming the DejaVu files that are missing and how to install them."""
    missing = [name for name in FILES.values() if not (DEJAVU / name).exists()]
    if missing:
        raise ModelMissing(
            f"{', '.join(missing)} missing from {DEJAVU}",
            field="fonts",
            fix="Install Debian's fonts-dejavu-core (`make fonts`, or apt-get install -y fonts-dejavu-core)",
        )


def font(name: str, face: str, *, force_bold: bool = False) -> str:
    """DejaVu's ``face`` ("regular", "bold", "mono") registered as the PostScript font ``name``."""
    _reportlab()
    require_fonts()
    from reportlab.pdfbase import pdfmetrics
    from reportlab.pdfbase.ttfonts import TTFont

    if name not in pdfmetrics.getRegisteredFontNames():
        found = TTFont(name, str(DEJAVU / FILES[face]))
        found.face.name = name.encode()
        found.face.flags = found.face.flags | FORCE_BOLD if force_bold else found.face.flags & ~FORCE_BOLD
        pdfmetrics.registerFont(found)
    return name


def width(text: str, face: str = "Helvetica", size: float = SIZE) -> float:
    """How wide ``text`` is set in ``face`` at ``size``, in points."""
    _reportlab()
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return float(stringWidth(text, face, size))


class Drawing:
    """A reportlab canvas addressed top-down, one page after another."""

    def __init__(self, size: tuple[float, float] = LETTER) -> None:
        _reportlab()
        from reportlab.pdfgen.canvas import Canvas

        self.buffer = BytesIO()
        self.width, self.height = size
        self.canvas: Canvas = Canvas(self.buffer, pagesize=size, invariant=True)

    def text(self, x: float, y: float, text: str, face: str = "Helvetica", size: float = SIZE) -> float:
        """``text`` with its baseline at ``(x, y)``; returns where it ends."""
        self.canvas.setFont(face, size)
        self.canvas.drawString(x, self.height - y, text)
        return x + width(text, face, size)

    def right(self, x1: float, y: float, text: str, face: str = "Helvetica", size: float = SIZE) -> None:
        self.canvas.setFont(face, size)
        self.canvas.drawRightString(x1, self.height - y, text)

    def centred(self, x: float, y: float, text: str, face: str = "Helvetica", size: float = SIZE) -> None:
        self.canvas.setFont(face, size)
        self.canvas.drawCentredString(x, self.height - y, text)

    def turned(
        self, x: float, y: float, angle: float, text: str, face: str = "Helvetica", size: float = SIZE
    ) -> None:
        """``text`` starting at ``(x, y)``, its baseline turned ``angle`` degrees counter-clockwise."""
        self.canvas.saveState()
        self.canvas.translate(x, self.height - y)
        self.canvas.rotate(angle)
        self.canvas.setFont(face, size)
        self.canvas.drawString(0, 0, text)
        self.canvas.restoreState()

    def line(self, x0: float, y0: float, x1: float, y1: float) -> None:
        self.canvas.setLineWidth(0.5)
        self.canvas.line(x0, self.height - y0, x1, self.height - y1)

    def fill(
        self, x: float, y: float, lines: list[str], face: str = "Helvetica", size: float = SIZE
    ) -> float:
        """``lines`` one ``1.2 * size`` apart from baseline ``y`` at ``x``; returns the baseline after
        the last."""
        for line in lines:
            self.text(x, y, line, face, size)
            y += 1.2 * size
        return y

    def prose(self, x: float, y: float, wide: float, text: str, lines: int) -> list[str]:
        """``text``'s words filled into lines of at most ``wide`` points, repeated until ``lines``
        lines are drawn ``LEADING`` apart from baseline ``y``; returns the lines drawn."""
        words = text.split()
        drawn: list[str] = []
        index = 0
        while len(drawn) < lines:
            current: list[str] = []
            while width(" ".join([*current, words[index % len(words)]])) <= wide:
                current.append(words[index % len(words)])
                index += 1
            self.text(x, y + len(drawn) * LEADING, " ".join(current))
            drawn.append(" ".join(current))
        return drawn

    def page(self) -> None:
        self.canvas.showPage()

    def pdf(self) -> bytes:
        """The file, once its pages are drawn (reportlab ends a page not ended with ``page``)."""
        self.canvas.save()
        return self.buffer.getvalue()
