"""The site's generated blocks: each row against the one before, per-category figures, caveats written
from the numbers, and plots that the check re-draws and compares byte for byte."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.report.blocks import check_page, render_page
from clear_rag.report.caveats import CEILING, caveats
from clear_rag.report.sources import Results, plot_path
from clear_rag.report.tables import categories_table, previous_table
from tests.toy import suite_result

CATEGORIES = ("factual", "paraphrase", "identifier")


def comparison(difference: float, half: float, against: str) -> dict[str, Any]:
    return {
        "difference": difference,
        "ci_low": difference - half,
        "ci_high": difference + half,
        "p_sign": 0.01 if abs(difference) > half else 0.5,
        "up": 3,
        "down": 1,
        "ties": 0,
        "against": against,
        "metric": "",  # filled by suite() with the metric it compares
    }


def suite(seed: int, rows: int = 4) -> dict[str, Any]:
    """A suite document of ``rows`` rows with random metrics and comparisons, in the written shape."""
    rng = random.Random(seed)
    names = [f"row {n}" for n in range(rows)]
    questions = [{"id": f"q{n}", "category": CATEGORIES[n % 3], "metrics": {}} for n in range(7)]
    out = []
    for n, name in enumerate(names):
        metrics = {m: round(rng.random(), 4) for m in ("recall@5", "mrr@10", "ndcg@10")}
        comparisons: dict[str, Any] = {}
        if n:
            comparisons["baseline"] = {
                m: {**comparison(rng.uniform(-0.2, 0.2), 0.05, names[0]), "metric": m} for m in metrics
            }
            comparisons["previous"] = {
                m: {**comparison(rng.uniform(-0.2, 0.2), 0.05, names[n - 1]), "metric": m} for m in metrics
            }
        out.append(
            {
                "name": name,
                "metrics": metrics,
                "models": {"embedder": "hash@1"},
                "by_category": {c: {"ndcg@10": round(rng.random(), 4)} for c in CATEGORIES},
                "questions": questions,
                "comparisons": comparisons,
            }
        )
    return suite_result(
        "toy",
        out,
        date="2026-11-29T00:00:00+00:00",
        metric_names=["recall@5", "mrr@10", "ndcg@10"],
        golden={"path": ".", "sha256": "0" * 64, "questions": 7, "categories": {}},
    )


@pytest.mark.parametrize("seed", range(5))
def test_each_row_is_compared_with_the_one_before_it(seed: int) -> None:
    doc = suite(seed)
    lines = [line for line in previous_table(doc, "r.json").splitlines() if line.startswith("| row ")]
    assert [line.split(" | ")[1] for line in lines[1:]] == [r["name"] for r in doc["rows"][:-1]]
    for line, row in zip(lines[1:], doc["rows"][1:], strict=True):
        assert f"{row['comparisons']['previous']['ndcg@10']['difference']:+.4f}" in line


def test_categories_count_every_question_once() -> None:
    doc = suite(0)
    head = categories_table(doc, "r.json").splitlines()[0]
    counts = [int(cell.rsplit("(", 1)[1].rstrip(")")) for cell in head.strip("| ").split(" | ")[1:]]
    assert sum(counts) == len(doc["rows"][0]["questions"])


@pytest.mark.parametrize("seed", range(8))
def test_caveats_name_every_row_on_the_side_of_its_interval(seed: int) -> None:
    doc = suite(seed, rows=6)
    text = caveats(doc, "r.json")
    inside = [
        r["name"]
        for r in doc["rows"][1:]
        if r["comparisons"]["baseline"]["ndcg@10"]["ci_low"]
        <= 0
        <= r["comparisons"]["baseline"]["ndcg@10"]["ci_high"]
    ]
    line = next(line for line in text.splitlines() if line.startswith("- On ndcg@10"))
    assert f"{len(inside)} of the {len(doc['rows']) - 1} rows" in line
    said_inside = line.split("from it: ")[1].split(". Beyond")[0]
    assert said_inside.split("; ") == (inside or ["none"])


def test_a_metric_at_its_ceiling_in_most_rows_is_called_saturated_and_only_then() -> None:
    doc = suite(1)
    for row in doc["rows"]:
        row["metrics"]["recall@5"] = CEILING + 0.05
    assert "recall@5 is at least" in caveats(doc, "r.json")
    doc["rows"][0]["metrics"]["recall@5"] = doc["rows"][1]["metrics"]["recall@5"] = 0.5
    doc["rows"][2]["metrics"]["recall@5"] = 0.4
    assert "recall@5 is at least" not in caveats(doc, "r.json")


PAGE = """# Toy

<!-- results: toy plot suite -->
<!-- /results -->
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "toy.json").write_text(json.dumps(suite(3)), encoding="utf-8")
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "toy.md").write_text(PAGE, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_report_writes_the_plot_and_the_check_names_a_stale_one_by_file_and_line(project: Path) -> None:
    runner = CliRunner()
    page = Path("site") / "toy.md"
    missing = runner.invoke(app, ["check-report", str(page)])
    assert missing.exit_code == 1
    assert f"{page}:3: plot site/plots/toy-suite.svg is missing" in missing.output
    written = runner.invoke(app, ["report", str(page)])
    assert written.exit_code == 0, written.output
    svg = project / plot_path("toy", "suite")
    assert svg.read_bytes().lstrip().startswith(b"<?xml")
    assert "](plots/toy-suite.svg)" in page.read_text(encoding="utf-8")
    assert runner.invoke(app, ["check-report", str(page)]).exit_code == 0
    # A new result file and a plot left as it was: the check names the page, the line and the plot.
    doc = suite(4)
    (project / "results" / "toy.json").write_text(json.dumps(doc), encoding="utf-8")
    stale = runner.invoke(app, ["check-report", str(page)])
    assert stale.exit_code == 1
    assert f"{page}:3: plot site/plots/toy-suite.svg no longer matches what results/toy.json renders to" in (
        stale.output
    )
    assert runner.invoke(app, ["report", str(page)]).exit_code == 0
    assert runner.invoke(app, ["check-report", str(page)]).exit_code == 0


def test_a_plot_of_a_kind_the_file_cannot_have_is_named(project: Path) -> None:
    text = PAGE.replace("plot suite", "plot ratios")
    with pytest.raises(Exception, match=r"toy\.json: has no plot 'ratios'"):
        render_page(text, Path("site/toy.md"), Results.at("results"))
    assert check_page(PAGE, Path("site/toy.md"), Results.at("results"))[0].line == 3


def test_the_parse_table_has_a_line_per_backend_and_document_and_names_what_did_not_run() -> None:
    from clear_rag.report.tables import PARSE_COLUMNS, parse_table

    scores = {key: 0.5 for key, _ in PARSE_COLUMNS}
    doc = {
        "date": "2026-11-30T00:00:00+00:00",
        "command": "clear-rag parse-eval --save-results",
        "versions": {"pdfplumber": "0.11.10"},
        "backends": {
            "layout": {
                "overall": scores,
                "documents": {"one-column/a.pdf": scores, "two-column/a.pdf": scores},
            },
            "docling": {"not_run": "the docling package is not installed"},
        },
    }
    lines = [
        line for line in parse_table(doc, "results/parse.json").splitlines() if line.startswith("| layout")
    ]
    assert [line.split(" | ")[1] for line in lines] == ["one-column/a.pdf", "two-column/a.pdf", "**overall**"]
    assert "Not run: docling (the docling package is not installed)" in parse_table(doc, "results/parse.json")


def test_the_parse_table_shows_cells_in_whole_rows_only_when_the_file_holds_it() -> None:
    """A file written before issue 31 has no ``cells_in_rows``: its table renders without the column;
    a file that has it gets the column, and a document scored before it a dash. Headings measured
    nowhere (no truth listed any) get no column either."""
    from clear_rag.report.tables import PARSE_COLUMNS, PARSE_OPTIONAL, parse_table

    old: dict[str, float | None] = {key: 0.5 for key, _ in PARSE_COLUMNS if key not in PARSE_OPTIONAL}
    new = old | {"cells_in_rows": 0.25}

    def doc(overall: dict[str, float | None], one: dict[str, float | None]) -> dict[str, object]:
        return {
            "date": "2026-12-03T00:00:00+00:00",
            "command": "clear-rag parse-eval --save-results",
            "backends": {"layout": {"overall": overall, "documents": {"a.pdf": one}}},
        }

    before = parse_table(doc(old, old), "results/parse.json")
    assert "cells in whole rows" not in before and "headings" not in before
    unmeasured = new | {"headings_recall": None, "headings_precision": None}
    assert "headings R" not in parse_table(doc(unmeasured, unmeasured), "results/parse.json")
    table = parse_table(doc(new, old), "results/parse.json")
    head = table.splitlines()[0].split(" | ")
    at = head.index("cells in whole rows")
    rows = {
        line.split(" | ")[1]: line.split(" | ") for line in table.splitlines() if line.startswith("| layout")
    }
    assert (rows["**overall**"][at], rows["a.pdf"][at]) == ("0.2500", "—")
