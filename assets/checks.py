"""Asset checks, declared on their assets (``check_specs``) and computed in the same step.

Each check reads what its asset just wrote, so a failure names the partition that produced it:

- store: every golden quote resolves to exactly one span; chunk spans hold on a sample of chunks;
- evaluation: on the fake embedder, a row's metrics equal the committed ``results/baseline-fake.json``;
- result: the result document has the keys ``clear-rag ablate`` writes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from dagster import AssetCheckResult, AssetCheckSeverity, AssetCheckSpec, AssetKey

from clear_rag.eval.golden import LabelError
from clear_rag.eval.stores import suite_labels
from clear_rag.eval.suite import Suite
from clear_rag.store.sqlite import Store

GOLDEN = "golden_quotes_resolve_once"
SPANS = "chunk_spans_hold"
BASELINE = "matches_fake_baseline"
KEYS = "result_has_expected_keys"

SAMPLE = 200  # chunks checked per store: every n-th, so the sample spans every document
TOLERANCE = 1e-4
RESULT_KEYS = (
    "suite",
    "date",
    "embedder",
    "corpus",
    "golden",
    "baseline",
    "headline",
    "metric_names",
    "skipped",
    "rows",
)
ROW_KEYS = ("name", "config", "config_hash", "models", "store", "metrics", "questions", "comparisons")


def store_specs(key: AssetKey) -> list[AssetCheckSpec]:
    return [
        AssetCheckSpec(GOLDEN, asset=key, description="Every golden quote matches exactly one span."),
        AssetCheckSpec(SPANS, asset=key, description="document.text[start:end] == chunk.text on a sample."),
    ]


def golden_resolves(suite: Suite, store: Store) -> AssetCheckResult:
    try:
        golden = suite_labels(suite, store)
    except LabelError as err:
        return AssetCheckResult(check_name=GOLDEN, passed=False, metadata={"error": str(err)})
    labels = sum(len(q.labels) for q in golden.questions)
    return AssetCheckResult(
        check_name=GOLDEN, passed=True, metadata={"questions": len(golden.questions), "labels": labels}
    )


def spans_hold(store: Store) -> AssetCheckResult:
    """The one invariant, checked against the document text read separately from the chunk rows."""
    spans = store.chunk_spans()
    step = max(1, len(spans) // SAMPLE)
    sample = spans[::step]
    texts: dict[str, str] = {}
    chunk_text = {c.id: c.text for c in store.chunks()}
    broken = []
    for chunk_id, doc_id, start, end in sample:
        text = texts.setdefault(doc_id, store.document_text(doc_id))
        if not (0 <= start < end <= len(text)) or text[start:end] != chunk_text[chunk_id]:
            broken.append(chunk_id)
    return AssetCheckResult(
        check_name=SPANS,
        passed=not broken and bool(spans),
        metadata={"chunks": len(spans), "sampled": len(sample), "broken": broken[:20]},
    )


def evaluation_specs(key: AssetKey) -> list[AssetCheckSpec]:
    return [
        AssetCheckSpec(
            BASELINE, asset=key, description="On the fake embedder, metrics equal results/baseline-fake.json."
        )
    ]


def matches_baseline(row: Mapping[str, Any], suite: Suite, embedder: str, baseline: Path) -> AssetCheckResult:
    """Passes (noting why) where the baseline does not apply: a real model, another suite, a new row."""
    known = json.loads(baseline.read_text(encoding="utf-8")) if baseline.is_file() else None
    if "skipped" in row:
        return AssetCheckResult(check_name=BASELINE, passed=True, metadata={"applies": False})
    if embedder != "hash" or known is None or known.get("suite") != suite.name:
        return AssetCheckResult(check_name=BASELINE, passed=True, metadata={"applies": False})
    before = {r["name"]: r for r in known["rows"]}.get(row["name"])
    if before is None or known["golden"]["sha256"] != row["golden_sha256"]:
        return AssetCheckResult(check_name=BASELINE, passed=True, metadata={"applies": False})
    moved = {
        name: f"{before['metrics'].get(name)} -> {value}"
        for name, value in row["metrics"].items()
        if abs(before["metrics"].get(name, float("inf")) - value) > TOLERANCE
    }
    return AssetCheckResult(
        check_name=BASELINE,
        passed=not moved,
        severity=AssetCheckSeverity.ERROR,
        metadata={"applies": True, "moved": moved, "baseline": str(baseline)},
    )


def result_specs(key: AssetKey) -> list[AssetCheckSpec]:
    return [AssetCheckSpec(KEYS, asset=key, description="The keys `clear-rag ablate` writes, every row.")]


def has_expected_keys(result: Mapping[str, Any], suite: Suite) -> AssetCheckResult:
    missing = [k for k in RESULT_KEYS if k not in result]
    rows = result.get("rows", [])
    missing += [f"{r.get('name')}.{k}" for r in rows for k in ROW_KEYS if k not in r]
    done = [r.get("name") for r in rows] + [s.get("name") for s in result.get("skipped", [])]
    names_match = sorted(map(str, done)) == sorted(r.name for r in suite.rows) and [
        r.get("name") for r in rows
    ] == [r.name for r in suite.rows if r.name in {row.get("name") for row in rows}]
    return AssetCheckResult(
        check_name=KEYS,
        passed=not missing and names_match,
        metadata={"missing": missing, "rows_in_suite_order": names_match},
    )
