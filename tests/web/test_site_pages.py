"""The published site as a reader sees it: the repository's own mkdocs.yml built strictly into a
temporary folder, served by a plain file server, and read in headless Chromium.

Each suite page shows its tables and every plot it links (the SVG loads and has a size); the
performance page shows the benchmark ratios; the overview shows the page's screenshots. The site
follows the system's light or dark scheme, and axe-core finds nothing on the overview and a suite page
in either, at a laptop's and a phone's size. With ``CLEAR_RAG_SCREENSHOTS`` set (``make screenshots``)
the suite page and the performance page are photographed into ``site/img/``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import WAIT_MS, open_page, require_browser, serve_folder

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
    # every plot the page's source draws, in its order, and the benchmarks' first two among them
    source = (REPO / "site" / "performance.md").read_text(encoding="utf-8")
    drawn = [f"../{src}" for src in re.findall(r"\]\((plots/[^)]+\.svg)\)", source)]
    assert [i["src"] for i in images] == drawn
    assert drawn[:2] == ["../plots/bench-retrieval-ratios.svg", "../plots/bench-dense-ratios.svg"]
    sync_api.expect(page.locator("article table").first).to_contain_text("bm25s-numba")
    page.screenshot(path=str(shots / "site-performance.png"), animations="disabled")


def test_the_overview_shows_the_pages_screenshots(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    images = _images_loaded(page)
    assert [i["src"] for i in images] == [
        "img/chat.png",
        "img/rankflow-4-1440-light.png",
        "img/rankflow-14-390-dark.png",
        "img/answer-side-390-dark.png",
    ]
    assert all(i["width"] > 0 for i in images)


# Pages with tables (one wider than a phone, and at 1440 px too) and plots.
AXE_PAGES = ("", "suites/tech/")


def _open(browser: Any, width: int, height: int, scheme: str) -> Any:
    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    return context, page


def _settled(page: Any) -> None:
    """Images loaded, and the site's script (site/javascripts/extra.js) has named the search dialog
    and every table's scroller, which Material wraps around each table once the page has loaded."""
    _images_loaded(page)
    page.wait_for_function(
        """() => document.querySelector('.md-search[aria-label]') !== null
              && [...document.querySelectorAll('article table')].every(
                   t => t.closest('.md-typeset__scrollwrap[role="region"]') !== null)"""
    )


def _luminance(css: str) -> float:
    """Relative luminance (WCAG 2) of a computed ``rgb(r, g, b)`` colour."""
    channels = [int(c) / 255 for c in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_overview_and_a_suite_page_pass_axe(
    browser: Any, base: str, shots: Path, width: int, height: int, scheme: str
) -> None:
    """axe-core's rules (contrast, names, table headers, alt text, focusable scrolling regions) find
    nothing, with no rule or node excluded; the suite page photographed at each size and scheme."""
    from axe_playwright_python.sync_playwright import Axe

    context, page = _open(browser, width, height, scheme)
    try:
        for path in AXE_PAGES:
            page.goto(f"{base}/{path}")
            _settled(page)
            found = Axe().run(page).response["violations"]
            assert [(path, v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []
            if path:  # the suite page, whose tables and plots show what a theme and a width do
                page.screenshot(path=str(shots / f"site-suite-{width}-{scheme}.png"), animations="disabled")
    finally:
        context.close()


def test_the_site_follows_the_dark_scheme_and_its_plots_stay_readable(browser: Any, base: str) -> None:
    """Under a dark system scheme the page is drawn dark (Material's slate) and each plot keeps its own
    light background behind its dark text; the palette toggle switches to light."""
    context, page = _open(browser, 1440, 900, "dark")
    try:
        page.goto(f"{base}/suites/tech/")
        _settled(page)
        assert page.get_attribute("body", "data-md-color-scheme") == "slate"
        assert _luminance(page.evaluate("getComputedStyle(document.body).backgroundColor")) < 0.05
        text = page.locator("article p").first.evaluate("p => getComputedStyle(p).color")
        assert _luminance(text) > 0.4
        # a plot's corner pixel, read back through a canvas (same origin): light on the dark page
        corners: list[list[int]] = page.locator("article img[src$='.svg']").evaluate_all(
            """imgs => imgs.map(img => {
                 const canvas = document.createElement('canvas');
                 canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
                 const drawing = canvas.getContext('2d');
                 drawing.drawImage(img, 0, 0);
                 return [...drawing.getImageData(2, 2, 1, 1).data];
               })"""
        )
        assert corners, "the suite page has no plot"
        assert all(min(rgba[:3]) > 240 and rgba[3] == 255 for rgba in corners), corners
        page.locator("label[title='Switch to light mode']").click()
        sync_api.expect(page.locator("body")).to_have_attribute("data-md-color-scheme", "default")
        assert _luminance(page.evaluate("getComputedStyle(document.body).backgroundColor")) > 0.9
    finally:
        context.close()


def test_a_wide_table_is_one_tab_stop_and_a_narrow_one_none(browser: Any, base: str) -> None:
    """A table wider than the column scrolls sideways in a region reached by the keyboard; a table that
    fits adds no tab stop. Both are named after their section."""
    context, page = _open(browser, 390, 844, "light")
    try:
        page.goto(f"{base}/suites/tech/")
        _settled(page)
        wraps: list[dict[str, Any]] = page.locator(".md-typeset__scrollwrap").evaluate_all(
            """ws => ws.map(w => ({label: w.getAttribute('aria-label'), tabindex: w.getAttribute('tabindex'),
                                  wide: w.scrollWidth > w.clientWidth}))"""
        )
        assert wraps and all(w["label"].startswith("Table: ") for w in wraps), wraps
        assert all((w["tabindex"] == "0") == w["wide"] for w in wraps), wraps
        assert any(w["wide"] for w in wraps), wraps
    finally:
        context.close()
