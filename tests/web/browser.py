"""Headless Debian Chromium driven by Playwright for Python, for the page's browser tests.

A test module calls ``require_browser()`` at import: it skips the module, saying why, where
``/usr/bin/chromium`` or playwright is missing (``make test`` installs both; `playwright install` is
never run, since it downloads a browser of its own from a CDN). The ``browser`` and ``shots``
fixtures are in this folder's conftest.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
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
        "playwright.sync_api",
        reason="playwright is in the dev group: pip install --group dev (make test does)",
    )
    # expect()'s own default is 5 s, which a loaded two-core machine passed while the Results view
    # loaded its files: every assertion waits as long as any other wait in a page, ending when true.
    api.expect.set_options(timeout=WAIT_MS)
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


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # one line per request is noise here
        pass


@contextmanager
def serve_folder(folder: Path) -> Iterator[str]:
    """``folder`` (a built static site) on 127.0.0.1, as its base URL; the server listens once it is
    constructed, so no wait is needed."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(_Quiet, directory=str(folder)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
