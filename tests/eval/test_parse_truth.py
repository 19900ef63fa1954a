"""External ground truth for ``clear-rag parse-eval --truth``: a PDF drawn here scored against the
hand-written ``parse_truth/northwind.json`` (the documented format), and truth files with a wrong field
refused with the file, the field, the value and the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import ConfigError
from clear_rag.eval.parse.tokens import tokens
from clear_rag.eval.parse.truth import load_truth
from tests.parse.pdfs import Line, Page, Text, pdf_bytes

runner = CliRunner()
TRUTH_DIR = Path(__file__).parent / "parse_truth"
TRUTH = json.loads((TRUTH_DIR / "northwind.json").read_text(encoding="utf-8"))
HEADER, *NUMBERS = TRUTH["furniture"]


def page(number: str, items: list[Text | Line]) -> Page:
    """A page with the running header at the top and its number at the bottom."""
    return Page((Text(72, 40, HEADER, 8), *items, Text(300, 760, number, 8)))


def northwind_pdf() -> bytes:
    """The two pages the truth file describes, drawn from its own words (so a typo in one shows)."""
    first, second = TRUTH["pages"]
    title, opened, grew = first.split("\n\n")
    heading, _, closing = second.split("\n\n")
    rows = TRUTH["tables"][0]["rows"]
    table: list[Text | Line] = [Line(72, 112, 400, 112)]
    for r, row in enumerate(rows):
        y = 130 + 18 * r
        table += [Text(72 + 110 * c, y, value) for c, value in enumerate(row)]
        table.append(Line(72, y + 6, 400, y + 6))
    return pdf_bytes(
        [
            page(
                NUMBERS[0], [Text(72, 100, title, 16, bold=True), Text(72, 130, opened), Text(72, 145, grew)]
            ),
            page(NUMBERS[1], [Text(72, 100, heading, 14, bold=True), *table, Text(72, 230, closing)]),
        ]
    )


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path]:
    """``pdf/northwind.pdf`` and a truth folder holding the hand-written file."""
    (tmp_path / "pdf").mkdir()
    (tmp_path / "pdf" / "northwind.pdf").write_bytes(northwind_pdf())
    shutil.copytree(TRUTH_DIR, tmp_path / "truth-files")
    return tmp_path / "pdf", tmp_path / "truth-files"


def test_the_truth_file_reads_as_its_pages_joined() -> None:
    truth = load_truth(TRUTH_DIR / "northwind.json")
    assert truth.text == "\n\n".join(TRUTH["pages"])
    assert truth.tables == (tuple(tuple(row) for row in TRUTH["tables"][0]["rows"]),)
    assert (truth.furniture, truth.headings) == (tuple(TRUTH["furniture"]), tuple(TRUTH["headings"]))


def test_a_drawn_pdf_is_scored_against_a_hand_written_truth(
    folders: tuple[Path, Path], tmp_path: Path
) -> None:
    pdfs, truth = folders
    args = ["parse-eval", str(pdfs), "--truth", str(truth), "--backend", "flat", "--backend", "layout"]
    result = runner.invoke(app, [*args, "--save-results", "--results-dir", str(tmp_path / "r")])
    assert result.exit_code == 0, result.output
    scored = json.loads((tmp_path / "r" / "parse.json").read_text(encoding="utf-8"))["backends"]
    flat, layout = (scored[name]["documents"]["northwind.pdf"] for name in ("flat", "layout"))
    # The pages print the header twice and each page number once; the body's own "2" ("2 new stores")
    # is no furniture.
    assert flat["counts"]["furniture_on_pages"] == layout["counts"]["furniture_on_pages"] == 2 + 2
    # flat keeps every word in the body: all the furniture leaks, and with it the extra tokens.
    assert flat["counts"]["furniture_leaked"] == 4
    assert flat["words_recall"] == 1.0
    leaked_tokens = 2 * len(tokens(HEADER)) + 2
    assert flat["counts"]["tokens_parsed"] == flat["counts"]["tokens_truth"] + leaked_tokens
    # flat has no table blocks: no cell is in a table or a whole row, every one is somewhere.
    assert (flat["cells_in_tables"], flat["cells_in_rows"], flat["cells_anywhere"]) == (0.0, 0.0, 1.0)
    assert flat["counts"]["cells_truth"] == sum(len(row) for row in TRUTH["tables"][0]["rows"])
    # flat marks no headings: none of the listed two found, none marked wrongly.
    assert (flat["headings_recall"], flat["headings_precision"]) == (0.0, 1.0)
    assert flat["counts"]["headings_truth"] == len(TRUTH["headings"])
    assert layout["words_recall"] >= 0.9
    assert layout["headings_recall"] is not None


def test_a_pdf_named_with_a_dash_finds_its_own_truth_before_the_prefix(folders: tuple[Path, Path]) -> None:
    pdfs, truth = folders
    (pdfs / "northwind.pdf").rename(pdfs / "north-wind.pdf")
    (truth / "northwind.json").rename(truth / "north-wind.json")
    result = runner.invoke(app, ["parse-eval", str(pdfs), "--truth", str(truth), "--backend", "flat"])
    assert result.exit_code == 0, result.output
    (truth / "north-wind.json").unlink()
    missing = runner.invoke(app, ["parse-eval", str(pdfs), "--truth", str(truth), "--backend", "flat"])
    assert missing.exit_code == 2
    assert str(truth / "north.json") in missing.output
    assert "north-wind.json or north.json" in missing.output
    assert "site/parse.md" in missing.output


def wrong(change: dict[str, Any], *, drop: str = "") -> dict[str, Any]:
    return {k: v for k, v in TRUTH.items() if k != drop} | change


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (
            wrong({"furniture": "Page 1"}),
            "furniture='Page 1': must be a list of strings. Write each header, footer or page number as "
            'printed: "furniture": ["..."]',
        ),
        (
            wrong({"tabels": []}),
            "tabels: is not a truth file key. Did you mean 'tables'? A truth file has text, pages, tables,",
        ),
        (
            wrong({"tables": [{"rows": [["Europe", 1234]]}]}),
            "tables[1].rows=[['Europe', 1234]]: must be a list of rows, each a list of cell strings",
        ),
        (wrong({"text": "both"}), 'text: has both text and pages. Write the text once: "text": "..."'),
        (wrong({}, drop="pages"), "text: has neither text nor pages"),
        ([TRUTH], "is not an object"),
    ],
    ids=["furniture-a-string", "misspelt-key", "number-cell", "text-and-pages", "no-text", "a-list"],
)
def test_a_wrong_field_is_named_with_its_value_and_fix(tmp_path: Path, data: Any, message: str) -> None:
    path = tmp_path / "northwind.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_truth(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert message in str(caught.value)


def test_the_cli_says_the_wrong_field_and_exits_2(folders: tuple[Path, Path]) -> None:
    pdfs, truth = folders
    (truth / "northwind.json").write_text(json.dumps(wrong({"furniture": "Page 1"})), encoding="utf-8")
    result = runner.invoke(app, ["parse-eval", str(pdfs), "--truth", str(truth), "--backend", "flat"])
    assert result.exit_code == 2
    assert f"{truth / 'northwind.json'}: furniture='Page 1': must be a list of strings" in result.output
