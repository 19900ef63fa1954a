"""The table a layout rule found, rendered as the HTML parser renders a ``<table>``: one row per
line, every cell of it, an empty one as nothing, separated by " | ". Its cells are kept in the
block's meta as JSON.

Ruled tables (drawn cell grids) are found by ``ruled``, tables without rules (words aligned on
shared columns) by ``aligned``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Table:
    x0: float
    top: float
    x1: float
    bottom: float
    rows: tuple[tuple[str, ...], ...]
    ruled: bool

    def render(self) -> str:
        """One row per line, its cells separated by " | "; rows with no text left out.

        An empty cell stays, as nothing between two separators ("Rent | 1,000 |  | 1,200"), as an
        empty ``<td>`` does in the HTML parser: dropping it (as this did before) shifted the row's
        later cells left, under the wrong column heads.
        """
        return "\n".join(" | ".join(row) for row in self.rows if any(row))

    def meta(self) -> dict[str, str]:
        return {
            "rows": str(sum(1 for row in self.rows if any(row))),
            "columns": str(max((len(row) for row in self.rows), default=0)),
            "ruled": "yes" if self.ruled else "no",
            "cells": json.dumps([list(row) for row in self.rows if any(row)], ensure_ascii=False),
        }
