"""The technique check: probe questions from the store alone, verdicts from intervals, and its agreement."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from clear_rag.cli import app
from clear_rag.eval import agreement, check, metrics, probes
from clear_rag.providers.fake import HashEmbedder
from clear_rag.store.sqlite import Store
from clear_rag.train.pairs import held_out

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


def test_kendall_tau_of_equal_and_reversed_orders() -> None:
    assert metrics.kendall_tau([1, 2, 3, 4], [10, 20, 30, 40]) == 1.0
    assert metrics.kendall_tau([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0


def test_kendall_tau_b_with_ties_is_the_formula() -> None:
    # pairs of (1, 2, 2, 3) against (1, 3, 2, 4): (0,1) C, (0,2) C, (0,3) C, (1,2) tied in a alone,
    # (1,3) C, (2,3) C -> C = 5, D = 0, T_a = 1, T_b = 0
    assert metrics.kendall_tau([1, 2, 2, 3], [1, 3, 2, 4]) == pytest.approx(5 / math.sqrt((5 + 1) * 5))


def test_kendall_tau_with_no_order_to_compare() -> None:
    assert metrics.kendall_tau([1, 1, 1], [1, 2, 3]) == 0.0
    assert metrics.kendall_tau([], []) == 0.0


@given(st.lists(st.floats(-1, 1), min_size=2, max_size=8))
def test_kendall_tau_is_symmetric_and_bounded(values: list[float]) -> None:
    other = sorted(values)
    tau = metrics.kendall_tau(values, other)
    assert -1.0 <= tau <= 1.0
    assert tau == pytest.approx(metrics.kendall_tau(other, values))


@pytest.mark.parametrize(
    ("low", "high", "expected"),
    [
        (0.01, 0.2, "helps"),
        (-0.2, -0.01, "hurts"),
        (-0.1, 0.1, "no clear effect"),
        (0.0, 0.1, "no clear effect"),
    ],
)
def test_a_verdict_is_read_from_the_interval(low: float, high: float, expected: str) -> None:
    assert check.verdict({"ci_low": low, "ci_high": high}) == expected


def test_masking_takes_out_the_rarest_content_words() -> None:
    frequency = Counter({"replication": 9, "region": 1, "lag": 2, "between": 50, "primary": 8})
    query = "Replication lag between the primary and the region"
    # content words have four or more letters ("lag" is not one): region (1) and primary (8) go
    assert probes.masked(query, frequency, 2) == "Replication lag between the and the"
    assert probes.masked("two words", frequency, 2) == "two words"  # too few to mask
    assert probes.masked(query, frequency, 0) == query


def test_agreement_counts_verdicts_and_orders_rows() -> None:
    real = [
        {"name": "a", "ndcg@10": 0.5},
        {"name": "b", "ndcg@10": 0.6, "verdict": "helps"},
        {"name": "c", "ndcg@10": 0.4, "verdict": "hurts"},
    ]
    probe = [
        {"name": "a", "ndcg@10": 0.7},
        {"name": "b", "ndcg@10": 0.9, "verdict": "helps"},
        {"name": "c", "ndcg@10": 0.7, "verdict": "no clear effect"},
    ]
    found = agreement.agreement(real, probe, ("ndcg@10", "ndcg@10"))
    assert found["rows"] == 3
    assert found["verdicts"] == 2
    assert found["verdicts_agree"] == 1
    assert found["helps_or_hurts_agree"] == 1
    assert found["kendall_tau"] == pytest.approx(
        round(metrics.kendall_tau([0.5, 0.6, 0.4], [0.7, 0.9, 0.7]), 4)
    )


def test_the_summary_splits_each_row_by_what_training_saw() -> None:
    from clear_rag.results.document import aggregate, compared

    def row(name: str, values: list[float]) -> dict[str, object]:
        questions = [
            {"id": f"q{i}", "subset": "seen" if i % 2 else "unseen", "metrics": {"ndcg@10": v}}
            for i, v in enumerate(values)
        ]
        return {"name": name, "questions": questions, "metrics": aggregate(questions, ["ndcg@10"])}

    base = [0.2, 0.5, 0.4, 0.5, 0.1, 0.9, 0.3, 0.2]
    rows = [row("base", base), row("other", [v + (0.3 if i % 2 else -0.1) for i, v in enumerate(base)])]
    rows = compared(rows, "base")
    found = check.summary({"rows": rows}, "ndcg@10")
    assert "by_subset" not in found[0] or "verdict" not in found[0]["by_subset"]["seen"]
    split = found[1]["by_subset"]
    assert split["seen"]["difference"] == pytest.approx(0.3)
    assert split["unseen"]["difference"] == pytest.approx(-0.1)
    assert split["seen"]["verdict"] == "helps"
    assert split["unseen"]["verdict"] == "hurts"
    assert found[1]["difference"] == pytest.approx(0.1)


@pytest.fixture
def tech_store(tmp_path: Path) -> Path:
    directory = tmp_path / "store"
    result = runner.invoke(
        app, ["ingest", str(ROOT / "corpora" / "tech"), "--store", str(directory), "--embedder", "hash"]
    )
    assert result.exit_code == 0, result.output
    return directory


def test_probes_come_from_held_out_documents_and_label_their_sentence(tech_store: Path) -> None:
    settings = probes.CheckSettings(probes=40)
    with Store(tech_store) as store:
        labels = probes.probe_labels(store, settings)
        assert len(labels.questions) == 40
        for question in labels.questions:
            (label,) = question.labels
            assert held_out(label.doc_id, settings.pairs())  # ten documents: held apart by document
            assert store.document_text(label.doc_id)[label.start : label.end] == label.quote
            assert question.question  # masked, never empty
            assert set(re.findall(r"\w+", question.question)) <= set(re.findall(r"\w+", label.quote))


@pytest.mark.parametrize("cut", [False, True])
def test_the_check_runs_every_technique_on_the_fakes(tech_store: Path, cut: bool) -> None:
    with Store(tech_store) as store:
        found = check.check_store(
            store,
            embedder=HashEmbedder(),
            reranker="lexical",
            settings=probes.CheckSettings(probes=30, cut=cut),
        )
    assert found["settings"].get("cut", False) is cut
    names = [row["name"] for row in found["rows"]]
    assert names == [name for name, _ in check.TECHNIQUES]
    baseline, *others = found["rows"]
    assert "verdict" not in baseline
    for row in others:
        assert row["verdict"] in {"helps", "hurts", "no clear effect"}
        assert row["ci"][0] <= row["difference"] <= row["ci"][1]
        assert row["difference"] == pytest.approx(row["ndcg@10"] - baseline["ndcg@10"], abs=1e-4)
    assert found["probes"] == 30 if not cut else 0 < found["probes"] <= 30


def test_the_command_prints_each_row_and_how_far_to_trust_it(
    tech_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from clear_rag.cli import check as command

    agreement = tmp_path / "agreement.json"
    entry = {
        "suite": "tech",
        "questions": 70,
        "probes": 100,
        "agreement": {"kendall_tau": 0.5, "rows": 7, "verdicts": 6, "verdicts_agree": 4},
    }
    agreement.write_text(json.dumps({"suites": [entry]}), encoding="utf-8")
    monkeypatch.setattr(command, "AGREEMENT", agreement)
    monkeypatch.setattr(command.trust_lines, "__defaults__", (agreement,))
    result = runner.invoke(
        app,
        [
            "check",
            "--store",
            str(tech_store),
            "--embedder",
            "hash",
            "--reranker",
            "lexical",
            "--probes",
            "20",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "20 probe questions" in result.output
    assert "rerank, fused (shortlist 10)" in result.output
    assert "row order Kendall tau +0.50 over 7 rows; verdicts agree 4 of 6" in result.output


def test_a_folder_without_a_store_is_one_line(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", "--store", str(tmp_path / "none"), "--embedder", "hash"])
    assert result.exit_code != 0
    assert "holds no clear-rag store" in result.output


def test_a_store_of_one_document_is_probed_by_its_chunks(tmp_path: Path) -> None:
    directory = tmp_path / "profile"
    result = runner.invoke(
        app, ["ingest", str(ROOT / "corpora" / "profile"), "--store", str(directory), "--embedder", "hash"]
    )
    assert result.exit_code == 0, result.output
    with Store(directory) as store:
        labels = probes.probe_labels(store, probes.CheckSettings(probes=30))
        chunks = {c.id: c for c in store.chunks()}
    assert labels.questions
    settings = probes.CheckSettings().pairs()
    for question in labels.questions:
        chunk_id = question.id.split(":", 1)[1].split("@")[0]
        assert held_out(chunk_id, settings)  # its chunk drew "held apart"
        assert chunks[chunk_id].doc_id == question.labels[0].doc_id


def test_the_agreement_of_a_split_suite_is_saved_with_its_subsets_and_versions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check --agreement SUITE --save-results` on the fakes: every real row of a suite split by what
    training saw carries its seen and unseen parts, the file names the libraries that made it, and the
    rerankers' table sets one line per reranker file beside another."""
    from clear_rag.report.agreement import reranker_table
    from tests.toy import write_beir

    monkeypatch.chdir(tmp_path)
    write_beir(tmp_path / "toy")
    (tmp_path / "toy" / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\nt1\td1\t1\n")
    (tmp_path / "s.yaml").write_text(
        "name: s\nbeir: toy\ntraining_split: train\nbaseline: a\nrows: [{name: a}]\n", encoding="utf-8"
    )
    arguments = ["check", "--agreement", "s.yaml", "--embedder", "hash", "--reranker", "lexical"]
    result = runner.invoke(
        app, [*arguments, "--probes", "5", "--store", "st", "--save-results", "--out", "out.json"]
    )
    assert result.exit_code == 0, result.output
    document = json.loads((tmp_path / "out.json").read_text(encoding="utf-8"))
    assert document["kind"] == "check-agreement" and document["reranker"] == "lexical"
    assert {"python", "numpy"} <= set(document["versions"])
    (entry,) = document["suites"]
    assert entry["questions"] == 2
    for row in entry["real"]:
        assert set(row["by_subset"]) == {"seen", "unseen"}
    table = reranker_table([("a.json", document), ("b.json", {**document, "reranker": "x/other"})])
    lines = [line for line in table.splitlines() if line.startswith("| s |")]
    assert [line.split(" | ")[1] for line in lines] == ["lexical", "other"]
    assert "unseen questions" in table.splitlines()[0]
    unsplit = {
        **entry,
        "suite": "u",
        "real": [{k: v for k, v in r.items() if k != "by_subset"} for r in entry["real"]],
    }
    both = reranker_table([("a.json", document), ("c.json", {**document, "suites": [unsplit]})])
    (line,) = [line for line in both.splitlines() if line.startswith("| u |")]
    assert "no split" in line  # a suite with no seen/unseen parts is not read as wholly unseen


@given(
    st.text(alphabet="ab. ", min_size=1, max_size=40),
    st.lists(st.tuples(st.integers(0, 40), st.integers(0, 8)), max_size=5),
)
def test_cutting_spans_out_keeps_every_other_character_where_moved_says(
    text: str, raw: list[tuple[int, int]]
) -> None:
    from clear_rag.eval.cut import cut_document, merged, moved
    from clear_rag.types import Block, Document

    spans = merged((min(s, len(text)), min(s + n, len(text))) for s, n in raw)
    doc = Document("d", "d", "h", text, (Block("paragraph", 0, len(text)),))
    after = cut_document(doc, spans)
    kept = [i for i in range(len(text)) if not any(s <= i < e for s, e in spans)]
    assert after.text == "".join(text[i] for i in kept)
    assert all(after.text[moved(i, spans)] == text[i] for i in kept)
    assert moved(len(text), spans) == len(after.text)
    assert after.content_hash != doc.content_hash or not spans
    assert all(0 <= b.start < b.end <= len(after.text) for b in after.blocks)


def test_a_cut_copy_holds_no_probe_sentence_and_labels_what_is_left_of_its_chunk(
    tech_store: Path, tmp_path: Path
) -> None:
    from clear_rag.config import PipelineConfig
    from clear_rag.session import sync_indexes

    settings = probes.CheckSettings(probes=20, cut=True)
    with Store(tech_store) as store:
        before = {c.id: c.text for c in store.chunks()}
        sentences = {
            p.id: c.text[p.sentence[0] : p.sentence[1]] for p, c, _ in probes._probes(store, settings)
        }
        with probes.probing(store, settings) as (copy, labels):
            assert copy.directory != store.directory
            texts = [c.text for c in copy.chunks()]
            assert labels.questions and len(labels.questions) <= len(sentences)
            for question in labels.questions:
                assert not any(sentences[question.id] in text for text in texts)
                (label,) = question.labels
                assert copy.document_text(label.doc_id)[label.start : label.end] == label.quote
                assert label.quote.strip() == label.quote and label.quote
            sync_indexes(copy, [PipelineConfig()], None)
            where = copy.directory
        assert not where.exists()  # the copy goes when the check is done
        assert {c.id: c.text for c in store.chunks()} == before  # and the store was never touched
