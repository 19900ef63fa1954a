"""Mathematics is not a table: a display equation's lines, aligned at "=" and numbered at the
margin, split into segments at their wide gaps and line up like a table's columns.

Read as a table, an equation became rows of its sub- and superscripts ("i=1 | i i |") cut from the
symbols they belong to. The rule here refuses such a "table" by its fonts or by its cells.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from clear_rag.parse.layout.geometry import Line

# TeX's math italic, symbols and extension fonts (and their bold and AMS kin), Adobe's Symbol, and
# any font that calls itself Math (CambriaMath, STIXMath, LatinModernMath, ...).
MATH_FONT = re.compile(r"^(?:CMMI|CMSY|CMEX|CMBSY|MSAM|MSBM|EUFM|EUSM|Symbol)|Math", re.IGNORECASE)
MATH_SHARE = 0.5  # of a table's characters in math fonts, or of its cells that are math tokens
SHORT_TOKEN = 2  # characters: a token this short, not a number, is a variable or an index
_NUMBER = re.compile(r"[$€£(]*[-–—]?[$€£(]*\d[\d,.]*%?\)?%?|[-–—]")
_OPERATORS = frozenset("=+<>^_|/∑∏∫√∞≤≥≈≠±×÷∂∇∈∉⊂⊆∪∩→←↔⇒⇔")


def is_math_font(name: str) -> bool:
    """The font (its PostScript name, subset tag removed) is one equations are set in."""
    return bool(MATH_FONT.search(name))


def math_token(token: str) -> bool:
    """A variable, index or operator: a token holding an operator, a Greek letter or a mathematical
    symbol (Unicode category Sm), or one of at most ``SHORT_TOKEN`` characters that is no number."""
    if _NUMBER.fullmatch(token):
        return False
    return len(token) <= SHORT_TOKEN or any(
        ch in _OPERATORS or unicodedata.category(ch) == "Sm" or "GREEK" in unicodedata.name(ch, "")
        for ch in token
    )


def is_math(lines: Sequence[Line], grid: Sequence[Sequence[str]]) -> bool:
    """Lines read as a table are an equation: ``MATH_SHARE`` of their characters are set in math
    fonts, or as large a share of the table's non-empty cells hold math tokens only."""
    words = [word for line in lines for word in line.words]
    characters = sum(len(word.text) for word in words)
    if characters and sum(len(word.text) for word in words if word.math) >= MATH_SHARE * characters:
        return True
    cells = [cell for row in grid for cell in row if cell]
    mathematical = sum(1 for cell in cells if all(math_token(token) for token in cell.split()))
    return bool(cells) and mathematical >= MATH_SHARE * len(cells)
