"""Blocks from the lines of one column: paragraphs, headings and lists, with tables placed between.

A new block starts at a vertical gap wider than the page's line spacing, at a change of font size
or weight, at a list marker, at a numbered heading ("Item 7.") and at a first-line indent after a
short line. Each rule is a function below; thresholds are multiples of the body font size.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace

from clear_rag.parse.layout.aligned import aligned_tables
from clear_rag.parse.layout.geometry import Line, Word, dominant_size
from clear_rag.parse.layout.headings import NUMBERED_HEADING, is_heading, run_in
from clear_rag.parse.layout.lines import join_lines
from clear_rag.parse.layout.tables import Table
from clear_rag.types import BlockKind

PARAGRAPH_GAP = 0.5  # of the body size, above the usual gap between lines: a paragraph break
STYLE_CHANGE = 0.1  # of the body size: a change of font size this large starts a block
INDENT = 1.0  # of the body size: a first-line indent
SHORT_LINE = 2.0  # of the body size: a line ending this far before the column's right edge is short
MARKER_SLACK = 0.5  # of the body size: how far left of its marker a list item's line may start

BULLETS = frozenset("•◦▪▫●○■□‣⁃∙·–—-*")
_ORDERED = re.compile(r"\(?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]|\((?:\d{1,2}|[a-z]|[ivx]{1,4})\)", re.IGNORECASE)
_END_OF_SENTENCE = tuple(".!?:;\"'”’)")


@dataclass(frozen=True, slots=True)
class Element:
    """A block before assembly, where it sits, and what the heading levels are ranked by."""

    kind: BlockKind
    text: str
    top: float
    size: float = 0.0
    bold: bool = False
    italic: bool = False
    meta: Mapping[str, str] = field(default_factory=dict)
    opens: bool = False  # the first block of a column or a page: a paragraph may run on into it


@dataclass(slots=True)
class _Group:
    lines: list[Line]
    marker: Word | None  # the first line's list marker, if it starts a list item
    after_gap: bool = False  # a paragraph gap separates it from the group before


def list_marker(line: Line) -> Word | None:
    """The word that makes a line a list item: a bullet glyph (•, ◦, ▪, –, ...) or an ordinal
    marker ("1.", "a)", "(iv)") as the line's first word, followed by text."""
    first = line.words[0]
    if line.mono:
        return None  # "- item" or "1." in a typewriter font is a line of code or output
    if len(line.words) < 2 and not (first.text[0] in BULLETS and len(first.text) > 1):
        return None
    if first.text in BULLETS or _ORDERED.fullmatch(first.text):
        return first
    if first.text[0] in BULLETS - {"-", "–", "—", "*"} and first.text[1:2].isalpha():
        return first  # "•Revenue": a bullet set tight against its text
    return None


def gap_break(above: Line, below: Line, body: float, spacing: float) -> bool:
    """More space between two lines than the page's usual line spacing plus half the body size."""
    return below.top - above.bottom > spacing + PARAGRAPH_GAP * body


def style_break(group: _Group, line: Line, body: float) -> bool:
    """A change of font size (by a tenth of the body size), of weight, of slant or between a
    typewriter font and a proportional one, as after a heading or around code."""
    first = group.lines[0]
    return (
        abs(line.size - first.size) > STYLE_CHANGE * body
        or line.bold != first.bold
        or line.italic != first.italic
        or line.mono != first.mono
    )


def indent_break(group: _Group, line: Line, body: float, right: float) -> bool:
    """A first-line indent (one body size in from the paragraph's left edge) after a short line."""
    left = min(member.x0 for member in group.lines)
    return (
        group.marker is None
        and line.x0 >= left + INDENT * body
        and group.lines[-1].x1 <= right - SHORT_LINE * body
    )


def dedent_break(group: _Group, line: Line, body: float) -> bool:
    """A line starting left of the current list item's marker: the list has ended."""
    return group.marker is not None and line.x0 < group.marker.x0 - MARKER_SLACK * body


def group_lines(lines: Sequence[Line], body: float, spacing: float) -> list[_Group]:
    """Consecutive lines into groups, each a paragraph, a heading or one list item."""
    right = max((line.x1 for line in lines), default=0.0)
    groups: list[_Group] = []
    for line in _run_ins_apart(lines, body, spacing, right):
        marker = list_marker(line)
        gap = bool(groups) and gap_break(groups[-1].lines[-1], line, body, spacing)
        if (
            not groups
            or marker is not None
            or gap
            or (NUMBERED_HEADING.match(line.text) and not line.mono)
            or style_break(groups[-1], line, body)
            or indent_break(groups[-1], line, body, right)
            or dedent_break(groups[-1], line, body)
        ):
            groups.append(_Group([line], marker, gap))
        else:
            groups[-1].lines.append(line)
    return groups


def _run_ins_apart(lines: Sequence[Line], body: float, spacing: float, right: float) -> list[Line]:
    """Lines with a heading run in at their start (``headings.run_in``) cut in two: the heading, and
    the rest of the line, where its paragraph starts. Only a line that opens a paragraph can hold
    one: the first, one after a paragraph gap, or one after a line that ends a sentence or stops
    short of the right edge. A list item's bold lead-in ("• Cybersecurity: provides ...") is its
    item's, and so is a bold phrase wrapped onto an item's next line ("business" / "practices: Laws")."""
    out: list[Line] = []
    for index, line in enumerate(lines):
        before = lines[index - 1] if index else None
        opens = (
            before is None
            or gap_break(before, line, body, spacing)
            or before.text.endswith(_END_OF_SENTENCE)
            or before.x1 <= right - SHORT_LINE * body
        )
        parts = run_in(line) if opens and list_marker(line) is None else None
        out += parts if parts is not None else (line,)
    return out


def elements_from_groups(groups: Sequence[_Group], body: float) -> list[Element]:
    """Groups as elements; consecutive list items make one list, nested by their markers' indent,
    unless a paragraph gap and a change of marker (bullets after "(1)" footnotes) part them."""
    out: list[Element] = []
    items: list[tuple[Word, list[Line]]] = []
    for group in groups:
        if group.marker is not None:
            if items and group.after_gap and _bulleted(group.marker) != _bulleted(items[-1][0]):
                out.append(_list_element(items, body))
                items = []
            items.append((group.marker, group.lines))
            continue
        if items:
            out.append(_list_element(items, body))
            items = []
        words = [word for line in group.lines for word in line.words]
        if all(line.mono for line in group.lines):
            out.append(Element("code", code_text(group.lines), group.lines[0].top, dominant_size(words)))
            continue
        out.append(
            Element(
                "heading" if is_heading(group.lines, body) else "paragraph",
                join_lines([line.text for line in group.lines]),
                group.lines[0].top,
                dominant_size(words),
                all(line.bold for line in group.lines),
                all(line.italic for line in group.lines),
            )
        )
    if items:
        out.append(_list_element(items, body))
    return out


def code_text(lines: Sequence[Line]) -> str:
    """Lines of code one per line, each indented by as many spaces as its left edge stands right of
    the leftmost line's, in the typewriter font's character width."""
    left = min(line.x0 for line in lines)
    widths = [(w.x1 - w.x0) / len(w.text) for line in lines for w in line.words if w.text]
    width = sorted(widths)[len(widths) // 2] if widths else 1.0
    return "\n".join(" " * round((line.x0 - left) / width) + line.text for line in lines)


def _list_element(items: Sequence[tuple[Word, list[Line]]], body: float) -> Element:
    """List items one per line, each indented two spaces per level its marker stands right of the
    leftmost marker (markers within half a body size of each other are one level)."""
    lefts: list[float] = []
    for marker, _ in items:
        if not any(abs(marker.x0 - left) <= MARKER_SLACK * body for left in lefts):
            lefts.append(marker.x0)
    lefts.sort()
    rendered = []
    for marker, lines in items:
        depth = min(range(len(lefts)), key=lambda d: abs(lefts[d] - marker.x0))
        rendered.append("  " * depth + join_lines([line.text for line in lines]))
    return Element("list", "\n".join(rendered), items[0][1][0].top)


def region_elements(
    lines: Sequence[Line], tables: Sequence[Table], body: float, spacing: float
) -> list[Element]:
    """One column's (or one full-width stretch's) blocks in reading order, tables among them."""
    is_item = [list_marker(line) is not None for line in lines]
    found = aligned_tables(lines, body, is_item)
    placed = [(table.top, table) for table in tables]
    out: list[Element] = []
    start = 0
    for first, end, table in [*found, (len(lines), len(lines), None)]:
        out += elements_from_groups(group_lines(lines[start:first], body, spacing), body)
        if table is not None:
            placed.append((table.top, table))
        start = end
    out += [Element("table", table.render(), top, meta=table.meta()) for top, table in placed]
    out.sort(key=lambda element: element.top)
    if out:
        out[0] = replace(out[0], opens=True)
    return out


def _bulleted(marker: Word) -> bool:
    return marker.text[0] in BULLETS


def runs_on(before: Element, after: Element) -> bool:
    """A paragraph (or a list's last item) cut by a column or page break: the first ends without
    closing punctuation, and the second, a paragraph, opens its column or page with anything but a
    capital ("manufacturing capacity", "$3.5 billion", "2024 were")."""
    return (
        before.kind in ("paragraph", "list")
        and after.kind == "paragraph"
        and after.opens
        and not before.text.endswith(_END_OF_SENTENCE)
        and bool(after.text)
        and not after.text[0].isupper()
    )
