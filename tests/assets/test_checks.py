"""The asset checks, called directly on a store of the tiny project and on result documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from dagster import AssetCheckResult

from assets import checks
from clear_rag.config import ChunkingConfig
from clear_rag.eval.stores import fill_store
from clear_rag.eval.suite import Suite, load_suite
from clear_rag.store.sqlite import Store

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "results" / "baseline-fake.json"


def _meta(result: AssetCheckResult, name: str) -> Any:
    return result.metadata[name].value


@pytest.fixture
def store(project: Path) -> Store:
    opened, _ = fill_store(
        load_suite("toy"), ChunkingConfig(chunker="fixed", size=8, overlap=1), project / "stores"
    )
    return opened


def test_golden_quotes_resolve_once_and_a_quote_matching_twice_fails(project: Path, store: Store) -> None:
    with store:
        passed = checks.golden_resolves(load_suite("toy"), store)
        assert passed.passed and _meta(passed, "labels") == 4
        golden = project / "golden.yaml"
        golden.write_text(golden.read_text().replace("bleed yearly", "ee"), encoding="utf-8")
        failed = checks.golden_resolves(load_suite("toy"), store)
    assert not failed.passed
    assert "matches 2 times" in str(_meta(failed, "error"))


def test_chunk_spans_hold_on_a_sample(store: Store) -> None:
    with store:
        result = checks.spans_hold(store)
    assert result.passed
    assert _meta(result, "sampled") == _meta(result, "chunks") > 0


def _baseline() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(BASELINE.read_text(encoding="utf-8"))
    return data


def _tech() -> Suite:
    return Suite("tech", Path("golden/suites/tech.yaml"), (), "hybrid rrf")


def test_a_row_equal_to_the_fake_baseline_passes_and_a_moved_one_fails() -> None:
    row = {**_baseline()["rows"][0], "golden_sha256": _baseline()["golden"]["sha256"]}
    assert checks.matches_baseline(row, _tech(), "hash", BASELINE).passed
    moved = {**row, "metrics": {**row["metrics"], "ndcg@10": row["metrics"]["ndcg@10"] + 0.01}}
    failed = checks.matches_baseline(moved, _tech(), "hash", BASELINE)
    assert not failed.passed and list(_meta(failed, "moved")) == ["ndcg@10"]


def test_the_baseline_does_not_apply_to_a_real_model_or_another_suite() -> None:
    row = {**_baseline()["rows"][0], "golden_sha256": _baseline()["golden"]["sha256"], "metrics": {}}
    for embedder, suite in (("minilm", _tech()), ("hash", Suite("toy", Path("toy.yaml"), (), "x"))):
        result = checks.matches_baseline(row, suite, embedder, BASELINE)
        assert result.passed and _meta(result, "applies") is False


def test_a_result_missing_a_key_fails() -> None:
    suite = Suite("tech", Path("tech.yaml"), (), "hybrid rrf")
    document: dict[str, Any] = {key: None for key in checks.RESULT_KEYS} | {"rows": [], "skipped": []}
    assert checks.has_expected_keys(document, suite).passed
    document.pop("metric_names")
    assert not checks.has_expected_keys(document, suite).passed
