"""The baseline gate: the tech golden set through the real pipeline on the fake providers.

Any change in any metric of any row fails this test with a diff. When a change is intended,
re-bless the baseline on purpose and commit it with the change that moved it:

    .venv/bin/clear-rag ablate tech --embedder hash --reranker lexical --bless

The rerank row runs on the lexical fake here, so `make test` exercises a rerank row end to end.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clear_rag.eval import runner
from clear_rag.eval.suite import load_suite
from clear_rag.providers.fake import HashEmbedder

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "results" / "baseline-fake.json"


def _differences(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    lines = []
    old_rows = {r["name"]: r for r in old["rows"]}
    for row in new["rows"]:
        before = old_rows.pop(row["name"], None)
        if before is None:
            lines.append(f"new row {row['name']!r}")
            continue
        for name, value in row["metrics"].items():
            if before["metrics"].get(name) != value:
                lines.append(f"{row['name']}: {name} {before['metrics'].get(name)} -> {value}")
        old_q = {q["id"]: q["metrics"] for q in before["questions"]}
        for q in row["questions"]:
            if old_q.get(q["id"]) != q["metrics"]:
                lines.append(f"{row['name']} / {q['id']}: {old_q.get(q['id'])} -> {q['metrics']}")
    lines += [f"row {name!r} is gone" for name in old_rows]
    return lines


@pytest.mark.slow
def test_tech_suite_on_fake_providers_matches_the_committed_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the suite's paths, and so the document ids, are relative to the project
    suite = load_suite("tech").with_reranker("lexical")
    result = runner.run_suite(suite, embedder=HashEmbedder(), root=tmp_path / "stores")
    assert (
        result["skipped"] == [] and result["rows"][-1]["models"]["reranker"] == "lexical-reranker@overlap-1"
    )
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    assert result["golden"]["sha256"] == baseline["golden"]["sha256"], "golden/tech.yaml changed: re-bless"
    differences = _differences(baseline, result)
    assert not differences, "metrics moved (re-bless on purpose, see this file's docstring):\n" + "\n".join(
        differences[:40]
    )


def test_the_gate_sees_a_moved_metric() -> None:
    baseline = json.loads(BASELINE.read_text(encoding="utf-8"))
    moved = json.loads(json.dumps(baseline))
    row = moved["rows"][1]
    row["metrics"]["ndcg@10"] += 0.01
    row["questions"][0]["metrics"]["mrr@10"] = -1.0
    assert _differences(baseline, moved) == [
        f"{row['name']}: ndcg@10 {baseline['rows'][1]['metrics']['ndcg@10']} -> {row['metrics']['ndcg@10']}",
        f"{row['name']} / {row['questions'][0]['id']}: {baseline['rows'][1]['questions'][0]['metrics']} -> "
        f"{row['questions'][0]['metrics']}",
    ]
    assert _differences(baseline, baseline) == []
