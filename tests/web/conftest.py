"""The app's tests run it for real on 127.0.0.1 (``clear_rag.web.serving``) and read its stream; the
browser tests share one headless Chromium per module (``tests.web.browser``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clear_rag.web.serving import StreamEvent, read_events, serving
from tests.web.browser import CHROMIUM, SHOTS_ENV, require_browser

SseEvent = StreamEvent

__all__ = ["SseEvent", "serving", "sse_events"]


def sse_events(response: httpx.Response) -> Iterator[StreamEvent]:
    """The events of a streamed ``httpx`` response as they arrive."""
    return read_events(response.iter_lines())


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    folder = Path(os.environ[SHOTS_ENV]) if os.environ.get(SHOTS_ENV) else tmp_path / "img"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = require_browser()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            launched.close()
