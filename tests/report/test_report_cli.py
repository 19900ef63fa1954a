"""``clear-rag report`` says what it rendered, and says so when every page already matched."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from tests.toy import suite_result

runner = CliRunner()
RESULT = suite_result(
    "toy",
    [{"name": "base", "metrics": {"ndcg@10": 0.5}, "models": {"embedder": "hash@1"}}],
    date="2026-11-29T00:00:00+00:00",
    golden={"path": ".", "sha256": "0" * 64, "questions": 1, "categories": {}},
)
PAGE = "# Page\n\n<!-- results: toy -->\n<!-- /results -->\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with results/toy.json, a README and two site pages, one without tables."""
    (tmp_path / "results").mkdir()
    (tmp_path / "results" / "toy.json").write_text(json.dumps(RESULT), encoding="utf-8")
    (tmp_path / "site").mkdir()
    (tmp_path / "README.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "site" / "index.md").write_text(PAGE, encoding="utf-8")
    (tmp_path / "site" / "about.md").write_text("# About\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_report_names_the_pages_it_rendered_then_says_they_match(project: Path) -> None:
    first = runner.invoke(app, ["report"])
    assert first.exit_code == 0, first.output
    assert first.output.splitlines() == [
        "rendered README.md",
        f"rendered {Path('site/index.md')}",
        "report: rendered 2 pages from results/ (1 already matched)",
    ]
    assert "| base | 0.5000 |" in (project / "README.md").read_text(encoding="utf-8")
    again = runner.invoke(app, ["report"])
    assert again.exit_code == 0, again.output
    assert again.output == "report: README.md and the pages under site/ already match results/\n"


def test_report_on_named_pages_names_them(project: Path) -> None:
    page = Path("site") / "index.md"
    first = runner.invoke(app, ["report", str(page)])
    assert first.output.splitlines() == [f"rendered {page}", "report: rendered 1 page from results/"]
    again = runner.invoke(app, ["report", str(page), "--results-dir", "results"])
    assert again.exit_code == 0, again.output
    assert again.output == f"report: {page} already matches results/\n"
    both = runner.invoke(app, ["report", str(page), "README.md"])
    assert both.output.splitlines()[-1] == "report: rendered 1 page from results/ (1 already matched)"
