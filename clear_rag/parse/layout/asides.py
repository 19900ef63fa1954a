"""Text at an angle to the body, set apart: each run a furniture block of its own, read in its direction.

A margin stamp ("arXiv:2004.04906v3 [cs.CL] 30 Sep 2020" up the left edge), a production stamp on every
page of a register, a diagonal watermark, a chart's turned axis label: none of them is part of the
body's reading order, and interleaved with it, letter by letter in reverse, they broke it (issue 31).
Each angle's words on a page (``geometry.Aside``, already in the frame where they read left to right)
become one furniture block, its lines top to bottom, so the text stays searchable in the document
yet out of the chunks, as running headers and footers are.

Except in a table: a column head set a quarter turn round to fit a narrow column is the table's, and
set apart it left the head row empty (issue 31). A run (a line of turned text in its own frame) whose
box lies inside a ruled cell, with a drawn rule above, below, left and right of it, stays in the body
(``in_cells``) as one word at its start: the line height where a run reading up the page begins (its
foot) or where one reading down begins (its head), so the heads of one row, set from a common edge,
stand on one line and the table rules read them as the head row. Only quarter turns: a watermark at 45
degrees across a grid is not a head.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from clear_rag.parse.layout.geometry import Aside, Rule, Word
from clear_rag.parse.layout.lines import lines_from_words
from clear_rag.parse.layout.rotation import Frame
from clear_rag.parse.pieces import Piece

_SHOWN = 8
EDGE = 2.0  # points: how far a rule may fall short of a run's edge and still close its cell


def in_cells(
    words: Sequence[Word], turned: Frame, body: Frame, angle: int, rules: Sequence[Rule]
) -> tuple[tuple[Word, ...], tuple[Word, ...]]:
    """Turned ``words`` (placed in ``turned``, at ``angle`` to the body) split into the runs that lie in
    a ruled cell, as body words placed in ``body`` (the module's rule), and the words set apart."""
    if angle not in (90, -90) or not rules:
        return (), tuple(words)
    kept: list[Word] = []
    apart: list[Word] = []
    for line in lines_from_words(words):
        x0, top, x1, bottom = body.box(*turned.page_box(line.x0, line.top, line.x1, line.bottom))
        if not _ruled_round((x0, top, x1, bottom), rules):
            apart += line.words
            continue
        size = line.size
        top, bottom = (bottom - size, bottom) if angle == 90 else (top, top + size)
        kept.append(replace(line.words[0], text=line.text, x0=x0, x1=x1, top=top, bottom=bottom, size=size))
    return tuple(kept), tuple(apart)


def _ruled_round(box: tuple[float, float, float, float], rules: Sequence[Rule]) -> bool:
    """Whether drawn rules close ``box`` on all four sides: one spanning it above and below, one
    spanning its height left and right."""
    x0, top, x1, bottom = box
    across = [r for r in rules if r.horizontal and r.x0 <= x0 + EDGE and r.x1 >= x1 - EDGE]
    down = [r for r in rules if not r.horizontal and r.top <= top + EDGE and r.bottom >= bottom - EDGE]
    return (
        any(r.bottom <= top + EDGE for r in across)
        and any(r.top >= bottom - EDGE for r in across)
        and any(r.x1 <= x0 + EDGE for r in down)
        and any(r.x0 >= x1 - EDGE for r in down)
    )


def aside_pieces(page: int, asides: Sequence[Aside]) -> list[Piece]:
    """One furniture piece per angle of turned text on a page, its lines in their own order."""
    pieces = []
    for aside in asides:
        lines = lines_from_words(aside.words)
        text = "\n".join(line.text for line in lines)
        if text.strip():
            meta = {"page": str(page), "angle": str(aside.angle)}
            pieces.append(Piece("furniture", text, meta=meta))
    return pieces


def angle_warnings(source: str, turned: Mapping[int, int], aside: Sequence[int]) -> list[str]:
    """Sentences naming the pages read turned (``turned``: page -> angle of its body) and those
    whose text at an angle was set apart (``aside``)."""
    warnings = []
    if turned:
        shown = ", ".join(f"{page} ({angle} degrees)" for page, angle in list(turned.items())[:_SHOWN])
        warnings.append(
            f"{source}: the text of {_pages(list(turned), shown)} is turned (a landscape page); "
            "it was read turned upright"
        )
    if aside:
        warnings.append(
            f"{source}: {_pages(aside, ', '.join(str(page) for page in aside[:_SHOWN]))} "
            f"{'has' if len(aside) == 1 else 'have'} text at an angle to the body (a margin stamp, a "
            "watermark, a turned label); it is kept apart as furniture, read in its own direction"
        )
    return warnings


def _pages(pages: Sequence[int], shown: str) -> str:
    more = f" and {len(pages) - _SHOWN} more" if len(pages) > _SHOWN else ""
    return f"page {shown}" if len(pages) == 1 else f"pages {shown}{more}"
