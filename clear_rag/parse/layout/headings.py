"""Headings: which blocks are headings, and a heading run in at the start of its paragraph.

Levels are not decided here: the parser ranks the headings' styles over the whole file, larger
sizes first, bold before regular (``parser._pieces``), so the levels follow the document's own sizes.

What was wrong before (issue 31): a heading had to be 1.15 times the body size or bold by a name
with "Bold" in it, so a paper's 11 pt sections over 10 pt text in TeX's bold fonts (CMBX, SFBX,
NimbusRomNo9L-Medi) were read as text; bold figure captions and bold typewriter lines (a manual's
commands) were all headings; and a subsection run in at the start of its paragraph ("3.1 Overview Our
dense passage retriever ...") stayed inside the paragraph.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from clear_rag.parse.layout.geometry import Line, dominant_size
from clear_rag.parse.layout.lines import join_lines

# Of the body size: a block set this much larger is a heading. The sizes are those of most of the
# block's characters, rounded to half a point, so 10.95 pt (LaTeX's \large over 10 pt) counts, while
# a rounding difference of a quarter point does not.
HEADING_SIZE = 1.05
HEADING_LINES = 3
HEADING_WORDS = 40
NUMBERED_WORDS = 15

NUMBERED_HEADING = re.compile(
    r"(?:PART\s+[IVX]+\b|ITEM\s+\d{1,2}[A-Z]?\.|NOTE\s+\d{1,2}\b\s*[–—:.-])", re.IGNORECASE
)
# "Figure 3:", "Fig. 2.", "Table 4-1 Supported...", "Listing 7", "Exhibit 2.1": a caption, whatever
# its weight, is no heading.
CAPTION = re.compile(
    r"(?:figure|fig\.|table|tab\.|listing|exhibit|chart|algorithm|scheme|plate|illustration|diagram)"
    r"\s*(?:[A-Z]?\d+|[IVX]+)(?:[-.–]\d+)*[a-z]?(?:[:.]|\s|$)",
    re.IGNORECASE,
)
# A section number before a run-in heading's title: "3", "3.1", "3.1.2.", "A.2", "IV."
_SECTION_NUMBER = re.compile(r"(?:\d{1,2}(?:\.\d{1,2})*\.?|[A-Z](?:\.\d{1,2})+\.?|[A-Z]\.|[IVX]{1,4}\.)\s+\S")
_RUN_IN_ENDS = (".", ":")


def is_heading(lines: Sequence[Line], body: float) -> bool:
    """A heading: at most 3 lines and 40 words, with a letter, neither a caption ("Figure 3:") nor
    set in a typewriter font (code), and one of: set at least 1.05 times the body size; bold
    throughout; in italics throughout, at most 15 words on at most 2 lines, not ending a sentence;
    or a numbered heading ("PART II", "Item 1A.", "Note 3 –") of at most 15 words on at most 2
    lines."""
    text = join_lines([line.text for line in lines])
    words = len(text.split())
    if len(lines) > HEADING_LINES or words > HEADING_WORDS or not any(ch.isalpha() for ch in text):
        return False
    if CAPTION.match(text) or all(line.mono for line in lines):
        return False
    if dominant_size(word for line in lines for word in line.words) >= HEADING_SIZE * body:
        return True
    if all(line.bold for line in lines):
        return True
    if len(lines) <= 2 and all(line.italic for line in lines) and words <= NUMBERED_WORDS and text[-1] != ".":
        return True
    return bool(NUMBERED_HEADING.match(text)) and len(lines) <= 2 and words <= NUMBERED_WORDS


def run_in(line: Line) -> tuple[Line, Line] | None:
    """A heading run in at the start of a line, and the rest of the line; None if there is none.

    Rule: the line opens with bold words (at most 15) and goes on in a regular weight, and the bold
    words are a numbered title ("3.1 Overview", "A.2 Data") or end in a full stop or colon
    ("Overview.", "Note:"), as LaTeX's \\paragraph and a report's lead-ins set them. A bold word or
    phrase inside a sentence ("the **total** rose") is neither at the line's start nor either form.
    """
    if not _has_alnum(line.words[0].text):
        return None  # a bullet, a dash, a bracket: an item or a quotation, not a heading
    count = 0
    while count < len(line.words) and (line.words[count].bold or not _has_alnum(line.words[count].text)):
        count += 1
    head, rest = line.words[:count], line.words[count:]
    if not head or not any(_has_alnum(word.text) for word in rest) or line.mono:
        return None
    text = Line(head).text
    if len(text.split()) > NUMBERED_WORDS or not any(ch.isalpha() for ch in text) or CAPTION.match(text):
        return None
    if not (_SECTION_NUMBER.match(text) or text.endswith(_RUN_IN_ENDS)):
        return None
    return Line(head), Line(rest)


def _has_alnum(text: str) -> bool:
    return any(ch.isalnum() for ch in text)
