"""``clear-rag parse-eval`` on a one-page fixture corpus, with a scripted PDF backend registered for it."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import ModelMissing
from clear_rag.parse import registry
from clear_rag.parse.base import Parsed
from clear_rag.types import Block, BlockKind
from tests.parse.pdfs import Page, Text, pdf_bytes

runner = CliRunner()
HEADER = "ACME Corp | Annual Report"
BODY = "Revenue grew in every region.\n\nRegion | 2024\nEurope | 1,234"
TRUTH = {
    "source": "acme.htm",
    "sha256": "0" * 64,
    "sections": ["Item 1. Business"],
    "text": BODY,
    "tables": [{"rows": [["Region", "2024"], ["Europe", "1,234"]]}],
    "furniture": [HEADER, "7"],
}


class ScriptedPdf:
    """Returns the truth's body as a paragraph and a table, then the page's header and number as
    furniture, whatever the bytes: what a perfect parse of the fixture page gives."""

    file_type = "pdf"
    backend = "scripted"
    version = "scripted-1"

    def parse(self, data: bytes, *, source: str) -> Parsed:
        paragraph, table = BODY.split("\n\n")
        text = f"{paragraph}\n\n{table}\n\n{HEADER}\n\n7"
        starts = [0, len(paragraph) + 2, len(paragraph) + len(table) + 4, len(text) - 1]
        kinds: tuple[BlockKind, ...] = ("paragraph", "table", "furniture", "furniture")
        ends = [len(paragraph), starts[1] + len(table), starts[2] + len(HEADER), len(text)]
        return Parsed(
            text,
            tuple(Block(k, s, e) for k, s, e in zip(kinds, starts, ends, strict=True)),
            "application/pdf",
        )


def absent() -> ScriptedPdf:
    raise ModelMissing(
        "needs the absent package, which is not installed", field="backend", value="absent", fix="Install it"
    )


@pytest.fixture
def scripted(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two backends registered for this test only: the scripted one, and ``absent``, which stands for a
    backend whose extra is not installed. The registry's tables are replaced by copies that
    monkeypatch puts back."""
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    monkeypatch.setattr(registry, "_defaults", dict(registry._defaults))
    registry.register("pdf", "scripted", ScriptedPdf)
    registry.register("pdf", "absent", absent)


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """``pdf/acme-one-column.pdf`` (one page: header, paragraph, table rows, page number) and
    ``truth/acme.json``."""
    page = Page(
        (
            Text(72, 40, HEADER, 8),
            Text(72, 100, "Revenue grew in every region."),
            Text(72, 130, "Region 2024"),
            Text(72, 145, "Europe 1,234"),
            Text(300, 760, "7", 8),
        )
    )
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "acme-one-column.pdf").write_bytes(pdf_bytes([page]))
    (tmp_path / "truth").mkdir()
    (tmp_path / "truth" / "acme.json").write_text(json.dumps(TRUTH), encoding="utf-8")
    return tmp_path


def test_writes_the_result_file_with_the_documented_keys(scripted: None, corpus: Path) -> None:
    results = corpus / "results"
    args = ["parse-eval", str(corpus / "pdf"), "--backend", "scripted", "--backend", "absent"]
    result = runner.invoke(app, [*args, "--save-results", "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    assert "backend absent: not run: " in result.output
    assert "acme-one-column.pdf" in result.output
    document = json.loads((results / "parse.json").read_text(encoding="utf-8"))
    assert set(document) >= {"suite", "date", "command", "versions", "backends"}
    assert document["suite"] == "parse"
    assert shlex.split(document["command"]) == [
        "clear-rag",
        *args,
        "--save-results",
        "--results-dir",
        str(results),
    ]
    assert document["versions"]["parsers"] == {"scripted": "scripted-1"}
    assert "pdfplumber" in document["versions"]
    assert set(document["backends"]) == {"scripted", "absent"}
    assert "not installed" in document["backends"]["absent"]["not_run"]
    run = document["backends"]["scripted"]
    assert set(run) == {"version", "overall", "documents"}
    scores = run["documents"]["acme-one-column.pdf"]
    metrics = ["words_precision", "words_recall", "words_f1", "order", "cells_in_tables", "cells_anywhere"]
    assert {k: scores[k] for k in metrics} == dict.fromkeys(metrics, 1.0)
    assert scores["furniture_leakage"] == 0.0
    assert scores["cells_in_rows"] == 1.0
    assert scores["headings_recall"] is scores["headings_precision"] is None  # the truth lists none
    assert scores["pages"] == 1
    assert scores["counts"]["furniture_on_pages"] == 2  # the header and the page number, read by pdfium
    assert {k: run["overall"][k] for k in metrics} == {k: scores[k] for k in metrics}


def test_without_save_results_nothing_is_written(scripted: None, corpus: Path) -> None:
    result = runner.invoke(
        app, ["parse-eval", str(corpus / "pdf"), "--backend", "scripted", "--results-dir", str(corpus / "r")]
    )
    assert result.exit_code == 0, result.output
    assert not (corpus / "r").exists()


def test_a_missing_corpus_names_the_folder_and_how_to_build_it(tmp_path: Path) -> None:
    result = runner.invoke(app, ["parse-eval", str(tmp_path / "nowhere")])
    assert result.exit_code == 2
    assert str(tmp_path / "nowhere") in result.output
    assert "make corpus-10k" in result.output


def test_a_missing_truth_names_the_file_it_looked_for(scripted: None, corpus: Path) -> None:
    (corpus / "truth" / "acme.json").unlink()
    result = runner.invoke(app, ["parse-eval", str(corpus / "pdf"), "--backend", "scripted"])
    assert result.exit_code == 2
    assert str(corpus / "truth" / "acme.json") in result.output
    assert "make corpus-10k" in result.output


def test_an_unknown_backend_is_an_error_not_a_skip(scripted: None, corpus: Path) -> None:
    result = runner.invoke(app, ["parse-eval", str(corpus / "pdf"), "--backend", "scripted-typo"])
    assert result.exit_code == 2
    assert "scripted-typo" in result.output
    assert "scripted" in result.output.split("Choose one of:")[1]
