"""Text cut into sentences as character spans: the answer's sentences, and the windows of a passage.

Both the support check (``clear_rag.generate.support``) and the page rest on spans, never on copies:
``text[start:end]`` is the sentence, so a sentence of a passage can be highlighted in its document.

The rules, in the order they apply:

* a line break ends a sentence: list items, headings and table rows are units of their own;
* inside a line, a sentence ends after ``.``, ``!`` or ``?`` (with any closing quotes or brackets, and
  any citation markers such as `` [2]`` right after them) when whitespace follows and the next
  character is not a lower-case letter; not after an abbreviation (``Dr.``, ``e.g.``, ``et al.``) or
  a lone initial (``H. Danvers``); a decimal point has no whitespace after it, so it never ends one;
* a span is trimmed of surrounding whitespace and of a leading list bullet or heading mark;
* a sentence longer than ``max_chars`` is cut at the last space before the limit, so a model reads
  each window whole (a table flattened to one line, say).
"""

from __future__ import annotations

import itertools
import re

Span = tuple[int, int]

MAX_CHARS = 400  # about 100 tokens: two windows and a sentence of the answer fit a cross-encoder's 256
_MARKERS = r"(?:\s*\[\d{1,3}\])*+"  # possessive: markers stay with the sentence they follow
_END = re.compile(r"[.!?]+[\"'”’)\]]*" + _MARKERS + r"(?=\s+[^\sa-z])")
_SHORT = "dr mr mrs ms prof st mt no vs fig figs eq eqs al etc e.g i.e cf approx dept inc ltd co jr sr"
_ABBREVIATIONS = frozenset(_SHORT.split())
_LEAD = re.compile(r"(?:[-*•+]\s+|#{1,6}\s+|\d{1,3}[.)]\s+(?=\S))")


def sentence_spans(text: str, *, max_chars: int = MAX_CHARS) -> list[Span]:
    """The sentences of ``text`` as ``[start, end)`` spans, in order, none empty (see the module rules)."""
    if max_chars < 20:
        raise ValueError(f"max_chars={max_chars!r} is too small; use at least 20 characters")
    spans: list[Span] = []
    for line in re.finditer(r"[^\n]+", text):
        start = line.start()
        for end in _ends(line.group(0)):
            spans += _cut(text, start, line.start() + end, max_chars)
            start = line.start() + end
        spans += _cut(text, start, line.end(), max_chars)
    return spans


def _ends(line: str) -> list[int]:
    """Where sentences end in one line (offsets into it), abbreviations and initials left out."""
    ends = []
    for found in _END.finditer(line):
        dot = found.start()
        word = re.search(r"(\S+)$", line[:dot])
        before = word.group(1).lower().lstrip("([\"'") if word else ""
        initial = re.fullmatch(r"[A-Za-z]", before)
        numbered = re.fullmatch(r"\d{1,3}", line[:dot].strip())  # "1. First point": a list item's number
        if line[dot] == "." and (before in _ABBREVIATIONS or initial or numbered):
            continue
        ends.append(found.end())
    return ends


def _cut(text: str, start: int, end: int, max_chars: int) -> list[Span]:
    """``[start, end)`` trimmed, its bullet dropped, and cut into pieces of at most ``max_chars``."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    lead = _LEAD.match(text, start, end)
    if lead is not None and lead.end() < end:
        start = lead.end()
    pieces: list[Span] = []
    while end - start > max_chars:
        cut = text.rfind(" ", start + 1, start + max_chars)
        cut = cut if cut > start else start + max_chars
        pieces.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if end > start:
        pieces.append((start, end))
    return pieces


def windows(spans: list[Span]) -> list[Span]:
    """Every sentence, then every two adjacent sentences joined: what a sentence of an answer is
    compared with, since one claim may take two sentences of a source to say."""
    return spans + [(a[0], b[1]) for a, b in itertools.pairwise(spans)]
