"""A display equation, one of the parse suite's cases (issue 31): aligned lines of variables,
operators, sums, sub- and superscripts that an aligned-table rule would read as a table. The builder
returns the PDF and its truth (``clear_rag.eval.drawn.drawn.Drawn``)."""

from __future__ import annotations

from clear_rag.eval.drawn.canvas import LEADING, SIZE, Drawing, width
from clear_rag.eval.drawn.drawn import Drawn, Piece, pieces
from clear_rag.eval.drawn.tabled import PROSE

# An equation as a sequence of pieces: (text, face, size, rise); rise lifts a superscript (and,
# negative, drops a subscript) off the baseline, in points.
Glyphs = tuple[str, str, float, float]
ITALIC, SYMBOL, ROMAN = "Times-Italic", "Symbol", "Times-Roman"
SCRIPT = 7.0
EQUATIONS: tuple[tuple[Glyphs, ...], ...] = (
    (
        ("L", ITALIC, SIZE, 0),
        ("(", ROMAN, SIZE, 0),
        ("q", SYMBOL, SIZE, 0),
        (")", ROMAN, SIZE, 0),
        ("=", SYMBOL, SIZE, 0),
        ("-", SYMBOL, SIZE, 0),
        ("S", SYMBOL, 14, 0),
        ("N", ITALIC, SCRIPT, 9),
        ("i=1", ITALIC, SCRIPT, -6),
        ("log", ROMAN, SIZE, 0),
        ("p", ITALIC, SIZE, 0),
        ("(", ROMAN, SIZE, 0),
        ("y", ITALIC, SIZE, 0),
        ("i", ITALIC, SCRIPT, -3),
        ("|", SYMBOL, SIZE, 0),
        ("x", ITALIC, SIZE, 0),
        ("i", ITALIC, SCRIPT, -3),
        (")", ROMAN, SIZE, 0),
    ),
    (
        ("", ROMAN, SIZE, 0),
        ("=", SYMBOL, SIZE, 0),
        ("-", SYMBOL, SIZE, 0),
        ("S", SYMBOL, 14, 0),
        ("i", ITALIC, SCRIPT, -6),
        ("y", ITALIC, SIZE, 0),
        ("i", ITALIC, SCRIPT, -3),
        ("q", SYMBOL, SIZE, 0),
        ("T", ITALIC, SCRIPT, 4),
        ("x", ITALIC, SIZE, 0),
        ("i", ITALIC, SCRIPT, -3),
        ("+", SYMBOL, SIZE, 0),
        ("l", SYMBOL, SIZE, 0),
        ("q", SYMBOL, SIZE, 0),
        ("2", ROMAN, SCRIPT, 4),
    ),
    (
        ("", ROMAN, SIZE, 0),
        ("=", SYMBOL, SIZE, 0),
        ("a", SYMBOL, SIZE, 0),
        ("+", SYMBOL, SIZE, 0),
        ("b", SYMBOL, SIZE, 0),
        ("x", ITALIC, SIZE, 0),
        ("2", ROMAN, SCRIPT, 4),
    ),
)


# What the Symbol font shows for the letters an equation is set in (its own encoding, not Latin).
GREEK = str.maketrans({"q": "θ", "S": "Σ", "l": "λ", "a": "α", "b": "β", "-": "−"})


def display_equation(*, symbol_font: bool = True) -> Drawn:
    """A paragraph, a three-line display equation (its lines aligned at "=", with sums, sub- and
    superscripts in the Symbol and Times-Italic fonts, or with ``symbol_font`` false in Times alone,
    and an equation number at the right margin), and another paragraph. Its truth: the prose lines,
    and each equation line as ``math``: its pieces as they show, one a word, then its number."""
    drawing = Drawing()
    above = drawing.prose(72, 80, 468, PROSE, 3)
    top = 80 + 3 * LEADING + 24
    maths: list[Piece] = []
    for r, equation in enumerate(EQUATIONS):
        y = top + r * 2 * LEADING
        x = 250.0 - width("L(q)", ROMAN, SIZE) - 6  # the lines' "=" signs line up at 250
        shown: list[str] = []
        for index, (text, face, size, rise) in enumerate(equation):
            if text == "=":
                x = 250.0
            gap = 0.0 if rise or index == 0 else 2.5
            face = face if symbol_font or face != SYMBOL else ROMAN
            x = drawing.text(x + gap, y - rise, text, face, size) if text else x
            shown.append(text.translate(GREEK) if face == SYMBOL else text)
        drawing.right(540, y, f"({r + 1})", ROMAN)
        maths.append(Piece("math", " ".join([*filter(None, shown), f"({r + 1})"])))
    below = drawing.prose(72, top + 2 * LEADING * len(EQUATIONS) + 10, 468, PROSE, 3)
    return Drawn(drawing.pdf(), (*pieces("text", above), *maths, *pieces("text", below)))
