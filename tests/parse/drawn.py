"""The parse suite's drawn cases (``clear_rag.eval.drawn``) as the layout tests use them: drawn, or
the test skipped with the reason (DejaVu's fonts or reportlab missing, and how to install them)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from clear_rag.errors import ModelMissing
from clear_rag.eval.drawn.drawn import Drawn


def draw(build: Callable[[], Drawn]) -> Drawn:
    """``build()``, or a skip naming what is missing."""
    try:
        return build()
    except ModelMissing as err:
        pytest.skip(str(err))
