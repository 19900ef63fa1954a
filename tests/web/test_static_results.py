"""The Results view on the static site, in a real browser: a site built by ``mkdocs build --strict`` with
the site hook from a toy project's results (a suite run for real on the fakes, a hand-made file, and
one whose rows are named with every character a URL trips on), served by a plain HTTP file server,
no app behind it.

What a person would check by hand: the site's page links to the view; a row pinned reads every other
row against it with the exported figures; a cell opens the questions behind it, each with its words; a
trace diff says it needs `clear-rag serve` with the stores, once, where the diff would be, above the
ranks the file records; the view opened from disk says what serves it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from clear_rag.results.files import write_result
from tests.toy import suite_yaml
from tests.web.browser import open_page, require_browser, serve_folder
from tests.web.projects import ODD_ROWS, odd_result, results_project

sync_api = require_browser()

REPO = Path(__file__).resolve().parents[2]
HOOK = REPO / "clear_rag" / "report" / "site_hook.py"
ODD_FILE = "odd names, 100% (v2)"
SUITE = suite_yaml(
    "toy",
    "{name: bm25, set: {retrievers: [keyword]}}",
    "{name: hybrid}",
    "{name: hybrid + rerank, set: {rerank: true, reranker: lexical}}",
)
CONFIG = f"""site_name: clear-rag static view test
docs_dir: pages
site_dir: built
theme:
  name: material
  font: false
plugins:
  - search
hooks:
  - {json.dumps(str(HOOK))}
nav:
  - Home: index.md
  - Results view: results.md
"""


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site of a toy project (mkdocs.yml beside its results/), built as `make site` builds it."""
    root = results_project(tmp_path_factory.mktemp("static-site"), SUITE)
    write_result(root / "results" / f"{ODD_FILE}.json", odd_result())
    (root / "pages").mkdir()
    (root / "pages" / "index.md").write_text(
        "# Home\n\nSee the [Results view](results.md).\n", encoding="utf-8"
    )
    shutil.copy(REPO / "site" / "results.md", root / "pages" / "results.md")  # its link checked by --strict
    (root / "mkdocs.yml").write_text(CONFIG, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "-f", str(root / "mkdocs.yml")],
        cwd=REPO,  # not the project: the hook finds results/ from mkdocs.yml, not from the working folder
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and not done.stdout + done.stderr, done.stdout + done.stderr
    return root / "built"


@pytest.fixture(scope="module")
def base(built: Path) -> Iterator[str]:
    with serve_folder(built) as url:
        yield url


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from open_page(browser, width=1500, height=1000)


def exported(built: Path, file: str, kind: str, row: str) -> Any:
    """The exported ``kind`` (``pinned`` or ``moves``) of ``row`` of ``file``, found by their places in
    index.json as the page finds them."""
    folder = built / "view" / "data"
    files = json.loads((folder / "index.json").read_text(encoding="utf-8"))["files"]
    at = next(n for n, f in enumerate(files) if f["file"] == file)
    path = folder / str(at) / kind / f"{files[at]['rows'].index(row)}.json"
    return json.loads(path.read_text(encoding="utf-8"))


def attr(name: str, value: str) -> str:
    """A CSS attribute selector for any value (a JSON string is a CSS string)."""
    return f"[{name}={json.dumps(value)}]"


def open_file(page: Any, base: str, file: str, baseline: str) -> None:
    page.goto(f"{base}/view/results.html#file={quote(file, safe='')}")
    sync_api.expect(page.locator("#results-view")).to_have_attribute("data-file", file)
    sync_api.expect(page.locator("#results-pinned")).to_have_attribute("data-pinned", baseline)
    sync_api.expect(page.locator("#pinned-table tbody tr").first).to_be_visible()


def pin(page: Any, row: str) -> None:
    page.check(f"#results-rows input[name='pin']{attr('value', row)}")
    sync_api.expect(page.locator("#results-pinned")).to_have_attribute("data-pinned", row)


def test_the_site_page_links_to_the_view_and_the_view_back_to_the_site(page: Any, base: str) -> None:
    page.goto(f"{base}/results/")
    sync_api.expect(page.locator(".md-search")).to_have_count(1)  # the theme's page, with its search
    page.click("a[href$='view/results.html']")
    page.wait_for_url(f"{base}/view/results.html")
    sync_api.expect(page.locator("#results-files button.file")).to_have_count(3)
    back = page.locator("header.top nav.views a").first
    sync_api.expect(back).to_have_text("Site")
    back.click()
    page.wait_for_url(f"{base}/")


def test_a_pinned_row_reads_the_others_against_it_down_to_the_trace_message(
    page: Any, base: str, built: Path
) -> None:
    open_file(page, base, "toy", "hybrid")
    pin(page, "bm25")
    read = {r["name"]: r for r in exported(built, "toy", "pinned", "bm25")["rows"]}
    names = page.locator("#pinned-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.row)")
    assert names == ["hybrid", "hybrid + rerank"] == list(read)
    for row, entry in read.items():
        for metric, c in entry["comparisons"].items():
            cell = page.locator(f"#pinned-table button.diff{attr('data-row', row)}[data-metric='{metric}']")
            sign = "+" if c["difference"] > 0 else "-" if c["difference"] < 0 else ""
            sync_api.expect(cell.locator("[data-field='difference']")).to_have_text(
                f"{sign}{abs(c['difference']):.3f}"
            )
            sync_api.expect(cell).to_have_attribute(
                "data-noise", str(c["ci_low"] <= 0 <= c["ci_high"]).lower()
            )

    # a cell with questions behind it: the questions are the exported ones
    behind = exported(built, "toy", "moves", "bm25")["rows"]
    row, metric, found = next((r, m, f) for r, ms in behind.items() for m, f in ms.items() if f["moves"])
    page.click(f"#pinned-table button.diff{attr('data-row', row)}[data-metric='{metric}']")
    moves = page.locator("#results-moves")
    sync_api.expect(moves).to_have_attribute("data-metric", metric)
    sync_api.expect(moves).to_have_attribute("data-row", row)
    sync_api.expect(moves.locator("tbody tr")).to_have_count(len(found["moves"]))
    first = found["moves"][0]
    line = moves.locator(f"tr[data-question='{first['id']}']")
    sync_api.expect(line.locator("[data-field='verdict-row']")).to_have_text(first["row"]["verdict"] or "—")

    # the trace diff needs the stores: said once, where the diff would be
    line.locator("button.open-trace").click()
    missing = page.locator("#trace-diff .trace-missing")
    sync_api.expect(missing).to_have_count(1)
    sync_api.expect(missing).to_have_attribute("data-side", "both")
    sync_api.expect(missing).to_contain_text("needs `clear-rag serve` with the stores")
    assert page.locator("#trace-diff svg g.node").count() == 0


def test_odd_row_names_pin_and_open_like_any_other(page: Any, base: str, built: Path) -> None:
    open_file(page, base, ODD_FILE, ODD_ROWS["hybrid"])
    # the skipped row is listed as one (an array handed to Node.append() printed "[object HTMLLIElement]")
    skipped = page.locator("#results-skipped li")
    sync_api.expect(skipped).to_have_text(["dense (50%) was skipped: the embedder is not installed"])
    for pinned, other in ((ODD_ROWS["bm25"], "__proto__"), ("__proto__", ODD_ROWS["hybrid"])):
        pin(page, pinned)
        cell = page.locator(f"#pinned-table button.diff{attr('data-row', other)}[data-metric='ndcg@10']")
        cell.click()
        moves = page.locator("#results-moves")
        sync_api.expect(moves).to_have_attribute("data-row", other)
        found = exported(built, ODD_FILE, "moves", pinned)["rows"][other]["ndcg@10"]
        sync_api.expect(moves.locator("#moves-body > p").first).to_have_text(
            f"{found['up']} went up and {found['down']} went down; "
            "the questions whose ndcg@10 is the same in both rows are left out."
        )
        sync_api.expect(moves.locator("tbody tr")).to_have_count(len(found["moves"]))


def test_the_questions_read_with_their_words_and_a_diff_shows_what_the_file_records(
    page: Any, base: str, built: Path
) -> None:
    open_file(page, base, "toy", "hybrid")
    folder = built / "view" / "data"
    files = json.loads((folder / "index.json").read_text(encoding="utf-8"))["files"]
    at = next(n for n, f in enumerate(files) if f["file"] == "toy")
    words = json.loads((folder / str(at) / "questions.json").read_text(encoding="utf-8"))
    assert words["questions"] and words["unavailable"] is None
    by_id = {q["id"]: q for q in words["questions"]}
    behind = exported(built, "toy", "moves", "hybrid")["rows"]
    row, metric, found = next((r, m, f) for r, ms in behind.items() for m, f in ms.items() if f["moves"])
    page.click(f"#pinned-table button.diff{attr('data-row', row)}[data-metric='{metric}']")
    first = found["moves"][0]
    line = page.locator(f"#results-moves tr[data-question='{first['id']}']")
    sync_api.expect(line.locator("[data-field='question']")).to_have_text(by_id[first["id"]]["question"])
    sync_api.expect(line.locator("[data-field='quote'] q")).to_have_text(
        [q["quote"] for q in by_id[first["id"]]["quotes"]]
    )
    # no stores here, said once; beneath it the covering ranks the exported file records
    line.locator("button.open-trace").click()
    sync_api.expect(page.locator("#trace-diff .trace-missing")).to_have_count(1)
    document = json.loads((folder / str(at) / "document.json").read_text(encoding="utf-8"))
    ranks = {
        side: next(q for q in r["questions"] if q["id"] == first["id"])["lost"]["ranks"]
        for r in document["rows"]
        for side, name in (("pinned", "hybrid"), ("row", row))
        if r["name"] == name
    }
    for side, recorded in ranks.items():
        for stage, rank in recorded.items():
            cell = page.locator(f"#trace-diff .parting tr[data-stage='{stage}'] td[data-side='{side}']")
            sync_api.expect(cell).to_have_text("—" if rank is None else f"#{rank}")
    sync_api.expect(page.locator("#trace-diff .parting .missing-note")).to_contain_text("is missing")


def test_opened_from_disk_the_view_says_what_serves_it(page: Any, built: Path) -> None:
    """The site's copy opened as a file: no module runs there, and the page says how to serve it
    rather than "Loading…" forever."""
    page.goto((built / "view" / "results.html").as_uri())
    status = page.locator("#results-status")
    sync_api.expect(status).to_have_attribute("data-state", "not-served")
    sync_api.expect(status).to_contain_text("`mkdocs serve`")
    sync_api.expect(status).to_contain_text("view/results.html")
    sync_api.expect(status).not_to_contain_text("Loading")
    sync_api.expect(page.locator("#results-unserved")).to_have_count(0)
