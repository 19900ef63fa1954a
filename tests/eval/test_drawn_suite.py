"""The parse suite's drawn cases (``clear_rag.eval.drawn``): each case's truth written in the
documented truth format reads back as drawn, drawing is deterministic, a case that cannot be drawn is
named with its reason, and ``clear-rag parse-eval`` scores the cases one row per case and backend into a
file of the typed schema, which the site renders with a dash where a case measures nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import InputError, ModelMissing
from clear_rag.eval.drawn.drawn import Drawn, Piece
from clear_rag.eval.drawn.suite import CASES, SCANNED, Case, evaluate_cases, write_suite
from clear_rag.eval.parse.truth import load_truth
from clear_rag.parse import registry
from clear_rag.report.cases import cases_table
from clear_rag.results.schema import check_document
from tests.eval.test_parse_eval_cli import absent
from tests.parse.drawn import draw

runner = CliRunner()
SMALL = tuple(c for c in CASES if c.name in {"furniture-memo-1-page", "table-empty-cells-ruled", "turned"})


def test_the_truth_keeps_furniture_and_turned_text_out_of_the_text_and_tables_in_it() -> None:
    drawn = Drawn(
        b"",
        (
            Piece("furniture", "ACME | Report"),
            Piece("heading", "Sales", 1),
            Piece("text", "Sales grew."),
            Piece("text", "Costs fell."),
            Piece("row", "Region | 2024"),
            Piece("row", "Europe | 1,234"),
            Piece("apart", "DRAFT"),
            Piece("furniture", "ACME | Report"),
        ),
        ((("Region", "2024"), ("Europe", "1,234")),),
    )
    truth = drawn.truth()
    assert truth.text == "Sales\n\nSales grew.\nCosts fell.\n\nRegion | 2024\nEurope | 1,234"
    assert truth.furniture == ("ACME | Report", "DRAFT")  # distinct, as printed
    assert truth.headings == ("Sales",)
    assert truth.tables == ((("Region", "2024"), ("Europe", "1,234")),)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_cases_truth_file_reads_back_as_drawn_and_its_pdf_is_the_same_each_time(
    case: Case, tmp_path: Path
) -> None:
    drawn = draw(case.draw)
    path = tmp_path / f"{case.name}.json"
    path.write_text(json.dumps(drawn.truth_file(case.name), ensure_ascii=False), encoding="utf-8")
    assert load_truth(path) == drawn.truth()
    assert drawn.truth().text.split()  # something to score
    assert draw(case.draw).pdf == drawn.pdf


def test_a_case_that_cannot_be_drawn_is_named_with_why_and_the_others_are_written(tmp_path: Path) -> None:
    def missing() -> Drawn:
        raise ModelMissing("DejaVuSans.ttf missing", field="fonts", fix="Install fonts-dejavu-core")

    cases = (Case("needs-fonts", "a case in DejaVu", missing), *SMALL[:1])
    written = write_suite(tmp_path, cases=cases)
    assert (
        list(written.not_drawn) == ["needs-fonts"] and "fonts-dejavu-core" in written.not_drawn["needs-fonts"]
    )
    assert [p.name for p in written.pdfs] == [f"{SMALL[0].name}.pdf"]
    assert sorted(p.name for p in (tmp_path / "truth").iterdir()) == [f"{SMALL[0].name}.json"]


def test_the_scan_is_scored_against_the_memos_truth_with_furniture_counted_on_the_memo(
    tmp_path: Path,
) -> None:
    memo = next(c for c in CASES if c.name == SCANNED[1])
    draw(memo.draw)
    written = write_suite(tmp_path, cases=(memo,))
    scan = tmp_path / "pdf" / f"{SCANNED[0]}.pdf"
    assert written.pdfs[-1] == scan and written.originals == {scan: tmp_path / "pdf" / f"{SCANNED[1]}.pdf"}
    assert load_truth(tmp_path / "truth" / f"{SCANNED[0]}.json") == memo.draw().truth()


def test_cases_are_scored_per_case_and_backend_and_rendered_with_dashes_where_nothing_is_measured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for case in SMALL:
        draw(case.draw)
    monkeypatch.setattr("clear_rag.eval.drawn.suite.CASES", SMALL)
    monkeypatch.setattr("clear_rag.eval.drawn.suite.SCANNED", ("none", "no-such-case"))
    pdfs = tmp_path / "pdf"
    pdfs.mkdir()
    (pdfs / "none.pdf").write_bytes(draw(SMALL[0].draw).pdf)  # FOLDER: one PDF with its truth
    (tmp_path / "truth").mkdir()
    (tmp_path / "truth" / "none.json").write_text(json.dumps(draw(SMALL[0].draw).truth_file("x")))
    args = [
        "parse-eval",
        str(pdfs),
        "--backend",
        "flat",
        "--backend",
        "layout",
        "--suite",
        str(tmp_path / "s"),
    ]
    result = runner.invoke(app, [*args, "--save-results", "--results-dir", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "r" / "parse.json").read_text(encoding="utf-8"))
    check_document(document, "parse.json")
    assert "--suite" in document["command"]
    cases = document["cases"]
    assert list(cases["cases"]) == [c.name for c in SMALL]
    layout, flat = (cases["backends"][b]["documents"] for b in ("layout", "flat"))
    assert set(layout) == set(flat) == {f"{c.name}.pdf" for c in SMALL}
    table = layout["table-empty-cells-ruled.pdf"]
    assert table["cells_in_rows"] == 1.0 and table["furniture_leakage"] is None  # no furniture drawn
    assert table["headings_recall"] is None
    memo, turned = layout["furniture-memo-1-page.pdf"], flat["turned.pdf"]
    assert memo["cells_in_tables"] is None and memo["headings_recall"] == 1.0  # no table drawn
    assert memo["furniture_leakage"] == 0.0 < flat["furniture-memo-1-page.pdf"]["furniture_leakage"]
    assert turned["words_f1"] < layout["turned.pdf"]["words_f1"]  # flat reads the stamps into the body
    rendered = cases_table(document, "results/parse.json")
    row = next(line for line in rendered.splitlines() if line.startswith("| **table-empty-cells-ruled** |"))
    assert row.split(" | ")[-1] == "— |"  # furniture: not measured
    assert "**turned**:" in rendered and "Not run" not in rendered


def test_without_the_default_corpus_no_cases_are_drawn_unless_asked(tmp_path: Path) -> None:
    from clear_rag.cli.parse import DEFAULT_FOLDER, DEFAULT_SUITE, command_line, suite_folder

    assert suite_folder(DEFAULT_FOLDER, None, False) == DEFAULT_SUITE
    assert suite_folder(tmp_path, None, False) is None
    assert suite_folder(DEFAULT_FOLDER, tmp_path, True) is None
    assert command_line(DEFAULT_FOLDER, None, ("layout",), Path("results"), None, 300, None).endswith(
        "--no-scans --no-suite --save-results"
    )


def test_a_suite_part_without_cases_renders_an_error_naming_the_file() -> None:
    with pytest.raises(InputError, match="holds no drawn cases"):
        cases_table({"date": "2026-12-03", "backends": {}}, "results/parse.json")


def test_a_backend_that_is_not_installed_is_named_with_why_beside_the_scored_cases(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(registry, "_factories", dict(registry._factories))
    monkeypatch.setattr(registry, "_defaults", dict(registry._defaults))
    registry.register("pdf", "absent", absent)
    monkeypatch.setattr("clear_rag.eval.drawn.suite.CASES", SMALL[:1])
    draw(SMALL[0].draw)
    part = evaluate_cases(tmp_path, ["flat", "absent"])
    assert "not installed" in part["backends"]["absent"]["not_run"]
    assert list(part["backends"]["flat"]["documents"]) == [f"{SMALL[0].name}.pdf"]


def test_cases_only_replaces_the_cases_part_and_keeps_the_rest_of_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("clear_rag.eval.drawn.suite.CASES", SMALL[:1])
    monkeypatch.setattr("clear_rag.eval.drawn.suite.SCANNED", ("none", "no-such-case"))
    draw(SMALL[0].draw)
    pdfs, results = tmp_path / "pdf", tmp_path / "r"
    pdfs.mkdir()
    (pdfs / "one.pdf").write_bytes(draw(SMALL[0].draw).pdf)
    (tmp_path / "truth").mkdir()
    (tmp_path / "truth" / "one.json").write_text(json.dumps(draw(SMALL[0].draw).truth_file("x")))
    only = ["parse-eval", "--cases-only", "--backend", "flat", "--suite", str(tmp_path / "s")]
    refused = runner.invoke(app, [*only, "--save-results", "--results-dir", str(results)])
    assert refused.exit_code != 0 and "parse.json: does not exist" in refused.output  # nothing to add to
    first = ["parse-eval", str(pdfs), "--backend", "layout", "--no-suite", "--save-results"]
    assert runner.invoke(app, [*first, "--results-dir", str(results)]).exit_code == 0
    before = json.loads((results / "parse.json").read_text(encoding="utf-8"))
    result = runner.invoke(app, [*only, "--save-results", "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    after = json.loads((results / "parse.json").read_text(encoding="utf-8"))
    assert {k: v for k, v in after.items() if k != "cases"} == before
    assert after["cases"]["command"].startswith("clear-rag parse-eval --cases-only --backend flat --suite ")
    assert list(after["cases"]["backends"]) == ["flat"]
    assert "clear-rag parse-eval --cases-only" in cases_table(after, "parse.json")
