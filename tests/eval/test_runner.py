"""The one evaluation runner end to end on the fake providers: rows, comparisons, replay, determinism,
a rerank row, generations from the cache, and the same trace as `clear-rag ask` for one question."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.eval import runner as ablate
from clear_rag.eval import stores
from clear_rag.eval.golden import LabelError
from clear_rag.eval.loss import VERDICTS
from clear_rag.eval.suite import load_suite
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store import Store
from tests.toy import GOLDEN, suite_yaml

SUITE = suite_yaml(
    "toy",
    "{name: dense, set: {retrievers: [vector]}}",
    "{name: bm25, set: {retrievers: [keyword]}}",
    "{name: hybrid}",
    "{name: hybrid minmax, set: {fusion: minmax}}",
    "{name: bigger chunks, set: {chunking: {size: 32}}}",
    "{name: hybrid + rerank, set: {rerank: true, reranker: lexical}}",
)


@pytest.fixture
def project(tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "golden.yaml").write_text(GOLDEN, encoding="utf-8")
    (tmp_path / "toy.yaml").write_text(SUITE, encoding="utf-8")
    return tmp_path


def test_rows_metrics_and_comparisons(project: Path) -> None:
    suite = load_suite("toy.yaml")
    result = ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores")
    rows = {r["name"]: r for r in result["rows"]}
    assert list(rows) == ["dense", "bm25", "hybrid", "hybrid minmax", "bigger chunks", "hybrid + rerank"]
    assert result["golden"]["questions"] == 3
    bm25 = {q["id"]: q for q in rows["bm25"]["questions"]}
    assert bm25["pads"]["first_rank"] == 1
    assert bm25["pads"]["metrics"]["mrr@10"] == 1.0
    assert bm25["chain"]["labels"] == 2
    assert rows["hybrid"]["comparisons"].keys() == {"previous"}
    versus = rows["dense"]["comparisons"]["baseline"]["ndcg@10"]
    assert versus["against"] == "hybrid"
    assert versus["up"] + versus["down"] + versus["ties"] == 3
    assert rows["bm25"]["models"].get("embedder") is None
    assert rows["dense"]["models"]["embedder"].startswith("hash")
    assert rows["bigger chunks"]["store"] != rows["hybrid"]["store"]  # its own chunking, its own store
    assert rows["hybrid + rerank"]["models"]["reranker"] == "lexical-reranker@overlap-1"
    assert result["metric_names"] == ["recall@5", "recall@10", "mrr@10", "ndcg@10"]
    assert result["headline"] == "ndcg@10" and result["skipped"] == []
    assert result["metric_questions"] == {name: 3 for name in result["metric_names"]}


def test_every_question_with_span_labels_carries_where_its_answer_was_lost(project: Path) -> None:
    suite = load_suite("toy.yaml")
    result = ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores")
    for row in result["rows"]:
        top_k = row["config"]["top_k"]
        for question in row["questions"]:
            lost = question["lost"]
            assert lost["verdict"] in VERDICTS
            # the verdict agrees with the final ranking's first covering rank
            rank = question["first_rank"]
            if lost["verdict"] == "never retrieved":
                assert rank is None
            if rank is not None and rank <= top_k and lost["verdict"] != "cut by the token budget":
                assert lost["verdict"] == "found", (row["name"], question["id"], lost)
            if lost["verdict"] == "found":
                assert rank is not None and rank <= top_k


def test_a_rerank_row_runs_on_the_fake_and_reranks_the_fused_shortlist(project: Path) -> None:
    suite = load_suite("toy.yaml")
    result = ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores")
    row = result["rows"][-1]
    with Store(Path(row["store"])) as store:
        trace = store.load_trace(row["questions"][0]["trace"])
    assert [s.name for s in trace.stages] == ["keyword", "vector", "fusion", "rerank", "context"]
    assert row["questions"][0]["retrieved"] == [c.chunk_id for c in trace.stages[3].candidates[:10]]


def test_a_rerank_row_whose_reranker_is_not_here_is_skipped_with_its_reason(project: Path) -> None:
    (project / "toy.yaml").write_text(SUITE.replace("reranker: lexical", "reranker: ms-marco-minilm-l6"))
    suite = load_suite("toy.yaml")
    result = ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores")
    assert [r["name"] for r in result["rows"]][-1] == "bigger chunks"
    (skipped,) = result["skipped"]
    assert (
        skipped["name"] == "hybrid + rerank"
        and "clear-rag models pull ms-marco-minilm-l6" in skipped["reason"]
    )
    # --reranker gives every row that reranks the named one, and then it runs
    rerun = ablate.run_suite(
        suite.with_reranker("lexical"), embedder=HashEmbedder(dim=64), root=project / "s"
    )
    assert rerun["skipped"] == [] and rerun["rows"][-1]["config"]["reranker"] == "lexical"


def test_replay_from_stored_traces_equals_the_live_run(project: Path) -> None:
    suite = load_suite("toy.yaml")
    result = ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores")
    replayed = ablate.replay(result, suite, root=project / "stores")
    for row in result["rows"]:
        recorded = {q["id"]: {"metrics": q["metrics"], "lost": q["lost"]} for q in row["questions"]}
        assert recorded == replayed[row["name"]]


def test_two_runs_give_identical_metrics(project: Path) -> None:
    runner = CliRunner()
    outputs = []
    for run in ("one", "two"):
        result = runner.invoke(
            app, ["ablate", "toy.yaml", "--embedder", "hash", "--save-results", "--results-dir", run]
        )
        assert result.exit_code == 0, result.output
        data = json.loads((project / run / "toy.json").read_text())
        outputs.append([(r["metrics"], r["by_category"], r["comparisons"]) for r in data["rows"]])
    assert outputs[0] == outputs[1]
    replay = runner.invoke(app, ["ablate", "toy.yaml", "--replay", "--results-dir", "two"])
    assert replay.exit_code == 0, replay.output
    assert "all metrics and verdicts identical" in replay.output


def test_rechunking_at_another_size_keeps_labels_valid(project: Path) -> None:
    suite = load_suite("toy.yaml")
    spans = set()
    for size in (4, 16, 64):
        chunking = suite.rows[0].config.chunking.replace(chunker="fixed", size=size, overlap=0)
        store, _ = stores.prepare(suite, chunking, project / "stores", HashEmbedder(dim=64))
        with store:
            labels = stores.suite_labels(suite, store)
        spans.add(tuple((b.doc_id, b.start, b.end) for q in labels.questions for b in q.labels))
    assert len(spans) == 1


def test_ambiguous_and_missing_quotes_are_errors(project: Path) -> None:
    golden = project / "golden.yaml"
    golden.write_text(GOLDEN.replace("bleed yearly", "ee"), encoding="utf-8")
    with pytest.raises(
        LabelError, match=r"chain: quote 'ee' matches 2 times in docs/a.md \(docs/a.md at \d+"
    ):
        ablate.run_suite(load_suite("toy.yaml"), embedder=HashEmbedder(dim=64), root=project / "s")
    golden.write_text(GOLDEN.replace("80 to 100 psi", "90 psi"), encoding="utf-8")
    with pytest.raises(
        LabelError, match=r"pressure: quote .* matches nothing in the corpus; its first 6 words"
    ):
        ablate.run_suite(load_suite("toy.yaml"), embedder=HashEmbedder(dim=64), root=project / "s")


def test_expansion_and_hyde_rows_ask_the_chat_model(project: Path) -> None:
    from clear_rag.errors import ConfigError
    from clear_rag.providers.fake import ScriptedChatModel

    (project / "expand.yaml").write_text(
        suite_yaml(
            "toy-expand", "{name: hybrid}", "{name: hybrid + expansion, set: {expand: 2, hyde: true}}"
        ),
        encoding="utf-8",
    )
    suite = load_suite("expand.yaml")
    with pytest.raises(ConfigError, match="needs a chat model"):
        ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores")
    chat = ScriptedChatModel()
    for _ in range(3):  # three questions: phrasings, then a HyDE passage, for each
        chat.enqueue("rotor wear limit\npad thickness")
        chat.enqueue("Pads are replaced when worn.")
    result = ablate.run_suite(suite, embedder=HashEmbedder(dim=64), root=project / "stores", chat=chat)
    expanded = result["rows"][1]
    assert expanded["models"]["chat"] == "scripted-chat@1"
    assert "chat" not in result["rows"][0]["models"]
    assert len(chat.history) == 6
    with Store(Path(expanded["store"])) as store:
        trace = store.load_trace(expanded["questions"][0]["trace"])
    assert trace.phrasings[1:] == ("rotor wear limit", "pad thickness")
    assert any(s.name == "vector·hyde" for s in trace.stages)


def test_replay_where_nothing_has_run_says_so_and_creates_nothing(project: Path) -> None:
    runner = CliRunner()
    (project / "results").mkdir()
    fresh = runner.invoke(app, ["ablate", "toy.yaml", "--replay"])
    assert fresh.exit_code == 2 and "results/toy.json: does not exist" in fresh.output
    ran = runner.invoke(
        app, ["ablate", "toy.yaml", "--embedder", "hash", "--save-results", "--store", "elsewhere"]
    )
    assert ran.exit_code == 0, ran.output
    assert (project / "elsewhere" / "ablate").is_dir() and not (
        project / ".clear-rag"
    ).exists()  # --store honoured
    cloned = runner.invoke(app, ["ablate", "toy.yaml", "--replay"])  # as in a fresh clone: no stores here
    assert cloned.exit_code == 2
    assert "was measured in stores this machine does not have" in cloned.output
    assert "Run `clear-rag ablate toy` (or `make run`) first, then replay" in cloned.output
    assert not (project / ".clear-rag").exists()  # no empty database left behind
    replayed = runner.invoke(app, ["ablate", "toy.yaml", "--replay", "--store", "elsewhere"])
    assert replayed.exit_code == 0 and "all metrics and verdicts identical" in replayed.output


def test_another_golden_set_against_the_suites_rows(project: Path) -> None:
    (project / "mine.yaml").write_text(
        "questions:\n"
        '  - {id: mine, question: "rotor check", category: factual, answers: [{quote: check rotor}]}\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["ablate", "toy.yaml", "--golden", "mine.yaml", "--embedder", "hash", "--save-results"]
    )
    assert result.exit_code == 0, result.output
    assert not (project / "results" / "toy.json").exists()  # the suite's own result is not replaced
    document = json.loads((project / "results" / "toy-mine.json").read_text())
    assert document["golden"]["questions"] == 1 and document["golden"]["path"] == "mine.yaml"
    assert [q["id"] for q in document["rows"][0]["questions"]] == ["mine"]


def test_generations_are_cached_beside_the_result_and_regenerate_reports_changes(project: Path) -> None:
    (project / "expand.yaml").write_text(
        suite_yaml("toy-expand", "{name: hybrid}", "{name: expanded, set: {expand: 2, hyde: true}}"),
        encoding="utf-8",
    )
    runner = CliRunner()
    args = ["ablate", "expand.yaml", "--embedder", "hash", "--chat", "echo", "--save-results"]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    assert "generations: 6 generations: 0 from the cache, 6 generated" in first.output
    cache = json.loads((project / "results" / "generations" / "toy-expand.json").read_text())
    assert len(cache["generations"]) == 6  # three questions, a phrasing prompt and a HyDE prompt each
    again = runner.invoke(app, args)
    assert "generations: 6 generations: 6 from the cache, 0 generated" in again.output
    regenerated = runner.invoke(app, [*args, "--regenerate"])
    assert regenerated.exit_code == 0, regenerated.output
    assert "6 regenerated: 0 changed" in regenerated.output
    assert "toy-expand: 2 of 2 rows reproduce results/toy-expand.json" in regenerated.output


def test_one_row_runs_alone_and_merges_into_the_suite_file(project: Path) -> None:
    """``--row`` re-runs a row of the suite into its result file; with --set and --name it makes a new
    row compared with the one --against names, whose recorded command makes it again."""
    runner = CliRunner()
    ran = runner.invoke(app, ["ablate", "toy.yaml", "--embedder", "hash", "--save-results"])
    assert ran.exit_code == 0, ran.output
    before = json.loads((project / "results" / "toy.json").read_text())
    by_name = {r["name"]: r for r in before["rows"]}
    alone = ["ablate", "toy.yaml", "--row", "bm25", "--embedder", "hash", "--save-results"]
    again = runner.invoke(app, alone)
    assert again.exit_code == 0, again.output
    after = json.loads((project / "results" / "toy.json").read_text())
    assert [r["name"] for r in after["rows"]] == [r["name"] for r in before["rows"]]
    assert {r["name"]: r["metrics"] for r in after["rows"]} == {n: r["metrics"] for n, r in by_name.items()}
    assert "row_commands" not in after  # a suite row is made again by the suite's own command
    assert after["command"] == before["command"] == "clear-rag ablate toy.yaml --embedder hash --save-results"
    # into a file that does not exist yet, the row records its own command: no other makes it
    first = runner.invoke(app, [*alone, "--results-dir", "first"])
    assert first.exit_code == 0, first.output
    alone_file = json.loads((project / "first" / "toy.json").read_text())
    assert "command" not in alone_file
    assert alone_file["row_commands"] == {
        "bm25": "clear-rag ablate toy.yaml --row bm25 --results-dir first --save-results"
    }

    args = ["ablate", "toy.yaml", "--row", "hybrid minmax", "--set", "stem=true", "--embedder", "hash"]
    made = runner.invoke(app, [*args, "--name", "hybrid minmax, stemmed", "--against", "hybrid minmax",
                               "--save-results"])  # fmt: skip
    assert made.exit_code == 0, made.output
    merged = json.loads((project / "results" / "toy.json").read_text())
    rows = {r["name"]: r for r in merged["rows"]}
    assert list(rows)[-1] == "hybrid minmax, stemmed" and rows["hybrid minmax, stemmed"]["config"]["stem"]
    # a suite row missing from the file goes back to its place in the suite, not to the end
    merged["rows"] = [r for r in merged["rows"] if r["name"] != "bm25"]
    (project / "results" / "toy.json").write_text(json.dumps(merged), encoding="utf-8")
    back = runner.invoke(app, alone)
    assert back.exit_code == 0, back.output
    restored = json.loads((project / "results" / "toy.json").read_text())
    assert [r["name"] for r in restored["rows"]] == list(rows)
    assert rows["hybrid minmax, stemmed"]["comparisons"]["previous"]["ndcg@10"]["against"] == "hybrid minmax"
    command = merged["row_commands"]["hybrid minmax, stemmed"]
    assert shlex.split(command)[:5] == ["clear-rag", "ablate", "toy.yaml", "--row", "hybrid minmax"]
    (project / "again").mkdir()
    (project / "again" / "toy.json").write_text(json.dumps(before), encoding="utf-8")
    rerun = runner.invoke(app, [*shlex.split(command)[1:], "--results-dir", "again"])
    assert rerun.exit_code == 0, rerun.output
    remade = {r["name"]: r for r in json.loads((project / "again" / "toy.json").read_text())["rows"]}
    assert remade["hybrid minmax, stemmed"]["metrics"] == rows["hybrid minmax, stemmed"]["metrics"]

    for wrong, said in (
        (["--row", "no such row"], "Name one of its rows: dense, bm25"),
        (["--row", "bm25", "--name", "dense"], "is the name of another row of the suite"),
        (["--set", "stem=true"], "changes one row, and no --row names it"),
        (["--row", "bm25", "--bless"], "works on the whole suite"),
        (["--row", "bm25", "--regenerate"], "--regenerate: works on the whole suite"),
        (["--row", "bm25", "--against", "gone", "--save-results"], "is not a row of results/toy.json"),
    ):
        failed = runner.invoke(app, ["ablate", "toy.yaml", "--embedder", "hash", *wrong])
        assert failed.exit_code != 0 and said in failed.output, (wrong, failed.output)
