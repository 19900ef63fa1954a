"""Headless Debian Chromium driven by Playwright for Python, for the page's browser tests.

A test module calls ``require_browser()`` at import: it skips the module, saying why, where
``/usr/bin/chromium`` or playwright is missing (``make test`` installs both; `playwright install` is
never run, since it downloads a browser of its own from a CDN). The ``browser`` and ``shots``
fixtures are in this folder's conftest.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
WAIT_MS = 30_000  # bound on any wait in a page; each ends as soon as what it waits for is there
# The README's screenshots are written to site/img/ by `make screenshots`, which sets this; other
# runs write them to a temporary folder, so that `make test` leaves the tree as it was (a picture
# holds timings and trace ids, which differ on every run).
SHOTS_ENV = "CLEAR_RAG_SCREENSHOTS"


def require_browser() -> ModuleType:
    """Playwright's sync API, or a skip of the calling test module with the reason."""
    if not CHROMIUM.exists():
        pytest.skip(
            f"{CHROMIUM} is missing: `make test` installs Debian's chromium (apt-get install -y chromium)",
            allow_module_level=True,
        )
    api: ModuleType = pytest.importorskip(
        "playwright.sync_api", reason="playwright is in the dev extra: pip install -e '.[dev]'"
    )
    return api


def open_page(browser: Any, *, width: int, height: int) -> Iterator[Any]:
    """A fresh page of ``width`` x ``height``; the test fails if the page threw an error."""
    context = browser.new_context(viewport={"width": width, "height": height})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    yield opened
    context.close()
    assert not errors, f"the page threw: {errors}"
