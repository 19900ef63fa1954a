"""The DuckDB views over result files: hand-made files of a corpus suite and of a BEIR suite (one shape,
document metrics), the CLI, and the real results/."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.errors import ResultsQueryError
from clear_rag.results.queries import connect, run_named, run_sql
from clear_rag.results.views import QUERIES, VIEWS

REPO_RESULTS = Path(__file__).resolve().parents[2] / "results"
runner = CliRunner()


def _question(qid: str, category: str, first_rank: int | None, ndcg: float) -> dict[str, Any]:
    recall = 0.0 if first_rank is None else 1.0
    metrics = {"recall@5": recall, "recall@10": recall, "mrr@10": ndcg, "ndcg@10": ndcg}
    lost = (
        {"verdict": "found", "stage": None} if first_rank else {"verdict": "never retrieved", "stage": None}
    )
    return {"id": qid, "category": category, "first_rank": first_rank, "covered": [], "labels": 1,
            "retrieved": ["d#0001"], "metrics": metrics, "trace": f"t-{qid}", "lost": lost}  # fmt: skip


def _comparison(against: str, difference: float, low: float, high: float) -> dict[str, Any]:
    return {"ndcg@10": {"metric": "ndcg@10", "against": against, "difference": difference, "ci_low": low,
                        "ci_high": high, "p_sign": 0.5, "up": 2, "down": 1, "ties": 0}}  # fmt: skip


def _suite_row(name: str, ndcg: float, q2_rank: int | None, comparisons: dict[str, Any]) -> dict[str, Any]:
    q2 = 0.0 if q2_rank is None else 1 / q2_rank
    return {
        "name": name, "config": {"retrievers": ["keyword"], "top_k": 10}, "config_hash": f"h-{name}",
        "models": {"embedder": "hash", "tokenizer": "tok"}, "store": ".clear-rag/x",
        "metrics": {"recall@5": 0.5, "recall@10": 0.5, "mrr@10": ndcg, "ndcg@10": ndcg},
        "by_category": {"factual": {"recall@5": 1.0, "ndcg@10": 1.0},
                        "paraphrase": {"recall@5": 0.0, "ndcg@10": q2}},
        "seconds_per_question": 0.01,
        "questions": [_question("q1", "factual", 1, 1.0), _question("q2", "paraphrase", q2_rank, q2),
                      _question("q3", "paraphrase", None, 0.0)],
        "comparisons": comparisons,
    }  # fmt: skip


def _suite(date: str, ndcgs: tuple[float, float]) -> dict[str, Any]:
    return {
        "suite": "mini", "date": date, "embedder": "hash", "corpus": {"path": "c", "sha256": "0"},
        "golden": {"path": "g", "sha256": "0"}, "baseline": "hybrid", "headline": "ndcg@10",
        "metric_names": ["recall@5", "ndcg@10"],
        "rows": [
            _suite_row("bm25", ndcgs[0], None, {"baseline": _comparison("hybrid", -0.2, -0.3, -0.1)}),
            _suite_row("hybrid", ndcgs[1], 2, {"previous": _comparison("bm25", 0.2, -0.05, 0.45)}),
        ],
    }  # fmt: skip


def _beir_row(name: str, ndcg: float, per_query: dict[str, float]) -> dict[str, Any]:
    """A row of a BEIR suite: the same shape, with document metrics per query."""
    metrics = {"doc ndcg@10": ndcg, "doc recall@100": 0.9, "doc mrr@10": ndcg / 2}
    return {
        "name": name, "config": {"retrievers": ["vector"]}, "config_hash": f"h-{name}",
        "models": {"embedder": "minilm", "reranker": "ce"}, "date": "2026-02-01T00:00:00+00:00",
        "metrics": metrics, "by_category": {"all": metrics}, "seconds_per_question": 0.02,
        "questions": [{"id": q, "category": "all", "retrieved": [], "trace": f"t-{q}",
                       "metrics": {"doc ndcg@10": v, "doc recall@100": 1.0, "doc mrr@10": v}}
                      for q, v in per_query.items()],
        "comparisons": {},
    }  # fmt: skip


def _beir(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "suite": "beir-toy", "date": "2026-02-02T00:00:00+00:00", "embedder": "minilm", "baseline": "bm25",
        "headline": "doc ndcg@10", "metric_names": ["doc ndcg@10", "doc recall@100", "doc mrr@10"],
        "rows": rows,
    }  # fmt: skip


@pytest.fixture
def results(tmp_path: Path) -> Path:
    """mini.json and mini-fake.json (one suite in two files), beir-toy.json, and a benchmark to ignore."""
    folder = tmp_path / "results"
    (folder / "bench").mkdir(parents=True)
    files = {
        "mini.json": _suite("2026-01-02T03:04:05+00:00", (0.4, 0.6)),
        "mini-fake.json": _suite("2026-01-01T00:00:00+00:00", (0.3, 0.3)),
        "beir-toy.json": _beir(
            [_beir_row("bm25", 0.5, {"7": 1.0, "3": 0.0}), _beir_row("dense", 0.7, {"7": 0.4})]
        ),
        "bench/retrieval.json": {"date": "2026-01-01", "benchmark": "retrieval", "rows": 3},
    }  # fmt: skip
    for name, content in files.items():
        (folder / name).write_text(json.dumps(content), encoding="utf-8")
    return folder


def test_suites_has_one_row_per_file_and_skips_subfolders(results: Path) -> None:
    columns, rows = run_named("suites", results)
    assert columns == ["file", "suite", "date", "embedder", "baseline", "headline", "row_count"]
    assert rows == [
        ("beir-toy", "beir-toy", datetime(2026, 2, 2, tzinfo=UTC), "minilm", "bm25", "doc ndcg@10", 2),
        ("mini", "mini", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC), "hash", "hybrid", "ndcg@10", 2),
        ("mini-fake", "mini", datetime(2026, 1, 1, tzinfo=UTC), "hash", "hybrid", "ndcg@10", 2),
    ]


def test_rows_has_each_metric_as_a_column_and_the_files_headline(results: Path) -> None:
    columns, rows = run_named("rows", results)
    first_metric = columns.index("headline") + 1
    assert columns[first_metric:] == [
        "doc ndcg@10", "doc recall@100", "doc mrr@10", "recall@5", "recall@10", "mrr@10", "ndcg@10", "config"
    ]  # fmt: skip
    picked = run_sql(
        "SELECT file, row, config_hash, embedder, reranker, questions, seconds_per_question, headline, "
        '"doc recall@100", "recall@5" FROM rows',
        results,
    )[1]
    assert picked == [
        ("beir-toy", "bm25", "h-bm25", "minilm", "ce", 2, 0.02, 0.5, 0.9, None),
        ("beir-toy", "dense", "h-dense", "minilm", "ce", 1, 0.02, 0.7, 0.9, None),
        ("mini", "bm25", "h-bm25", "hash", None, 3, 0.01, 0.4, None, 0.5),
        ("mini", "hybrid", "h-hybrid", "hash", None, 3, 0.01, 0.6, None, 0.5),
        ("mini-fake", "bm25", "h-bm25", "hash", None, 3, 0.01, 0.3, None, 0.5),
        ("mini-fake", "hybrid", "h-hybrid", "hash", None, 3, 0.01, 0.3, None, 0.5),
    ]
    dates = run_sql("SELECT DISTINCT file, date FROM rows ORDER BY file", results)[1]
    # A row that carries its own date keeps it; one without takes its file's.
    assert [d for _, d in dates] == [
        datetime(2026, 2, 1, tzinfo=UTC),
        datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        datetime(2026, 1, 1, tzinfo=UTC),
    ]
    assert json.loads(rows[0][-1]) == {"retrievers": ["vector"]}


def test_questions_cover_every_file_in_file_order(results: Path) -> None:
    sql = 'SELECT row, question, category, first_rank, trace, headline, "recall@5" FROM questions WHERE file='
    assert run_sql(sql + "'beir-toy'", results)[1] == [
        ("bm25", "7", "all", None, "t-7", 1.0, None),
        ("bm25", "3", "all", None, "t-3", 0.0, None),
        ("dense", "7", "all", None, "t-7", 0.4, None),
    ]
    assert run_sql(sql + "'mini'", results)[1] == [
        ("bm25", "q1", "factual", 1, "t-q1", 1.0, 1.0),
        ("bm25", "q2", "paraphrase", None, "t-q2", 0.0, 0.0),
        ("bm25", "q3", "paraphrase", None, "t-q3", 0.0, 0.0),
        ("hybrid", "q1", "factual", 1, "t-q1", 1.0, 1.0),
        ("hybrid", "q2", "paraphrase", 2, "t-q2", 1 / 2, 1.0),
        ("hybrid", "q3", "paraphrase", None, "t-q3", 0.0, 0.0),
    ]


def test_by_category_is_long_form(results: Path) -> None:
    columns, rows = run_sql("SELECT * FROM by_category WHERE file = 'mini'", results)
    assert columns == ["file", "suite", "row", "category", "metric", "value"]
    assert [r[2:] for r in rows] == [
        ("bm25", "factual", "recall@5", 1.0), ("bm25", "factual", "ndcg@10", 1.0),
        ("bm25", "paraphrase", "recall@5", 0.0), ("bm25", "paraphrase", "ndcg@10", 0.0),
        ("hybrid", "factual", "recall@5", 1.0), ("hybrid", "factual", "ndcg@10", 1.0),
        ("hybrid", "paraphrase", "recall@5", 0.0), ("hybrid", "paraphrase", "ndcg@10", 1 / 2),
    ]  # fmt: skip
    assert run_sql("SELECT count(*) FROM by_category WHERE file = 'beir-toy'", results)[1] == [(6,)]


def test_comparisons_name_the_kind_and_the_row_compared_with(results: Path) -> None:
    columns, rows = run_sql("SELECT * FROM comparisons WHERE file = 'mini'", results)
    assert columns == ["file", "suite", "row", "against", "against_row", "metric", "difference", "ci_low",
                       "ci_high", "p_sign", "up", "down", "ties"]  # fmt: skip
    assert rows == [
        ("mini", "mini", "bm25", "baseline", "hybrid", "ndcg@10", -0.2, -0.3, -0.1, 0.5, 2, 1, 0),
        ("mini", "mini", "hybrid", "previous", "bm25", "ndcg@10", 0.2, -0.05, 0.45, 0.5, 2, 1, 0),
    ]


def test_named_queries(results: Path) -> None:
    assert set(QUERIES) == {"best_rows", "significant", "missed_by_all", "lost", "answers", "check"}
    assert run_named("answers", results)[1] == []  # no file here grades answers
    assert run_named("check", results)[1] == []  # nor had its answers checked
    assert run_named("best_rows", results)[1] == [
        ("beir-toy", "beir-toy", "dense", "h-dense", "minilm", "doc ndcg@10", 0.7),
        ("mini", "mini", "hybrid", "h-hybrid", "hash", "ndcg@10", 0.6),
        ("mini-fake", "mini", "bm25", "h-bm25", "hash", "ndcg@10", 0.3),  # a tie goes to the row listed first
    ]
    significant = run_named("significant", results)[1]
    assert [(f, row, against, d) for f, row, against, _, _, d, *_ in significant] == [
        ("mini", "bm25", "baseline", -0.2), ("mini-fake", "bm25", "baseline", -0.2)
    ]  # fmt: skip
    assert run_named("missed_by_all", results)[1] == [
        ("beir-toy", "beir-toy", "3", "all", 1),
        ("mini", "mini", "q3", "paraphrase", 2),
        ("mini-fake", "mini", "q3", "paraphrase", 2),
    ]


def test_lost_counts_each_rows_questions_by_where_they_were_lost(results: Path) -> None:
    columns, found = run_named("lost", results)
    assert columns[:5] == ["file", "suite", "row", "questions", "found"]
    assert columns[-2:] == ["never retrieved", "lost in parsing"]
    at = {(f, row): dict(zip(columns[3:], counts, strict=True)) for f, _, row, *counts in found}
    # a BEIR file without span labels has no verdicts, so no row here
    assert sorted(at) == [
        ("mini", "bm25"),
        ("mini", "hybrid"),
        ("mini-fake", "bm25"),
        ("mini-fake", "hybrid"),
    ]
    assert at[("mini", "bm25")] == {**dict.fromkeys(columns[3:], 0), "questions": 3, "found": 1,
                                           "never retrieved": 2}  # fmt: skip
    assert at[("mini", "hybrid")]["found"] == 2 and at[("mini", "hybrid")]["never retrieved"] == 1
    questions = run_sql(
        "SELECT question, verdict FROM questions WHERE file = 'mini' AND row = 'hybrid'", results
    )
    assert questions[1] == [("q1", "found"), ("q2", "found"), ("q3", "never retrieved")]


def test_a_large_metrics_object_reads_like_a_small_one(results: Path) -> None:
    # DuckDB's own inference makes an object of more than 200 keys a MAP and a smaller one a STRUCT.
    row = _beir_row("bm25", 0.5, {"1": 0.1})
    row["by_category"] = {f"c{n}": {"doc ndcg@10": n / 1000} for n in range(250)}
    big = {**_beir([row]), "suite": "beir-big"}
    (results / "beir-big.json").write_text(json.dumps(big), encoding="utf-8")
    rows = run_sql("SELECT file, count(*), max(value) FROM by_category GROUP BY file ORDER BY file", results)[
        1
    ]
    assert rows[:2] == [("beir-big", 250, 0.249), ("beir-toy", 6, 0.9)]


def test_errors_name_the_problem(results: Path, tmp_path: Path) -> None:
    with pytest.raises(ResultsQueryError, match=r'Binder Error: Referenced column "nope" not found'):
        run_sql("SELECT nope FROM rows", results)
    with pytest.raises(ResultsQueryError, match="no result files"):
        connect(tmp_path / "empty")
    with pytest.raises(ResultsQueryError, match=r"no such named query or view.*best_rows"):
        run_named("best", results)
    (results / "broken.json").write_text('{"suite": "x", "rows": [', encoding="utf-8")
    with pytest.raises(ResultsQueryError, match=r"broken\.json"):
        connect(results)


def test_user_sql_reads_only_the_results_folder(results: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.csv"
    outside.write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(ResultsQueryError, match="Permission Error"):
        run_sql(f"SELECT * FROM read_csv('{outside}')", results)
    with pytest.raises(ResultsQueryError, match="Permission Error"):
        run_sql(f"COPY (SELECT 1) TO '{tmp_path / 'written.csv'}'", results)
    assert not (tmp_path / "written.csv").exists()


def test_a_file_rewritten_added_or_removed_is_seen_by_the_next_query(results: Path) -> None:
    """The files are read once into a snapshot, and again whenever one of them changes."""
    count = "SELECT count(*) FROM rows"
    assert run_sql(count, results)[1] == [(6,)]
    changed = _suite("2026-01-02T03:04:05+00:00", (0.9, 0.6))
    changed["rows"][0]["rerank_reused"] = {"logits": 20, "reused": 10}  # a field the views do not read
    (results / "mini.json").write_text(json.dumps(changed), encoding="utf-8")
    sql = "SELECT \"ndcg@10\" FROM rows WHERE file = 'mini' AND row = 'bm25'"
    assert run_sql(sql, results)[1] == [(0.9,)]
    (results / "mini-fake.json").unlink()
    assert run_sql(count, results)[1] == [(4,)]
    (results / "again.json").write_text(json.dumps(_suite("2026-01-03T00:00:00+00:00", (0.1, 0.2))))
    assert run_sql(count, results)[1] == [(6,)]


def test_user_sql_cannot_change_what_the_next_query_reads(results: Path) -> None:
    for statement in ("DROP TABLE snapshot.main.files", "DELETE FROM snapshot.main.files"):
        with pytest.raises(ResultsQueryError, match="read-only"):
            run_sql(statement, results)
    run_sql("DETACH snapshot", results)  # its own connection only
    assert run_sql("SELECT count(*) FROM rows", results)[1] == [(6,)]


def test_cli_sql_prints_an_aligned_table_or_json_lines(results: Path) -> None:
    sql = "SELECT row, \"doc ndcg@10\", embedder FROM rows WHERE file = 'beir-toy'"
    table = runner.invoke(app, ["results", "sql", sql, "--results-dir", str(results)])
    assert table.exit_code == 0, table.output
    assert table.output == (
        "row    doc ndcg@10  embedder\n"
        "-----  -----------  --------\n"
        "bm25           0.5  minilm\n"
        "dense          0.7  minilm\n"
        "(2 rows)\n"
    )
    lines = runner.invoke(app, ["results", "sql", sql, "--json", "--results-dir", str(results)])
    assert lines.exit_code == 0, lines.output
    assert [json.loads(line) for line in lines.output.splitlines()] == [
        {"row": "bm25", "doc ndcg@10": 0.5, "embedder": "minilm"},
        {"row": "dense", "doc ndcg@10": 0.7, "embedder": "minilm"},
    ]
    dated = runner.invoke(app, ["results", "sql", "SELECT date FROM suites LIMIT 1", "--json",
                                "--results-dir", str(results)])  # fmt: skip
    assert json.loads(dated.output) == {"date": "2026-02-02T00:00:00+00:00"}


def test_cli_bad_sql_gives_the_duckdb_text_and_exit_2(results: Path) -> None:
    result = runner.invoke(app, ["results", "sql", "SELEC 1", "--results-dir", str(results)])
    assert result.exit_code == 2
    assert result.output.startswith('error: the query failed: Parser Error: syntax error at or near "SELEC"')
    assert "LINE 1: SELEC 1" in result.output


def test_cli_views_lists_every_view_with_its_columns(results: Path) -> None:
    result = runner.invoke(app, ["results", "views", "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    headings = [line.split(":")[0] for line in result.output.splitlines() if not line.startswith(" ")]
    assert headings == [*VIEWS, "named queries (clear-rag results show NAME)", "the files as read, nested"]
    assert "  ndcg@10               DOUBLE" in result.output
    assert "  against_row  VARCHAR" in result.output
    assert "  best_rows      Per result file, the row with the best headline metric" in result.output


def test_cli_show_runs_a_named_query(results: Path) -> None:
    result = runner.invoke(app, ["results", "show", "best_rows", "--results-dir", str(results)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[2].split() == [
        "beir-toy",
        "beir-toy",
        "dense",
        "h-dense",
        "minilm",
        "doc",
        "ndcg@10",
        "0.7",
    ]
    unknown = runner.invoke(app, ["results", "show", "nope", "--results-dir", str(results)])
    assert unknown.exit_code == 2
    assert "error: 'nope': no such named query or view" in unknown.output


def test_every_row_of_the_real_tech_file_is_in_rows() -> None:
    tech = json.loads((REPO_RESULTS / "tech.json").read_text(encoding="utf-8"))
    found = dict(run_sql("SELECT row, \"ndcg@10\" FROM rows WHERE file = 'tech'", REPO_RESULTS)[1])
    assert tech["rows"]
    assert found == {row["name"]: row["metrics"]["ndcg@10"] for row in tech["rows"]}
    suites = {f for f, _ in run_sql("SELECT file, suite FROM suites", REPO_RESULTS)[1]}
    assert "retrieval" not in suites and "ingest" not in suites  # results/bench/ stays out


def test_without_duckdb_a_query_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    """DuckDB is an extra: where it is not installed, the result views say so, and nothing else needs
    it (the server and the CLI import this module without importing duckdb)."""
    import sys

    from clear_rag.errors import ResultsQueryError
    from clear_rag.results import queries

    monkeypatch.setitem(sys.modules, "duckdb", None)  # `import duckdb` now fails as if not installed
    with pytest.raises(ResultsQueryError, match=r"needs DuckDB.*pip install 'clear-rag\[results\]'"):
        queries.run_named("suites", Path(__file__).resolve().parents[2] / "results")


def test_the_server_and_the_cli_load_without_duckdb() -> None:
    import subprocess
    import sys

    code = (
        "import sys; sys.modules['duckdb'] = None\n"
        "import clear_rag.web.app, clear_rag.cli, clear_rag.results.answers\n"
        "print('loaded')"
    )
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert ran.returncode == 0 and "loaded" in ran.stdout, ran.stderr
