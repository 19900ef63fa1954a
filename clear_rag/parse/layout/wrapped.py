"""Row labels wrapped over several lines, joined into the row whose values they name.

A filing's long row label ("Preferred stock, $0.001 par value per share, 100 shares authorized; no
shares issued and" over "outstanding  0  0") is set on two or more lines, its values on the last;
read line by line it made a row of its own for every line but the last, a label cut in pieces.
"""

from __future__ import annotations

from collections.abc import Sequence

from clear_rag.parse.layout.geometry import Line
from clear_rag.parse.layout.lines import join_lines


def join_wrapped(
    rows: Sequence[tuple[str, ...]], lines: Sequence[Line], align: float
) -> list[tuple[str, ...]]:
    """``rows`` (one per line of ``lines``) with wrapped labels joined into their row.

    Rule: a row holding a label alone, not ending in ":" (a section label, "Current assets:",
    stands alone), directly above a row with values, or above another such label line that is,
    starting within ``align`` points of the next line's left edge, and followed by a line whose
    label does not start with a capital (a section label such as "Operating activities" over "Net
    income" is no wrapped line), is the first part of that row's label; the parts join as a
    paragraph's lines do (``lines.join_lines``).
    """
    out = [list(row) for row in rows]
    keep = [True] * len(rows)
    target: int | None = None  # the row with values the lines below the current one went into
    for i in reversed(range(len(rows))):
        label_only = bool(rows[i][0]) and not any(rows[i][1:])
        if not label_only:
            target = i if rows[i][0] else None
            continue
        if (
            target is not None
            and not rows[i][0].endswith(":")
            and abs(lines[i].x0 - lines[i + 1].x0) <= align
            and not rows[i + 1][0][:1].isupper()
            and all(not keep[k] for k in range(i + 1, target))
        ):
            out[target][0] = join_lines([rows[i][0], out[target][0]])
            keep[i] = False
        else:
            target = None
    return [tuple(row) for row, kept in zip(out, keep, strict=True) if kept]
