"""The plain records the layout rules work on: words, drawn rules, pages, lines.

Coordinates are pdfplumber's: points from the page's top-left corner, ``top < bottom``. Nothing
here imports pdfplumber; ``clear_rag.parse.pdf.page_geometry`` fills these records from a page.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import median

from clear_rag.parse.rtl import logical_order


@dataclass(frozen=True, slots=True)
class Word:
    """A run of glyphs in one font and size, between gaps wider than a space."""

    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool = False
    upright: bool = True
    italic: bool = False
    mono: bool = False  # set in a fixed-pitch (typewriter) font
    math: bool = False  # set in a font equations are set in (``maths.is_math_font``)

    @property
    def middle(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def centre(self) -> float:
        return (self.top + self.bottom) / 2


@dataclass(frozen=True, slots=True)
class Rule:
    """A drawn line segment (or the edge of a drawn rectangle)."""

    x0: float
    top: float
    x1: float
    bottom: float

    @property
    def horizontal(self) -> bool:
        return self.bottom - self.top <= self.x1 - self.x0


@dataclass(frozen=True, slots=True)
class Aside:
    """Text set at an angle to the page's body text (a margin stamp, a watermark, an axis label),
    its words placed in its own frame, where it reads left to right (``rotation``)."""

    angle: int  # degrees counter-clockwise from the body text's baseline
    words: tuple[Word, ...]


@dataclass(frozen=True, slots=True)
class PageGeometry:
    """One page as the glyph reader saw it; ``glyphs`` counts its non-space characters.

    Coordinates are those of the frame in which the body text reads upright: the page's own, unless
    most of its text is turned (a landscape table page), when ``angle`` says by how much and
    ``width`` and ``height`` are the turned page's.
    """

    width: float
    height: float
    words: tuple[Word, ...]
    rules: tuple[Rule, ...]
    glyphs: int
    asides: tuple[Aside, ...] = ()
    angle: int = 0


@dataclass(frozen=True, slots=True)
class Line:
    """Words on one baseline within one column (or across the page, before columns are known)."""

    words: tuple[Word, ...]

    @property
    def x0(self) -> float:
        return self.words[0].x0

    @property
    def x1(self) -> float:
        return max(word.x1 for word in self.words)

    @property
    def top(self) -> float:
        return min(word.top for word in self.words)

    @property
    def bottom(self) -> float:
        return max(word.bottom for word in self.words)

    @property
    def size(self) -> float:
        """The size most of the line's characters are set in."""
        return dominant_size(self.words)

    @property
    def bold(self) -> bool:
        """Every word with a letter or digit in it is bold (punctuation may be set in any weight)."""
        marked = [word for word in self.words if any(ch.isalnum() for ch in word.text)]
        return bool(marked) and all(word.bold for word in marked)

    @property
    def italic(self) -> bool:
        """Every word with a letter or digit in it is italic."""
        marked = [word for word in self.words if any(ch.isalnum() for ch in word.text)]
        return bool(marked) and all(word.italic for word in marked)

    @property
    def mono(self) -> bool:
        """Every word with a letter or digit in it is set in a fixed-pitch font."""
        marked = [word for word in self.words if any(ch.isalnum() for ch in word.text)]
        return bool(marked) and all(word.mono for word in marked)

    @property
    def text(self) -> str:
        return join_words(self.words)


def dominant_size(words: Iterable[Word]) -> float:
    """The font size that most characters are set in, rounded to half a point (0.0 for no words).

    Counting characters rather than words keeps a page's many short words (numbers in a table)
    from outvoting its prose.
    """
    counts: Counter[float] = Counter()
    for word in words:
        counts[round(word.size * 2) / 2] += len(word.text)
    return counts.most_common(1)[0][0] if counts else 0.0


TOUCHING = 0.1  # of the font size: words closer than this were one word split by a font change


def join_words(words: Sequence[Word]) -> str:
    """Words in order, a space between them unless they touch (gap under 0.1 of the font size); a
    line holding right-to-left script put from the order it is drawn into the order it is read
    (``clear_rag.parse.rtl``)."""
    parts: list[str] = []
    for index, word in enumerate(words):
        if index and word.x0 - words[index - 1].x1 >= TOUCHING * min(word.size, words[index - 1].size):
            parts.append(" ")
        parts.append(word.text)
    return logical_order("".join(parts))


def median_or(values: Sequence[float], default: float) -> float:
    return float(median(values)) if values else default
