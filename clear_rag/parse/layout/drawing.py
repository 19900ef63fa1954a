"""Drawn rules from the line and rectangle dicts pdfplumber reports (plain dicts: no pdfplumber here).

A stroked rectangle draws its four edges (or one rule, if thin); a filled one is a rule only when thin
and dark: a wide fill is a background, and a light one shades a table's rows rather than ruling them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clear_rag.parse.layout.geometry import Rule

_THIN = 2.0  # points: a filled or stroked rectangle this thin is drawn as a rule, not a box


def drawn_rules(lines: list[dict[str, Any]], rects: list[dict[str, Any]]) -> Iterable[Rule]:
    """Drawn lines as rules; rectangles as the rules they draw.

    A stroked rectangle draws its four edges (or one rule, if thin). A filled one is a rule only
    when thin and not light: a wide fill is a background, and a light one (a pale grey row of a
    shaded table, however narrow its pieces) shades rows rather than ruling them.
    """
    for line in lines:
        yield Rule(float(line["x0"]), float(line["top"]), float(line["x1"]), float(line["bottom"]))
    for rect in rects:
        x0, top, x1, bottom = (float(rect[key]) for key in ("x0", "top", "x1", "bottom"))
        thin = bottom - top <= _THIN or x1 - x0 <= _THIN
        if not rect.get("stroke"):
            if thin and not _light(rect.get("non_stroking_color")):
                yield Rule(x0, top, x1, bottom)
        elif thin:
            yield Rule(x0, top, x1, bottom)
        else:
            yield Rule(x0, top, x1, top)
            yield Rule(x0, bottom, x1, bottom)
            yield Rule(x0, top, x0, bottom)
            yield Rule(x1, top, x1, bottom)


_LIGHT = 0.75  # luminance above which a fill is shading, not ink


def _light(colour: object) -> bool:
    """A grey, RGB or CMYK fill colour lighter than ``_LIGHT``; an unknown one (a pattern) is not."""
    if not isinstance(colour, tuple | list) or not all(isinstance(v, int | float) for v in colour):
        return False
    values = [float(v) for v in colour]
    if len(values) == 1:
        luminance = values[0]
    elif len(values) == 3:
        luminance = 0.299 * values[0] + 0.587 * values[1] + 0.114 * values[2]
    elif len(values) == 4:
        c, m, y, k = values
        luminance = (1 - k) * (0.299 * (1 - c) + 0.587 * (1 - m) + 0.114 * (1 - y))
    else:
        return False
    return luminance > _LIGHT
