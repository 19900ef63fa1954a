"""Running headers, footers and page numbers: what repeats at a page's edge rather than being text.

Three rules, applied to the lines nearest each page's top and bottom edge (digits normalised
throughout, so "Page 3" and "Page 4" are the same text):

* a line near the edge is a running header or footer when the same text stands at the same height
  on enough pages;
* a line among the first or last few of a page is a running header or footer when the same text
  stands, horizontally at the same place, among the first or last few lines of many pages,
  whatever its height: a footer flowed with the text (as HTML converted to PDF leaves the filed
  page's footer after its last paragraph) moves up and down with the text above it;
* a line near the edge is a page number when it is only a number ("12", "- 12 -", "Page 12",
  "12 of 40", "xii"), whether or not it repeats, so a one-page file's page number is furniture too.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from clear_rag.parse.layout.geometry import Line

EDGE_BAND = 0.12  # of the page height: lines this close to the top or bottom edge are "near" it
EDGE_LINES = 3  # at most this many lines from each edge are candidates
SAME_HEIGHT = 0.015  # of the page height: two lines this close in height stand "at the same height"
SAME_PLACE = 0.02  # of the page width: two lines whose centres are this close stand at the same place
REPEAT_SHARE = 0.2  # a repeated line is furniture when it stands on this share of the pages (and 2+)
FLOWED_SHARE = 0.3  # a flowed one (any height) needs this share of the pages (and 3+)
PAGE_NUMBER_LINES = 2  # a page number is one of the two lines nearest its edge

_DIGITS = re.compile(r"\d+")
_SPACE = re.compile(r"\s+")
PAGE_NUMBER = re.compile(
    r"(?:page\s+)?(?:\d{1,4}|[ivxlc]{1,7})(?:\s*(?:of|/)\s*\d{1,4})?|[-–—]\s*\d{1,4}\s*[-–—]",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class _Candidate:
    page: int  # index into the pages
    line: int  # index into that page's lines
    edge: str  # "top" or "bottom"
    height: float  # the line's top, as a share of the page height
    place: float  # the line's horizontal centre, as a share of the page width
    rank: int  # 0 for the line nearest the edge
    near: bool  # within EDGE_BAND of the edge


def normalise(text: str) -> str:
    """Text as furniture is compared: lower case, each run of digits one ``#``, spaces collapsed."""
    return _SPACE.sub(" ", _DIGITS.sub("#", text.lower())).strip()


def edge_candidates(lines: Sequence[Line], width: float, height: float, page: int) -> list[_Candidate]:
    """The first and last ``EDGE_LINES`` lines of a page (top to bottom), each marked ``near`` when
    within ``EDGE_BAND`` of its edge."""
    found: list[_Candidate] = []
    count = min(EDGE_LINES, len(lines))
    for rank in range(count):
        for edge, index in (("top", rank), ("bottom", len(lines) - 1 - rank)):
            line = lines[index]
            gap = line.bottom if edge == "top" else height - line.top  # from the line to its edge
            near = gap <= EDGE_BAND * height
            place = (line.x0 + line.x1) / 2 / width
            found.append(_Candidate(page, index, edge, line.top / height, place, rank, near))
    return found


def is_page_number(text: str) -> bool:
    """A line that is only a page number: "7", "- 7 -", "Page 7", "7 of 40", "vii"."""
    return PAGE_NUMBER.fullmatch(text.strip()) is not None


def find_furniture(
    pages: Sequence[Sequence[Line]], widths: Sequence[float], heights: Sequence[float]
) -> list[set[int]]:
    """For each page, the indices of its lines that are furniture.

    ``pages`` holds each page's lines top to bottom (whole rows across the page, before columns).
    A line repeated at the same height needs ``max(2, ceil(REPEAT_SHARE * pages))`` pages; one
    repeated at the same place among the edge lines, at any height, needs
    ``max(3, ceil(FLOWED_SHARE * pages))``; a page number needs to be near its edge and among the
    ``PAGE_NUMBER_LINES`` lines nearest it.
    """
    chosen: list[set[int]] = [set() for _ in pages]
    groups: dict[tuple[str, str], list[_Candidate]] = defaultdict(list)
    for page, (lines, width, height) in enumerate(zip(pages, widths, heights, strict=True)):
        for candidate in edge_candidates(lines, width, height, page):
            text = lines[candidate.line].text
            if candidate.near and candidate.rank < PAGE_NUMBER_LINES and is_page_number(text):
                chosen[page].add(candidate.line)
            groups[(candidate.edge, normalise(text))].append(candidate)
    at_height = max(2, math.ceil(REPEAT_SHARE * len(pages)))
    flowed = max(3, math.ceil(FLOWED_SHARE * len(pages)))
    for (_, text), found in groups.items():
        if not text:
            continue
        near = [candidate for candidate in found if candidate.near]
        clusters = [(c, at_height) for c in _clusters(near, "height", SAME_HEIGHT)]
        clusters += [(c, flowed) for c in _clusters(found, "place", SAME_PLACE)]
        for cluster, needed in clusters:
            if len({candidate.page for candidate in cluster}) >= needed:
                for candidate in cluster:
                    chosen[candidate.page].add(candidate.line)
    return chosen


def _clusters(found: list[_Candidate], key: str, tolerance: float) -> list[list[_Candidate]]:
    """Candidates clustered by ``key``: a new cluster wherever the next is ``tolerance`` further."""
    ordered = sorted(found, key=lambda candidate: float(getattr(candidate, key)))
    clusters: list[list[_Candidate]] = []
    for candidate in ordered:
        if clusters and getattr(candidate, key) - getattr(clusters[-1][-1], key) <= tolerance:
            clusters[-1].append(candidate)
        else:
            clusters.append([candidate])
    return clusters
