"""Text at an angle to the body, set apart: each run a furniture block of its own, read in its direction.

A margin stamp ("arXiv:2004.04906v3 [cs.CL] 30 Sep 2020" up the left edge), a production stamp on every
page of a register, a diagonal watermark, a chart's turned axis label: none of them is part of the
body's reading order, and interleaved with it, letter by letter in reverse, they broke it (issue 31).
Each angle's words on a page (``geometry.Aside``, already in the frame where they read left to right)
become one furniture block, its lines top to bottom, so the text stays searchable in the document
yet out of the chunks, as running headers and footers are.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from clear_rag.parse.layout.geometry import Aside
from clear_rag.parse.layout.lines import lines_from_words
from clear_rag.parse.pieces import Piece

_SHOWN = 8


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
