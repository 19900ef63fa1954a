"""The published site as a reader sees it: the repository's own mkdocs.yml built strictly into a
temporary folder, served by a plain file server, and read in headless Chromium.

Each suite page shows its tables and every plot it links (the SVG loads and has a size); the
performance page shows the benchmark ratios; the overview shows the page's screenshots. With
``CLEAR_RAG_SCREENSHOTS`` set (``make screenshots``) the suite page and the performance page are
photographed into ``site/img/``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import open_page, require_browser, serve_folder

sync_api = require_browser()

REPO = Path(__file__).resolve().parents[2]
SUITES = sorted(p.stem for p in (REPO / "site" / "suites").glob("*.md"))


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    built = tmp_path_factory.mktemp("site") / "built"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(built)],
        cwd=REPO,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    with serve_folder(built) as url:
        yield url


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from open_page(browser, width=1400, height=1000)


def _images_loaded(page: Any) -> list[dict[str, Any]]:
    """Every image of the page's article once each has loaded (or failed: then its width is 0)."""
    sync_api.expect(page.locator("article img").first).to_be_visible()
    page.wait_for_function("() => [...document.querySelectorAll('article img')].every(i => i.complete)")
    found: list[dict[str, Any]] = page.locator("article img").evaluate_all(
        "imgs => imgs.map(i => ({src: i.getAttribute('src'), width: i.naturalWidth}))"
    )
    return found


@pytest.mark.parametrize("suite", SUITES)
def test_each_suite_page_shows_its_tables_and_every_plot(page: Any, base: str, suite: str) -> None:
    page.goto(f"{base}/suites/{suite}/")
    sync_api.expect(page.locator("article table").first).to_be_visible()
    images = _images_loaded(page)
    source = (REPO / "site" / "suites" / f"{suite}.md").read_text(encoding="utf-8")
    assert all(image["width"] > 0 for image in images), images
    # every plot block drawn; any other picture is a screenshot of the app
    plots = [image for image in images if image["src"].startswith("../../plots/")]
    assert len(plots) == source.count(" plot "), images
    assert all(image["src"].startswith("../../img/") for image in images if image not in plots)
    sync_api.expect(page.locator("article")).to_contain_text("What these numbers support")


def test_the_suite_and_performance_pages_photographed(page: Any, base: str, shots: Path) -> None:
    page.goto(f"{base}/suites/tech/")
    _images_loaded(page)
    # The rows' table ends and their plot begins: both in one picture.
    page.locator("article img").first.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, -320)")
    page.screenshot(path=str(shots / "site-suite.png"), animations="disabled")
    page.goto(f"{base}/performance/")
    images = _images_loaded(page)
    assert [i["src"] for i in images] == [
        "../plots/bench-retrieval-ratios.svg",
        "../plots/bench-scale-curves.svg",
    ]
    sync_api.expect(page.locator("article table").first).to_contain_text("bm25s-numba")
    page.screenshot(path=str(shots / "site-performance.png"), animations="disabled")


def test_the_overview_shows_the_pages_screenshots(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    images = _images_loaded(page)
    assert [i["src"] for i in images] == ["img/chat.png", "img/rankflow.png"]
    assert all(i["width"] > 0 for i in images)
