"""The 10-K parse corpus (corpora/10k/): its committed PDFs and ground truth, and the script that builds them.

Only the last test renders (it needs WeasyPrint, which `make test` does not install); the rest read the
committed files or run the script's HTML and truth code on a tiny hand-written filing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import json
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pdfplumber
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpora" / "10k"
SCRIPT = ROOT / "scripts" / "build_10k.py"
COMPANIES = ("aapl", "goog")
LAYOUTS = ("one-column", "two-column")
PDF_ROW = re.compile(
    r"^\| `pdf/(?P<name>[\w/-]+\.pdf)` \| (?P<pages>\d+) \| [\d,]+ \| `(?P<sha256>[0-9a-f]{64})` \|$"
)


@pytest.fixture(scope="module")
def script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("build_10k", SCRIPT)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {SCRIPT}")
    module = importlib.util.module_from_spec(spec)
    sys.modules["build_10k"] = module  # its dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def _truth(company: str) -> dict[str, Any]:
    truth: dict[str, Any] = json.loads((CORPUS / "truth" / f"{company}.json").read_text(encoding="utf-8"))
    return truth


def _readme_pdfs() -> dict[str, re.Match[str]]:
    lines = (CORPUS / "README.md").read_text(encoding="utf-8").splitlines()
    return {m["name"]: m for m in map(PDF_ROW.match, lines) if m}


# ---- the committed corpus


def test_the_pdf_folder_holds_the_four_renders_and_nothing_else() -> None:
    expected = {f"{layout}/{company}.pdf" for company in COMPANIES for layout in LAYOUTS}
    found = {p.relative_to(CORPUS / "pdf").as_posix() for p in (CORPUS / "pdf").rglob("*") if p.is_file()}
    assert found == expected
    assert set(_readme_pdfs()) == expected


@pytest.mark.parametrize("name", [f"{layout}/{c}.pdf" for c in COMPANIES for layout in LAYOUTS])
def test_each_pdf_opens_with_the_pages_and_bytes_the_readme_states(name: str) -> None:
    stated = _readme_pdfs()[name]
    path = CORPUS / "pdf" / name
    assert hashlib.sha256(path.read_bytes()).hexdigest() == stated["sha256"]
    with pdfplumber.open(path) as pdf:
        assert len(pdf.pages) == int(stated["pages"])
        assert (pdf.pages[0].width, pdf.pages[0].height) == pytest.approx((612, 792), abs=0.5)  # Letter


@pytest.mark.parametrize("company", COMPANIES)
def test_truth_has_its_keys_and_its_text_holds_no_furniture(company: str) -> None:
    truth = _truth(company)
    assert list(truth) == ["source", "sha256", "sections", "text", "tables", "furniture"]
    assert truth["source"].startswith(company) and re.fullmatch(r"[0-9a-f]{64}", truth["sha256"])
    assert len(truth["sections"]) == 4 and len(truth["furniture"]) > 10
    text: str = truth["text"]
    assert (CORPUS / "truth" / f"{company}.txt").read_text(encoding="utf-8") == text + "\n"
    lines = set(text.splitlines())
    for furniture in truth["furniture"]:
        # A bare page number ("12.", Alphabet's footer) is also a substring of prose ("$12.3 billion"):
        # what must not be in the text is a line that is only that number.
        assert (furniture not in lines) if furniture.rstrip(".").isdigit() else (furniture not in text)


@pytest.mark.parametrize("company", COMPANIES)
def test_every_table_is_in_the_text_row_by_row_in_order(company: str) -> None:
    truth = _truth(company)
    assert len(truth["tables"]) > 10
    position = 0
    for table in truth["tables"]:
        rows = table["rows"]
        assert rows and all(
            cell.strip() == cell and cell not in {"", "$", "%", ")"} for r in rows for cell in r
        )
        block = "\n".join(" | ".join(row) for row in rows)
        found = truth["text"].find(block, position)
        assert found >= 0, block[:200]
        position = found + len(block)


def _in_two_columns(page: Any) -> bool:
    """Words on both sides of the page's vertical middle and (almost) none across it, between the running
    header and the footers."""
    middle = page.width / 2
    words = [w for w in page.extract_words() if 60 < w["top"] < page.height - 100]
    left = sum(w["x1"] < middle - 4 for w in words)
    right = sum(w["x0"] > middle + 4 for w in words)
    across = len(words) - left - right
    return bool(left > 100 and right > 100 and across <= 0.02 * len(words))


@pytest.mark.parametrize("company", COMPANIES)
def test_the_two_column_render_sets_prose_in_two_columns(company: str) -> None:
    pages = (9, 16)  # prose pages of Item 1A in both filings
    with pdfplumber.open(CORPUS / "pdf" / "two-column" / f"{company}.pdf") as pdf:
        assert all(_in_two_columns(pdf.pages[n - 1]) for n in pages)
    with pdfplumber.open(CORPUS / "pdf" / "one-column" / f"{company}.pdf") as pdf:
        assert not any(_in_two_columns(pdf.pages[n - 1]) for n in pages)


# ---- the script, on a tiny filing

FOOTER = (
    '<div style="height:42.75pt;position:relative;width:100%">'
    '<div style="bottom:0;position:absolute;width:100%">'
    '<div style="text-align:center"><span>Tiny Co. | 2024 Form 10-K | {n}</span></div></div></div>'
)
HEADER = '<div style="min-height:42.75pt;width:100%"><div><span><br/></span></div></div>'
TINY = (
    '<html><head><title>tiny-20241231</title></head><body><div style="display:none"><ix:header>hidden fact'
    "</ix:header></div>"
    '<div><table><tr><td><a href="#i1">Item 1.</a></td><td>Business</td></tr></table></div>'
    '<div><span>Item 1.</span><span style="padding-left:11.82pt">Business</span></div>'
    "<div><span>We make&#160;&#160;tiny   things.</span></div>"
    + FOOTER.format(n=1)
    + '<hr style="page-break-after:always"/>'
    + HEADER
    + "<div><table>"
    '<tr><td style="width:50%"/><td/><td/></tr>'
    "<tr><td>Net sales</td><td>$</td><td>391,035</td><td>&#160;</td></tr>"
    "<tr><td>Change</td><td>(1,234</td><td>)</td><td>12 %</td></tr>"
    "</table></div>"
    + FOOTER.format(n=2)
    + '<hr style="page-break-after:always"/>'
    + HEADER
    + "<div><span>Item 1A.&#160;&#160;Risk Factors</span></div><div><span>Things may go wrong.</span></div>"
    "</body></html>"
)


@pytest.mark.parametrize(
    ("raw", "cell"),
    [
        ("$", ""),
        (" ) ", ""),
        ("%", ""),
        (")%", ""),
        ("$ 391,035", "391,035"),
        ("(1,234", "(1,234)"),
        ("(8)%", "(8)"),
        ("12 %", "12"),
        ("$ —", "—"),
        ("Net  sales", "Net sales"),
        ("(In millions)", "(In millions)"),
    ],
)
def test_cells_are_normalised_and_the_rule_is_idempotent(script: ModuleType, raw: str, cell: str) -> None:
    assert script.normalise_cell(raw) == cell
    assert script.normalise_cell(cell) == cell


def test_a_section_is_cut_at_its_heading_and_its_furniture_kept_out_of_the_text(script: ModuleType) -> None:
    children = script.body_children(script.parse_html(TINY))
    part = script.select(children, script.Section("1", "Item 1. Business"))
    assert script.filed_pages(part) == (1, 2)
    assert "".join(TINY[n.start : n.end] for n in part).startswith("<div><span>Item 1.</span>")
    collector, furniture = script.collect([part])
    assert collector.blocks == [
        "Item 1. Business",
        "We make tiny things.",
        "Net sales | 391,035\nChange | (1,234) | 12",
    ]
    assert collector.tables == [[["Net sales", "391,035"], ["Change", "(1,234)", "12"]]]
    assert furniture == ["Tiny Co. | 2024 Form 10-K | 1", "Tiny Co. | 2024 Form 10-K | 2"]


def test_the_script_says_plainly_when_the_filings_are_absent(
    script: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert script.main(["--source", str(tmp_path), "--out", str(tmp_path / "out")]) == 2
    error = capsys.readouterr().err
    assert (
        error.startswith("error: aapl-20240928.htm, goog-20241231.htm not found") and "Traceback" not in error
    )
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
@pytest.mark.parametrize("layout", LAYOUTS)
def test_the_render_function_draws_a_section_pdfplumber_reads_back(script: ModuleType, layout: str) -> None:
    try:
        importlib.import_module("weasyprint")
    except (ImportError, OSError):  # OSError: installed, but Debian's pango libraries are not
        pytest.skip("weasyprint renders the corpus only (make corpus-10k installs it)")
    children = script.body_children(script.parse_html(TINY))
    part = script.select(children, script.Section("1", "Item 1. Business"))
    pdf = script.render_pdf(script.compose("Tiny Co. Form 10-K", TINY, [part], layout))
    with pdfplumber.open(io.BytesIO(pdf)) as document:
        text = "\n".join(page.extract_text() for page in document.pages)
        assert len(document.pages) == 2  # the filing's page break is kept
    for expected in ("Tiny Co. Form 10-K", "Page 1 of 2", "tiny things.", "391,035", "| 2024 Form 10-K | 2"):
        assert expected in text


@pytest.mark.slow
def test_the_render_refuses_remote_urls(script: ModuleType, caplog: pytest.LogCaptureFixture) -> None:
    try:
        importlib.import_module("weasyprint")
    except (ImportError, OSError):
        pytest.skip("weasyprint renders the corpus only (make corpus-10k installs it)")
    html = "<link rel='stylesheet' href='https://example.com/a.css'><img src='http://example.com/b.png'>hi"
    script.render_pdf(html)
    refused = [r.getMessage() for r in caplog.records if "offline render: refusing" in r.getMessage()]
    assert len(refused) == 2 and "https://example.com/a.css" in refused[0]


@pytest.mark.parametrize("name", [f"{layout}/{c}.pdf" for c in COMPANIES for layout in LAYOUTS])
def test_the_truth_lists_the_page_footer_every_page_of_the_render_prints(name: str) -> None:
    """Each page's "Page N of M" footer is furniture the pages print: unlisted, its leaks went uncounted
    (and its numbers were counted as the filing's own page numbers)."""
    from clear_rag.parse.pdfium import document_text

    count, printed = document_text((CORPUS / "pdf" / name).read_bytes(), source=name)
    footers = [f"Page {n} of {count}" for n in range(1, count + 1)]
    assert all(footer in printed for footer in footers)
    listed = [
        f for f in _truth(name.split("/")[1].removesuffix(".pdf"))["furniture"] if f.startswith("Page ")
    ]
    assert listed == footers
