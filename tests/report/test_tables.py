"""Tables, caveats and plots come from result files; a hand edit, a stale plot or an untraceable number
fails the check, which names the file and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import InputError
from clear_rag.report.blocks import check_page, render_page, unmatched_numbers
from clear_rag.report.sources import Results
from tests.toy import suite_result

ROOT = Path(__file__).resolve().parents[2]
RESULT = suite_result(
    "toy",
    [
        {"name": "base", "metrics": {"ndcg@10": 0.5}, "models": {"embedder": "hash@1"}, "comparisons": {}},
        {
            "name": "better",
            "metrics": {"ndcg@10": 0.75},
            "models": {"embedder": "hash@1"},
            "comparisons": {
                "baseline": {
                    "ndcg@10": {
                        "metric": "ndcg@10",
                        "against": "base",
                        "difference": 0.25,
                        "ci_low": 0.1,
                        "ci_high": 0.4,
                        "p_sign": 0.5,
                        "up": 1,
                        "down": 0,
                        "ties": 1,
                    }
                }
            },
        },
    ],
    date="2026-11-29T00:00:00+00:00",
    golden={"path": ".", "sha256": "0" * 64, "questions": 2, "categories": {}},
    metric_questions={"ndcg@10": 2},
)
PAGE = "# Page\n\nThe better row scores 0.7500.\n\n<!-- results: toy -->\n<!-- /results -->\n"
HERE = Path("page.md")


@pytest.fixture
def results(tmp_path: Path) -> Path:
    (tmp_path / "toy.json").write_text(json.dumps(RESULT), encoding="utf-8")
    return tmp_path


def render(text: str, folder: Path) -> str:
    return render_page(text, HERE, Results.at(folder))


def stale(text: str, folder: Path) -> list[str]:
    return [p.message for p in check_page(text, HERE, Results.at(folder), root=folder)]


def test_render_fills_the_block_and_then_it_is_fresh(results: Path) -> None:
    page = render(PAGE, results)
    assert "| better | 0.7500 | 0.000 | +0.2500 [+0.100, +0.400] | 0.500 | 1 / 0 |" in page
    assert "| base | 0.5000 | 0.000 | baseline |  |  |" in page
    assert stale(page, results) == []
    assert render(page, results) == page


def test_a_hand_edit_is_caught_by_file_and_line(results: Path) -> None:
    page = render(PAGE, results).replace("0.7500 |", "0.7600 |")
    problems = check_page(page, HERE, Results.at(results))
    assert [str(p).split(": block")[0] for p in problems] == ["page.md:5"]
    assert "block 'toy' differs from" in problems[0].message


def test_numbers_in_prose_must_come_from_results(results: Path) -> None:
    from clear_rag.report.blocks import result_numbers

    known = result_numbers(Results.at(results))
    assert unmatched_numbers(PAGE, known) == []
    assert unmatched_numbers(PAGE.replace("0.7500", "0.7512"), known) == [(3, "0.7512", ())]
    assert unmatched_numbers("A version 4.2.1 and 12.5% are not results.", known) == []
    orphan = check_page(render(PAGE, results).replace("0.7500.", "0.7512."), HERE, Results.at(results))
    assert [str(p) for p in orphan] == [
        "page.md:3: the number 0.7512 matches no value in the result files: quote results"
    ]


def test_a_paragraph_that_names_a_result_file_is_held_to_it(results: Path) -> None:
    """0.7500 is in toy.json but not in other.json: quoted beside other.json alone it fails, though some
    result holds it; each paragraph and list item is held to the files it names, and only to those."""
    from clear_rag.report.blocks import result_numbers

    (results / "bench").mkdir()
    (results / "bench" / "other.json").write_text(json.dumps({"ratio": 2.1349, "x": 0.9}), encoding="utf-8")
    known = result_numbers(Results.at(results))
    assert unmatched_numbers("Scores 0.7500 (`results/toy.json`).", known) == []
    assert unmatched_numbers("Scores 0.7500 (`results/bench/other.json`).", known) == [
        (1, "0.7500", ("bench/other",))
    ]
    assert unmatched_numbers("Scores 0.7500 (results/toy.json, results/bench/other.json).", known) == []
    items = "- scores 0.7500 (`results/toy.json`);\n- runs 2.13\u00d7 faster (`results/bench/other.json`)."
    assert unmatched_numbers(items, known) == []
    swapped = "- scores 0.7500 (`results/bench/other.json`);\n- runs 2.13x faster (`results/toy.json`)."
    assert unmatched_numbers(swapped, known) == [(1, "0.7500", ("bench/other",)), (2, "2.13", ("toy",))]
    # A ratio is checked at two decimals; a path under another folder (.clear-rag/results/) names nothing.
    assert unmatched_numbers("runs 2.14x faster", known) == [(1, "2.14", ())]
    assert unmatched_numbers("0.7500 in `.clear-rag/results/bench/other.json`", known) == []
    problems = check_page("Scores 0.7500 (`results/gone.json`).\n", HERE, Results.at(results))
    assert [p.message for p in problems] == [
        "the number 0.7500 is not in results/gone.json, which its paragraph names (results/gone.json "
        "does not exist): quote that file, or name the file the number comes from"
    ]


def test_a_missing_result_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"toy\.json: is named by a results block"):
        render(PAGE, tmp_path)


def test_an_unknown_kind_of_block_is_named_with_its_line(results: Path) -> None:
    with pytest.raises(InputError, match=r"page\.md:2: names an unknown kind of block 'tabel'"):
        render("\n<!-- results: toy tabel -->\n<!-- /results -->\n", results)


def test_check_report_command(results: Path, tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(PAGE, encoding="utf-8")
    runner = CliRunner()
    stale = runner.invoke(app, ["check-report", str(page), "--results-dir", str(results)])
    assert stale.exit_code == 1 and f"{page}:5: block 'toy' differs" in stale.output
    assert runner.invoke(app, ["report", str(page), "--results-dir", str(results)]).exit_code == 0
    fresh = runner.invoke(app, ["check-report", str(page), "--results-dir", str(results)])
    assert fresh.exit_code == 0, fresh.output


def test_the_repository_pages_match_their_results(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    result = CliRunner().invoke(app, ["check-report"])
    assert result.exit_code == 0, result.output


def test_a_table_says_which_questions_each_metric_covers_and_which_rows_did_not_run() -> None:
    from clear_rag.report.tables import suite_table

    result = json.loads(json.dumps(RESULT))
    result["metric_names"] = ["ndcg@10", "doc ndcg@10"]
    result["golden"]["questions"] = 300
    result["metric_questions"] = {"ndcg@10": 188, "doc ndcg@10": 300}
    result["skipped"] = [{"name": "rerank", "reason": "no cross-encoder here"}]
    for row in result["rows"]:
        row["metrics"]["doc ndcg@10"] = 0.8
    table = suite_table(result, "results/toy.json")
    assert "ndcg@10 over 188 of the 300 questions; doc ndcg@10 over 300 of the 300 questions" in table
    assert "Not run: rerank (no cross-encoder here)" in table
    assert "| better | 0.7500 | 0.8000 |" in table


def test_a_loss_block_counts_each_rows_verdicts_through_the_named_query(tmp_path: Path) -> None:
    def question(qid: str, verdict: str) -> dict[str, object]:
        lost: dict[str, object] = {"verdict": verdict, "stage": None, "ranks": {}}
        return {
            "id": qid,
            "category": "c",
            "metrics": {"ndcg@10": 0.0},
            "retrieved": [],
            "trace": qid,
            "lost": lost,
        }

    verdicts = {
        "base": ["found", "lost in fusion", "never retrieved"],
        "better": ["found", "found", "cut by the token budget"],
    }
    result = json.loads(json.dumps(RESULT))
    for row in result["rows"]:
        row["questions"] = [question(f"q{n}", v) for n, v in enumerate(verdicts[row["name"]])]
    (tmp_path / "toy.json").write_text(json.dumps(result), encoding="utf-8")
    page = render("<!-- results: toy lost -->\n<!-- /results -->\n", tmp_path)
    header = "| row | questions | found | cut by the token budget | lost in rerank | lost in fusion | "
    assert header + "retrieved too low | never retrieved |" in page
    assert "| base | 3 | 1 | 0 | 0 | 1 | 0 | 1 |" in page
    assert "| better | 3 | 2 | 1 | 0 | 0 | 0 | 0 |" in page
    assert stale(page, tmp_path) == []
    edited = page.replace("| better | 3 | 2 |", "| better | 3 | 3 |")
    assert [p.line for p in check_page(edited, HERE, Results.at(tmp_path))] == [1]


def test_a_loss_block_over_a_file_without_verdicts_says_to_run_it_again(results: Path) -> None:
    with pytest.raises(InputError, match="holds no loss verdicts"):
        render("<!-- results: toy lost -->\n<!-- /results -->\n", results)


def test_a_time_that_reused_another_rows_reranker_logits_is_marked_and_explained() -> None:
    from clear_rag.report.tables import suite_table

    result = json.loads(json.dumps(RESULT))
    result["rows"][1]["seconds_per_question"] = 0.25
    result["rows"][1]["rerank_reused"] = {"logits": 40, "reused": 30}
    table = suite_table(result, "results/toy.json")
    assert "| better | 0.7500 | 0.250† |" in table and "| base | 0.5000 | 0.000 |" in table
    assert "Reused: better: 75%." in table
    del result["rows"][1]["rerank_reused"]
    assert "†" not in suite_table(result, "results/toy.json")


def test_a_suite_with_a_training_split_shows_seen_and_unseen_and_the_rows_behind_its_best() -> None:
    from clear_rag.report.tables import suite_table

    result = json.loads(json.dumps(RESULT))
    result["training"] = {
        "split": "train",
        "path": "d/qrels/train.tsv",
        "questions": {"seen": 1, "unseen": 1},
    }
    versus = {"difference": -0.5, "ci_low": -0.5, "ci_high": -0.5, "p_sign": 1.0, "up": 0, "down": 1}
    result["rows"][0]["by_subset"] = {
        "seen": {"questions": 1, "metrics": {"ndcg@10": 0.25}, "comparisons": {}},
        "unseen": {"questions": 1, "metrics": {"ndcg@10": 0.75}, "comparisons": {}},
    }
    result["rows"][1]["by_subset"] = {
        "seen": {"questions": 1, "metrics": {"ndcg@10": 1.0}, "comparisons": {}},
        "unseen": {
            "questions": 1,
            "metrics": {"ndcg@10": 0.25},
            "comparisons": {"baseline": {"ndcg@10": versus}},
        },
    }
    table = suite_table(result, "results/toy.json")
    head = table.splitlines()[0]
    assert "| ndcg@10 seen | ndcg@10 unseen |" in head and head.endswith(
        "| unseen ndcg@10 vs baseline [95% CI] |"
    )
    assert "| base | 0.5000 | 0.2500 | 0.7500 | 0.000 | baseline |  |  | baseline |" in table
    assert "| better | 0.7500 | 1.0000 | 0.2500 |" in table and table.splitlines()[3].endswith(
        "| -0.5000 [-0.500, -0.500] |"
    )
    assert (
        "Seen in training: 1 of the 2 questions have a relevant document that was a positive of the `train`"
        in table
    )
    assert "the other 1 are unseen." in table
    assert "Best ndcg@10: 0.7500 (better), the highest of 2 rows measured on the same 2 questions." in table
    assert "Seen in training" not in suite_table(RESULT, "results/toy.json")
