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
from clear_rag.eval import check, metrics
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
    assert check.masked(query, frequency, 2) == "Replication lag between the and the"
    assert check.masked("two words", frequency, 2) == "two words"  # too few to mask
    assert check.masked(query, frequency, 0) == query


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
    found = check.agreement(real, probe, ("ndcg@10", "ndcg@10"))
    assert found["rows"] == 3
    assert found["verdicts"] == 2
    assert found["verdicts_agree"] == 1
    assert found["helps_or_hurts_agree"] == 1
    assert found["kendall_tau"] == pytest.approx(
        round(metrics.kendall_tau([0.5, 0.6, 0.4], [0.7, 0.9, 0.7]), 4)
    )


@pytest.fixture
def tech_store(tmp_path: Path) -> Path:
    directory = tmp_path / "store"
    result = runner.invoke(
        app, ["ingest", str(ROOT / "corpora" / "tech"), "--store", str(directory), "--embedder", "hash"]
    )
    assert result.exit_code == 0, result.output
    return directory


def test_probes_come_from_held_out_documents_and_label_their_sentence(tech_store: Path) -> None:
    settings = check.CheckSettings(probes=40)
    with Store(tech_store) as store:
        labels = check.probe_labels(store, settings)
        assert len(labels.questions) == 40
        for question in labels.questions:
            (label,) = question.labels
            assert held_out(label.doc_id, settings.pairs())  # ten documents: held apart by document
            assert store.document_text(label.doc_id)[label.start : label.end] == label.quote
            assert question.question  # masked, never empty
            assert set(re.findall(r"\w+", question.question)) <= set(re.findall(r"\w+", label.quote))


def test_the_check_runs_every_technique_on_the_fakes(tech_store: Path) -> None:
    with Store(tech_store) as store:
        found = check.check_store(
            store, embedder=HashEmbedder(), reranker="lexical", settings=check.CheckSettings(probes=30)
        )
    names = [row["name"] for row in found["rows"]]
    assert names == [name for name, _ in check.TECHNIQUES]
    baseline, *others = found["rows"]
    assert "verdict" not in baseline
    for row in others:
        assert row["verdict"] in {"helps", "hurts", "no clear effect"}
        assert row["ci"][0] <= row["difference"] <= row["ci"][1]
        assert row["difference"] == pytest.approx(row["ndcg@10"] - baseline["ndcg@10"], abs=1e-4)
    assert found["probes"] == 30


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
        labels = check.probe_labels(store, check.CheckSettings(probes=30))
        chunks = {c.id: c for c in store.chunks()}
    assert labels.questions
    settings = check.CheckSettings().pairs()
    for question in labels.questions:
        chunk_id = question.id.split(":", 1)[1].split("@")[0]
        assert held_out(chunk_id, settings)  # its chunk drew "held apart"
        assert chunks[chunk_id].doc_id == question.labels[0].doc_id
