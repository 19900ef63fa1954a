"""Running headers, footers and page numbers: what stands in a page's margins rather than its text.

The margins come first. A page's top margin is its first few lines (at most ``EDGE_LINES``) up to a
gap of ``MARGIN_GAP`` body sizes or more, which sets them apart from the body text below; its bottom
margin likewise from the foot up. Lines inside the body's extent are never furniture, however often
they repeat: a survey table's rows on every page, a sentence repeated on each page, a table's head
row continued on the next page (before, any line within 95 points of an edge could go, and a
LaTeX page number 97 points up could not, issue 31). Among the margin lines (digits normalised, so
"Page 3" and "Page 4" are the same text):

* a page number is furniture wherever it stands in a margin: only a number ("12", "- 12 -",
  "Page 12", "12 of 40", "xii", "7-45", "A-3");
* in a file of at most two pages, where nothing can be seen to repeat, the margin line nearest its
  edge, within ``POSITION_BAND`` of the page height, no larger than the body and of a few words, is
  furniture by its position alone (a title is larger; an author line below it is not the nearest);
* in longer files, a margin line is furniture when the same text stands at the same height on enough
  pages; or the same text at the same place on more pages, whatever its height (a footer flowed with
  the text, as a filing's HTML rendered to PDF leaves it after the page's last paragraph); or when
  lines near the edge (``SPOT_BAND``) stand at one height on enough pages and read alike there,
  each carrying a page number at an end or recurring in that spot ("Chapter 7. Troubleshooting
  7-45", whose title changes with the chapter).
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clear_rag.parse.layout.geometry import Line

MARGIN_GAP = 1.5  # of the body size: a gap this wide sets the lines nearest an edge apart from the body
EDGE_LINES = 3  # at most this many lines from each edge are in its margin
POSITION_BAND = 0.15  # of the page height: near the edge, for the position rule of short files
SHORT_FILE = 2  # pages: a file this short cannot show repetition
POSITION_WORDS = 12  # a margin line of more words is no header or footer by position alone
SPOT_BAND = 0.2  # of the page height: a running header or footer whose text changes stands this near its edge
SAME_HEIGHT = 0.015  # of the page height: two lines this close in height stand "at the same height"
SAME_PLACE = 0.02  # of the page width: two lines whose centres are this close stand at the same place
REPEAT_SHARE = 0.2  # a repeated line is furniture when it stands on this share of the pages (and 2+)
FLOWED_SHARE = 0.3  # a flowed one (any height) needs this share of the pages (and 3+)
PAGE_NUMBER_LINES = 2  # a page number is one of the two lines nearest its edge

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
_ROMAN = r"(?=[ivxlcdm])m{0,3}(?:cm|cd|d?c{0,3})(?:xc|xl|l?x{0,3})(?:ix|iv|v?i{0,3})"
# "7", "7-45" (chapter-page), "A-3" (appendix), "xii", each perhaps after "Page" or "p."
_NUMBER = rf"(?:(?:page|pg\.?|p\.)\s*)?(?:[a-z]?\d{{1,3}}[-–]\d{{1,4}}|[a-z][-–]\d{{1,4}}|\d{{1,4}}|{_ROMAN})"
PAGE_NUMBER = re.compile(
    rf"{_NUMBER}(?:\s*(?:of|/)\s*\d{{1,4}})?|[-–—]\s*\d{{1,4}}\s*[-–—]|\[\s*\d{{1,4}}\s*\]",
    re.IGNORECASE,
)
_NUMBER_AT_AN_END = re.compile(rf"^{_NUMBER}(?:\s|$)|(?:^|\s){_NUMBER}$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class _Candidate:
    page: int  # index into the pages
    line: int  # index into that page's lines
    edge: str  # "top" or "bottom"
    height: float  # the line's top, as a share of the page height
    place: float  # the line's horizontal centre, as a share of the page width
    rank: int  # 0 for the line nearest the edge
    distance: float  # from the edge to the line's far side, as a share of the page height


def normalise(text: str) -> str:
    """Text as furniture is compared: lower case, each run of digits one ``#``, spaces collapsed."""
    return _SPACE.sub(" ", _DIGITS.sub("#", text.lower())).strip()


def is_page_number(text: str) -> bool:
    """A line that is only a page number: "7", "- 7 -", "Page 7", "7 of 40", "vii", "7-45"."""
    return PAGE_NUMBER.fullmatch(text.strip()) is not None


def margin_candidates(
    lines: Sequence[Line], width: float, height: float, page: int, body: float
) -> list[_Candidate]:
    """The lines of a page's top and bottom margins: from each edge, the lines (at most
    ``EDGE_LINES``) up to the last gap of ``MARGIN_GAP`` body sizes or more among them. The end of
    the page's lines counts as such a gap where they end within ``POSITION_BAND`` of the edge (a
    page holding only its number)."""
    order = sorted(range(len(lines)), key=lambda index: lines[index].top)
    found: list[_Candidate] = []
    for edge, inward in (("top", order), ("bottom", order[::-1])):
        depth = 0
        for k in range(1, min(EDGE_LINES, len(inward)) + 1):
            outer = lines[inward[k - 1]]
            if k == len(inward):
                reach = outer.bottom if edge == "top" else height - outer.top
                depth = k if reach <= POSITION_BAND * height else depth
                continue
            inner = lines[inward[k]]
            gap = inner.top - outer.bottom if edge == "top" else outer.top - inner.bottom
            if gap >= MARGIN_GAP * body:
                depth = k
        for rank, index in enumerate(inward[:depth]):
            line = lines[index]
            distance = line.bottom if edge == "top" else height - line.top
            place = (line.x0 + line.x1) / 2 / width
            found.append(_Candidate(page, index, edge, line.top / height, place, rank, distance / height))
    return found


def find_furniture(
    pages: Sequence[Sequence[Line]], widths: Sequence[float], heights: Sequence[float], body: float
) -> list[set[int]]:
    """For each page, the indices of its lines that are furniture (the module's rules).

    ``pages`` holds each page's lines (whole rows across the page, before columns); ``body`` is the
    file's body font size. A line repeated at the same height needs ``max(2, ceil(REPEAT_SHARE *
    pages))`` pages; one repeated at the same place at any height ``max(3, ceil(FLOWED_SHARE *
    pages))``.
    """
    chosen: list[set[int]] = [set() for _ in pages]
    candidates: list[_Candidate] = []
    for page, (lines, width, height) in enumerate(zip(pages, widths, heights, strict=True)):
        for candidate in margin_candidates(lines, width, height, page, body):
            candidates.append(candidate)
            if candidate.rank < PAGE_NUMBER_LINES and is_page_number(lines[candidate.line].text):
                chosen[page].add(candidate.line)
    if len(pages) <= SHORT_FILE:
        for candidate in candidates:
            line = pages[candidate.page][candidate.line]
            if (
                candidate.rank == 0
                and candidate.distance <= POSITION_BAND
                and line.size <= body
                and len(line.text.split()) <= POSITION_WORDS
            ):
                chosen[candidate.page].add(candidate.line)
        return chosen

    def text(candidate: _Candidate) -> str:
        return pages[candidate.page][candidate.line].text

    at_height = max(2, math.ceil(REPEAT_SHARE * len(pages)))
    flowed = max(3, math.ceil(FLOWED_SHARE * len(pages)))
    same_text: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    by_edge: dict[str, list[_Candidate]] = defaultdict(list)
    for candidate in candidates:
        if normalise(text(candidate)):
            same_text[(candidate.edge, normalise(text(candidate)))].append(candidate)
            by_edge[candidate.edge].append(candidate)
    found: list[tuple[list[_Candidate], int]] = []
    for group in same_text.values():
        found += [(cluster, at_height) for cluster in _clusters(group, "height", SAME_HEIGHT)]
        found += [(cluster, flowed) for cluster in _clusters(group, "place", SAME_PLACE)]
    for group in by_edge.values():
        outer = [candidate for candidate in group if candidate.distance <= SPOT_BAND]
        for spot in _clusters(outer, "height", SAME_HEIGHT, anchored=True):
            found.append((_alike(spot, text), at_height))
    for cluster, needed in found:
        if len({candidate.page for candidate in cluster}) >= needed:
            for candidate in cluster:
                chosen[candidate.page].add(candidate.line)
    return chosen


def _alike(spot: list[_Candidate], text: Callable[[_Candidate], str]) -> list[_Candidate]:
    """The lines of one spot in the margins that read as its running header or footer: each
    carrying a page number at an end, or whose text (digits normalised) stands there twice or more."""
    counts = Counter(normalise(text(candidate)) for candidate in spot)
    return [
        candidate
        for candidate in spot
        if _NUMBER_AT_AN_END.search(text(candidate)) or counts[normalise(text(candidate))] >= 2
    ]


def _clusters(
    found: list[_Candidate], key: str, tolerance: float, *, anchored: bool = False
) -> list[list[_Candidate]]:
    """Candidates clustered by ``key``: a new cluster wherever the next is ``tolerance`` further
    from the last (or, ``anchored``, from the cluster's first: a fixed spot, which lines at many
    heights cannot stretch by chaining, as footers flowed with the text would)."""
    ordered = sorted(found, key=lambda candidate: float(getattr(candidate, key)))
    clusters: list[list[_Candidate]] = []
    for candidate in ordered:
        if (
            clusters
            and getattr(candidate, key) - getattr(clusters[-1][0 if anchored else -1], key) <= tolerance
        ):
            clusters[-1].append(candidate)
        else:
            clusters.append([candidate])
    return clusters
