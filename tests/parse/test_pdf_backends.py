"""The optional PDF backends, docling and marker: a clear error while absent, blocks when present.

Neither package is installed in the test environment; the tests that need one skip, and the
mapping from Docling's items to blocks is checked on stand-in items that need no Docling.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import SimpleNamespace

import pytest

from clear_rag.chunk.factory import make_chunker
from clear_rag.errors import ModelMissing
from clear_rag.ingest import ingest
from clear_rag.parse.docling import pieces_from_docling
from clear_rag.parse.pieces import assemble
from clear_rag.parse.registry import get_parser
from clear_rag.store import Store
from clear_rag.tokens import RegexTokenizer
from tests.parse.pdfs import report_pdf
from tests.parse.test_parse_properties import check_blocks

BACKENDS = {"docling": ("docling", "docling"), "marker": ("marker", "marker-pdf")}


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_an_absent_backend_names_the_extra_and_says_it_downloads_models(backend: str) -> None:
    module, package = BACKENDS[backend]
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{package} is installed")
    with pytest.raises(ModelMissing) as caught:
        get_parser("pdf", backend)
    message = str(caught.value)
    assert message.startswith(f"backend={backend!r}: the {backend} PDF backend needs the {package} package")
    assert f"pip install 'clear-rag[{backend}]'" in message
    assert "downloads" in message and "on first use" in message


def test_ingesting_with_an_absent_backend_fails_each_pdf_by_name_and_goes_on(tmp_path: Path) -> None:
    if importlib.util.find_spec("docling") is not None:
        pytest.skip("docling is installed")
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(report_pdf())
    (folder / "notes.txt").write_text("Plain notes.", encoding="utf-8")
    with Store(tmp_path / "s", root=tmp_path) as store:
        report = ingest(
            store,
            [folder],
            make_chunker("structural", size=32, tokenizer=RegexTokenizer()),
            backends={"pdf": "docling"},
        )
    outcomes = {Path(o.path).name: o for o in report.outcomes}
    assert outcomes["notes.txt"].action == "added"
    assert outcomes["report.pdf"].action == "failed"
    assert "clear-rag[docling]" in (outcomes["report.pdf"].message or "")


def _item(label: str, text: str = "", page: int = 1, **more: object) -> SimpleNamespace:
    return SimpleNamespace(
        label=SimpleNamespace(value=label),
        text=text,
        prov=[SimpleNamespace(page_no=page)],
        content_layer=SimpleNamespace(value="furniture" if label.startswith("page_") else "body"),
        **more,
    )


def _cell(text: str) -> SimpleNamespace:
    return SimpleNamespace(text=text)


def test_docling_items_become_typed_blocks_with_furniture_last() -> None:
    grid = [
        [_cell("Segment"), _cell("Revenue"), _cell("Revenue")],
        [_cell("Industrial"), _cell("2,150"), _cell("")],
    ]
    items = [
        _item("page_header", "ACME Corp | 2024 Annual Report"),
        _item("title", "Annual Report"),
        _item("section_header", "Results", level=1),
        _item("text", "Revenue grew."),
        _item("list_item", "Cash rose", marker="•"),
        _item("list_item", "Debt fell", marker="•"),
        _item("table", data=SimpleNamespace(grid=grid)),
        _item("picture"),
        _item("page_footer", "1", page=1),
        _item("text", "On page two.", page=2),
    ]
    text, blocks = assemble(pieces_from_docling(items))
    got = [
        (block.kind, block.level, text[block.start : block.end], block.meta.get("page")) for block in blocks
    ]
    assert got == [
        ("heading", 1, "Annual Report", "1"),
        ("heading", 2, "Results", "1"),
        ("paragraph", 0, "Revenue grew.", "1"),
        ("list", 1, "• Cash rose\n• Debt fell", "1"),
        ("table", 0, "Segment | Revenue\nIndustrial | 2,150", "1"),  # a spanning cell once
        ("paragraph", 0, "On page two.", "2"),
        ("furniture", 0, "ACME Corp | 2024 Annual Report", "1"),
        ("furniture", 0, "1", "1"),
    ]


@pytest.mark.slow
@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_a_present_backend_parses_the_report(backend: str) -> None:
    pytest.importorskip(BACKENDS[backend][0])
    parsed = get_parser("pdf", backend).parse(report_pdf(), source="report.pdf")
    check_blocks(parsed)
    assert "Alpha revenue" in parsed.text and parsed.media_type == "application/pdf"
