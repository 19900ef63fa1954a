"""The Results API over HTTP on a real server: a hand-made result file, and a toy suite run for real on the
fakes so its stores and traces exist; file names only, and every error JSON while the server serves on."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clear_rag.eval.golden import read_golden
from clear_rag.eval.loss import VERDICTS
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.results.files import write_result
from clear_rag.results.pinned import against_pinned
from clear_rag.results.questions import questions
from clear_rag.store import Store
from clear_rag.web.app import create_app
from clear_rag.web.runner import Models
from clear_rag.web.serving import serving
from tests.conftest import toy_config
from tests.toy import suite_yaml, write_beir
from tests.web.projects import mini_result, results_project

SUITE = suite_yaml("toy", "{name: bm25, set: {retrievers: [keyword]}}", "{name: hybrid}")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A toy project whose suite ran for real (results/toy.json, stores under stores/), beside mini.json."""
    return results_project(tmp_path_factory.mktemp("project"), SUITE)


@pytest.fixture(scope="module")
def base(project: Path) -> Iterator[str]:
    models = Models(HashEmbedder(dim=64), EchoChatModel(), lambda name: LexicalReranker(), {})
    with Store(project / "s", root=project) as store:
        app = create_app(store, toy_config(), models, results_dir=project / "results")
        with serving(app) as url:
            yield url


def get(url: str, status: int = 200) -> Any:
    response = httpx.get(url, timeout=60)
    assert response.status_code == status, response.text
    assert response.headers["content-type"] == "application/json"
    return response.json()


def error(url: str, status: int) -> str:
    message = get(url, status)["error"]
    assert isinstance(message, str) and "\n" not in message
    return message


def test_the_files_are_listed_with_their_rows_metrics_models_and_losses(base: str, project: Path) -> None:
    files = {f["file"]: f for f in get(f"{base}/api/results")["files"]}
    assert list(files) == ["mini", "toy"]
    mini = files["mini"]
    assert (mini["suite"], mini["headline"], mini["baseline"]) == ("mini", "ndcg@10", "hybrid")
    assert mini["date"] == "2026-01-02T00:00:00+00:00"
    hybrid, bm25 = mini["rows"]
    assert (hybrid["name"], hybrid["config_hash"], hybrid["models"]) == ("hybrid", "h1", {"embedder": "hash"})
    assert bm25["metrics"] == {"ndcg@10": pytest.approx((1 / 2 + 1) / 3)}
    assert hybrid["lost"] == {**dict.fromkeys(VERDICTS, 0), "found": 1, "never retrieved": 2}
    for row in files["toy"]["rows"]:
        assert sum(row["lost"].values()) == row["questions"] == 3
        assert set(row["metrics"]) == {"recall@5", "recall@10", "mrr@10", "ndcg@10"}


def test_a_file_is_its_document_by_name_only(base: str, project: Path) -> None:
    assert get(f"{base}/api/results/mini") == mini_result()
    assert get(f"{base}/api/results/mini.json") == mini_result()
    assert "The files are: mini, toy" in error(f"{base}/api/results/tech", 404)
    for name in ("%2E%2E", "a..b", ".hidden", "..%5Cmini"):
        assert "not a result file name" in error(f"{base}/api/results/{name}", 400)
    # a slash never reaches a handler: no route has a path for a file name
    assert "no such endpoint" in error(f"{base}/api/results/..%2F..%2Fetc%2Fpasswd", 404)


def test_a_pinned_row_reads_every_other_row_against_it(base: str) -> None:
    read = get(f"{base}/api/results/mini/pinned/hybrid")
    assert read["rows"] == json.loads(json.dumps(against_pinned(mini_result(), "hybrid")))
    (bm25,) = read["rows"]
    assert bm25["config_diff"] == {"chunking.size": [96, 192]}
    assert bm25["comparisons"]["ndcg@10"]["difference"] == round((1 / 2 - 1 + 1 - 0 + 0) / 3, 6)
    message = error(f"{base}/api/results/mini/pinned/hybird", 404)
    assert message.startswith("mini.json: row='hybird': no row has this name") and "'hybrid'?" in message


def test_the_questions_behind_a_cell(base: str) -> None:
    found = get(f"{base}/api/results/mini/moves?pinned=hybrid&row=bm25&metric=ndcg@10")
    assert (found["up"], found["down"]) == (1, 1)
    up, down = found["moves"]
    assert (up["id"], up["direction"], up["pinned"]["verdict"], up["row"]["verdict"]) == (
        "q2", "up", "never retrieved", "found"
    )  # fmt: skip
    assert (down["id"], down["pinned"]["first_rank"], down["row"]["first_rank"]) == ("q1", 1, 2)
    assert "'metric' is missing" in error(f"{base}/api/results/mini/moves?pinned=hybrid&row=bm25", 400)
    unknown = error(f"{base}/api/results/mini/moves?pinned=hybrid&row=bm25&metric=mrr", 404)
    assert unknown.startswith("mini.json: metric='mrr': is not a metric of this file. Use one of: ndcg@10")


def test_a_stored_trace_with_its_replayed_events_and_covering_chunks(base: str, project: Path) -> None:
    document = json.loads((project / "results" / "toy.json").read_text(encoding="utf-8"))
    row = document["rows"][0]
    question = next(q for q in row["questions"] if q["first_rank"] is not None)
    shown = get(f"{base}/api/results/toy/trace/{row['name']}/{question['trace']}")
    assert shown["trace"]["id"] == question["trace"]
    assert shown["question"]["id"] == question["id"] and shown["question"]["lost"] == question["lost"]
    assert (
        shown["events"][0]["event"] == "query"
        and shown["events"][-1]["data"]["trace_id"] == question["trace"]
    )
    stages = {s["name"]: s for s in shown["trace"]["stages"]}
    for stage, rank in question["lost"]["ranks"].items():
        if rank is not None:
            assert shown["covering"][stage] == stages[stage]["candidates"][rank - 1]["chunk_id"]
    assert shown["covering"], "a question with a covering rank marks its chunk"
    other = document["rows"][1]["questions"][0]["trace"]
    assert "has no question whose trace is" in error(f"{base}/api/results/toy/trace/bm25/{other}", 404)


def test_a_missing_store_says_so_and_gives_the_commands_and_the_server_serves_on(
    base: str, project: Path
) -> None:
    moved = copy.deepcopy(json.loads((project / "results" / "toy.json").read_text(encoding="utf-8")))
    moved["rows"][0]["store"] = str(project / "gone")
    write_result(project / "results" / "moved.json", moved)
    (project / "results" / "broken.json").write_text("{", encoding="utf-8")
    shapeless = {
        "suite": "x",
        "metric_names": ["ndcg@10"],
        "rows": [{"name": "a", "config": {}}, {"name": "b"}],
    }
    # written by hand, as no writer of clear-rag would write it (write_result refuses the shape)
    (project / "results" / "shapeless.json").write_text(json.dumps(shapeless), encoding="utf-8")
    try:
        trace = moved["rows"][0]["questions"][0]["trace"]
        message = error(f"{base}/api/results/moved/trace/bm25/{trace}", 404)
        assert f"trace {trace!r} is not here" in message and "holds no store" in message
        assert (
            "`clear-rag ablate toy --save-results`" in message
            and "`clear-rag ablate toy --replay`" in message
        )
        assert "cannot be read as JSON" in error(f"{base}/api/results/broken", 422)
        # the list skips the one file it cannot read and names it (it was a 422 for the whole list)
        listed = get(f"{base}/api/results")
        assert [f["file"] for f in listed["files"]] == ["mini", "moved", "shapeless", "toy"]
        assert [u["file"] for u in listed["unreadable"]] == ["broken"]
        said = listed["unreadable"][0]["error"]
        assert said.startswith("broken.json: is left out of the list: DuckDB cannot read it"), said
        message = error(f"{base}/api/results/shapeless/pinned/a", 422)
        assert "shapeless.json: is not in the shape of a suite's result file: date: Field required" in message
    finally:
        (project / "results" / "shapeless.json").unlink()
        (project / "results" / "broken.json").unlink()
        (project / "results" / "moved.json").unlink()
    assert [f["file"] for f in get(f"{base}/api/results")["files"]] == ["mini", "toy"]


def test_no_result_files_is_an_empty_list(tmp_path: Path) -> None:
    models = Models(HashEmbedder(dim=64), EchoChatModel(), lambda name: LexicalReranker(), {})
    with (
        Store(tmp_path / "s", root=tmp_path) as store,
        serving(create_app(store, toy_config(), models, results_dir=tmp_path / "none")) as url,
    ):
        assert get(f"{url}/api/results") == {"files": []}
        assert "no such result file" in error(f"{url}/api/results/tech", 404)


def test_a_files_questions_are_the_words_of_the_labels_it_names(base: str, project: Path) -> None:
    document = json.loads((project / "results" / "toy.json").read_text(encoding="utf-8"))
    named = document["golden"]["path"]
    written, _ = read_golden(project / named)  # relative to the folder the suite ran in
    words = get(f"{base}/api/results/toy/questions")
    assert (words["file"], words["source"]) == ("toy", named)
    assert words["changed"] is None and words["unavailable"] is None
    assert words["questions"] == [
        {"id": q.id, "question": q.question,
         "quotes": [{"doc": a.doc or "", "quote": a.quote} for a in q.answers or ()]}
        for q in written.questions
    ]  # fmt: skip
    # a file that names no labels reads by ids alone, and says why
    alone = get(f"{base}/api/results/mini/questions")
    assert alone["questions"] == [] and "names no labels file" in alone["unavailable"]
    # labels changed since the file was written are said to have changed
    stale = copy.deepcopy(document)
    stale["golden"]["sha256"] = "0" * 64
    write_result(project / "results" / "stale.json", stale)
    try:
        changed = get(f"{base}/api/results/stale/questions")
        assert changed["questions"] == words["questions"]
        assert f"{named} has changed since stale.json was written" in changed["changed"]
        assert "`clear-rag ablate toy --save-results`" in changed["changed"]
    finally:
        (project / "results" / "stale.json").unlink()


def test_a_beir_splits_questions_are_its_queries_with_their_rationale_sentences(tmp_path: Path) -> None:
    write_beir(tmp_path / "beir", rationales=True)
    paths = "beir/qrels/test.tsv, beir/test_rationale_spans.jsonl"
    words = questions("scifact", {"suite": "scifact", "golden": {"path": paths}}, tmp_path)
    assert words["unavailable"] is None
    assert words["questions"] == [
        {"id": "q1", "question": "brake pads", "judged": ["d1", "d3"],
         "quotes": [{"doc": "d1", "quote": "Disc brake pads wear down."}]},
        {"id": "q2", "question": "tyre grip", "judged": ["d3"],
         "quotes": [{"doc": "d2", "quote": "Tyre pressure"}]},
    ]  # fmt: skip
    # judged by qrels alone: no quote, the judged documents; a dataset not here: ids alone, said once
    qrels = questions("beir", {"golden": {"path": "beir/qrels/test.tsv"}}, tmp_path)
    assert [q["quotes"] for q in qrels["questions"]] == [[], []]
    gone = questions("beir", {"golden": {"path": "elsewhere/qrels/test.tsv"}}, tmp_path)
    assert gone["questions"] == [] and "elsewhere/qrels/test.tsv are not here" in gone["unavailable"]
    assert str(tmp_path) not in json.dumps(gone)  # no machine path in an answer


def test_a_default_that_a_row_merely_lacks_is_no_difference(base: str, project: Path) -> None:
    """Rows written before rerank_fusion existed, beside a row merged in later that records it at its
    default: no difference; at another value it is one."""
    merged = copy.deepcopy(json.loads((project / "results" / "toy.json").read_text(encoding="utf-8")))
    hybrid = next(r for r in merged["rows"] if r["name"] == "hybrid")
    del hybrid["config"]["rerank_fusion"]
    write_result(project / "results" / "merged.json", merged)
    try:
        (bm25,) = get(f"{base}/api/results/merged/pinned/hybrid")["rows"]
        assert "rerank_fusion" not in bm25["config_diff"]
        assert bm25["config_diff"]["retrievers"] == [["keyword", "vector"], ["keyword"]]
        next(r for r in merged["rows"] if r["name"] == "bm25")["config"]["rerank_fusion"] = "rrf"
        write_result(project / "results" / "merged.json", merged)
        (bm25,) = get(f"{base}/api/results/merged/pinned/hybrid")["rows"]
        assert bm25["config_diff"]["rerank_fusion"] == [None, "rrf"]
    finally:
        (project / "results" / "merged.json").unlink()
