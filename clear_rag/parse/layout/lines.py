"""Lines from words, segments from lines, and one paragraph's lines joined into text."""

from __future__ import annotations

import re
from collections.abc import Sequence

from clear_rag.parse.layout.geometry import Line, Word

SAME_LINE = 0.5  # of the smaller font size: how far two words' vertical centres may be apart
SEGMENT_GAP = 1.0  # of the font size: a gap this wide splits a line into segments (table cells)


def lines_from_words(words: Sequence[Word]) -> list[Line]:
    """Group words sharing a baseline into lines, top to bottom, each line's words left to right.

    Rule: words are taken in order of their vertical centre; a word joins the current line when its
    centre is within ``SAME_LINE`` (0.5) of the smaller font size of the line's first word's
    centre, so a superscript stays on its line while the next line (a full line height away)
    starts a new one. One sort, then one pass: O(n log n) whatever the page holds.
    """
    ordered = sorted(words, key=lambda word: (word.centre, word.x0))
    lines: list[Line] = []
    current: list[Word] = []
    for word in ordered:
        if current:
            first = current[0]
            if abs(word.centre - first.centre) <= SAME_LINE * min(word.size, first.size):
                current.append(word)
                continue
            lines.append(Line(tuple(sorted(current, key=lambda w: w.x0))))
        current = [word]
    if current:
        lines.append(Line(tuple(sorted(current, key=lambda w: w.x0))))
    return lines


# A currency sign belongs to the number after it, and a bullet glyph to its item's text (dashes are
# left out: a dash alone in a table cell is the filings' zero).
_OPENS = frozenset("$€£¥•◦▪▫●○■□‣⁃∙")
_CLOSES = frozenset({"%", ")", "%)", ")%"})  # and these to the number before them
SIGNS = _OPENS | _CLOSES  # left out where a cell's alignment is measured


def segments(line: Line, gap: float = SEGMENT_GAP) -> list[Line]:
    """A line cut wherever the space between two words exceeds ``gap`` times the font size.

    Prose never leaves a gap of a whole em between words; table cells and a column gutter do.
    A lone currency sign starts a segment and holds on to the number after it, however far
    ("$" ... "391,035" in a right-aligned column), as a lone bullet glyph holds on to its item's
    text; a lone "%" or ")" stays with the number before it.
    """
    parts: list[list[Word]] = [[line.words[0]]]
    for before, word in zip(line.words, line.words[1:], strict=False):
        if before.text in _OPENS or word.text in _CLOSES:
            parts[-1].append(word)
        elif word.text in _OPENS or word.x0 - before.x1 > gap * max(word.size, before.size):
            parts.append([word])
        else:
            parts[-1].append(word)
    return [Line(tuple(part)) for part in parts]


_SOFT_HYPHEN = "\u00ad"
_HYPHENS = ("-", "\u2010")
_WORD_BEFORE = re.compile(r"(\S+)$")


def join_lines(texts: Sequence[str]) -> str:
    """One paragraph's lines as one line of text, words broken at a line end made whole again.

    Rule: a line ending in a hyphen right after a letter, followed by a line starting with a
    lowercase letter, is a word hyphenated across the line break: the hyphen goes and the halves
    join ("manu-" + "facturing" -> "manufacturing"). Where the broken word already holds a hyphen
    ("state-of-the-" + "art"), follows a digit ("10-" + "year") or is followed by a capital or a
    digit ("COVID-" + "19"), the hyphen is part of a compound: it stays, and the halves still join
    without a space. A soft hyphen (U+00AD) at a line end always joins. Any other line break
    becomes a space.
    """
    out = ""
    for text in texts:
        text = text.strip()
        if not text:
            continue
        if not out:
            out = text
        elif out.endswith(_SOFT_HYPHEN) or _broken_word(out, text):
            out = out[:-1] + text
        elif _compound(out):
            out = out + text
        else:
            out = out + " " + text
    return out.replace(_SOFT_HYPHEN, "")


def _compound(before: str) -> bool:
    """The line ends in a hyphen right after a letter or digit: the word goes on on the next line."""
    return before.endswith(_HYPHENS) and len(before) >= 2 and before[-2].isalnum()


def _broken_word(before: str, after: str) -> bool:
    if not _compound(before) or not before[-2].isalpha() or not after[0].islower():
        return False
    match = _WORD_BEFORE.search(before[:-1])
    return match is not None and not any(h in match.group(1) for h in _HYPHENS)
