"""Which techniques help on a corpus that has no labels: probe questions cut from the store itself.

``clear-rag check STORE`` draws probe questions from the store (``clear_rag.eval.probes``). Every
technique row is then run over the probes through the one evaluation runner (``runner.run_row``) and
read against the baseline by the one comparison (``results.document``): the difference in nDCG@10
with its paired bootstrap interval, and a verdict, ``helps`` or ``hurts`` when the interval leaves
zero, ``no clear effect`` when it holds it.

Probes are not questions a person asks. How far their verdicts can be trusted is measured, not
assumed (``clear_rag.eval.agreement``); the check prints that beside its own.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clear_rag.config import PipelineConfig
from clear_rag.eval.labels import Labels
from clear_rag.eval.probes import CheckSettings, probing, settings_record
from clear_rag.eval.suite import Row, Suite, merge
from clear_rag.providers.base import Embedder
from clear_rag.store.sqlite import Store

BASELINE = "hybrid rrf"
# Each technique one change from hybrid rrf over the store's own chunking, as the suites' rows are.
HYBRID = {"retrievers": ["keyword", "vector"], "fusion": "rrf", "stem": False, "rerank": False}
TECHNIQUES: tuple[tuple[str, dict[str, Any]], ...] = (
    (BASELINE, {}),
    ("bm25 only", {"retrievers": ["keyword"]}),
    ("dense only", {"retrievers": ["vector"]}),
    ("hybrid min-max", {"fusion": "minmax"}),
    ("porter stemming", {"stem": True}),
    ("rerank, fused (shortlist 10)", {"rerank": True, "rerank_fusion": "rrf", "shortlist": 10}),
    ("rerank (shortlist 10)", {"rerank": True, "shortlist": 10}),
)
HEADLINE = "ndcg@10"
CHECK_FILE = "check.json"  # the last check of a store, kept in it: the page's Lab reads it
RERANKER = "scifact-minilm-l6"  # the rerank rows' reranker unless one is named: the one trained here


def technique_suite(store: Store, config: PipelineConfig, reranker: str) -> Suite:
    """The technique rows as a suite over ``store``: each row ``config`` with one change, the rerank
    rows on ``reranker``."""
    rows = []
    for name, changes in TECHNIQUES:
        extra = {"reranker": reranker} if changes.get("rerank") else {}
        merged = merge(config.to_dict(), {**HYBRID, **changes, **extra})
        rows.append(Row(name, PipelineConfig.from_mapping(merged, source=f"check row {name!r}")))
    return Suite("check", store.directory, tuple(rows), BASELINE, corpus=store.directory)


def verdict(comparison: Mapping[str, Any]) -> str:
    """``helps`` when the interval of the difference lies above zero, ``hurts`` below, else unclear."""
    if comparison["ci_low"] > 0:
        return "helps"
    if comparison["ci_high"] < 0:
        return "hurts"
    return "no clear effect"


def run_rows(
    suite: Suite, store: Store, labels: Labels, names: Sequence[str], embedder: Embedder | None
) -> dict[str, Any]:
    """Every row of ``suite`` over ``labels`` on ``store``, as a result document (comparisons attached)."""
    from clear_rag.eval import runner, stores
    from clear_rag.results.document import result_document

    rows = [runner.run_row(row, store, labels, names, embedder=embedder) for row in suite.rows]
    return result_document(suite, rows, labels, stores.corpus_sha256(suite, store), embedder)


def _against(part: Mapping[str, Any], metric: str) -> dict[str, Any]:
    """One row's (or one subset's) metric and, against the baseline, its difference, interval, p and
    verdict."""
    entry: dict[str, Any] = {metric: part["metrics"].get(metric)}
    against = part.get("comparisons", {}).get("baseline", {}).get(metric)
    if against is not None:
        entry.update(
            difference=against["difference"],
            ci=[against["ci_low"], against["ci_high"]],
            p=against["p_sign"],
            verdict=verdict(against),
        )
    return entry


def summary(document: Mapping[str, Any], metric: str) -> list[dict[str, Any]]:
    """Each row's metric and, against the baseline, its difference, interval, p and verdict; on a
    suite split by what training saw, the same for each subset (``by_subset``)."""
    out = []
    for row in document["rows"]:
        entry: dict[str, Any] = {"name": row["name"], **_against(row, metric)}
        if "by_subset" in row:
            entry["by_subset"] = {name: _against(part, metric) for name, part in row["by_subset"].items()}
        out.append(entry)
    for entry in document.get("skipped", []):
        out.append({"name": entry["name"], "skipped": entry["reason"]})
    return out


def check_store(
    store: Store,
    *,
    embedder: Embedder | None,
    reranker: str,
    settings: CheckSettings = CheckSettings(),  # noqa: B008 (a frozen dataclass: one shared default is safe)
    config: PipelineConfig | None = None,
) -> dict[str, Any]:
    """The check of one store: its probe questions run through every technique row."""
    from clear_rag.session import store_chunking, sync_indexes

    base = config or PipelineConfig().replace(chunking=store_chunking(store))
    with probing(store, settings) as (probed, labels):
        suite = technique_suite(probed, base, reranker)
        sync_indexes(probed, [row.config for row in suite.rows], embedder)  # the Porter index, say
        document = run_rows(suite, probed, labels, [HEADLINE], embedder)
    return {
        "store": str(store.directory),
        "reranker": reranker,
        "probes": len(labels.questions),
        "settings": settings_record(settings),
        "models": sorted({m for r in document["rows"] for m in r.get("models", {}).values()}),
        "rows": summary(document, HEADLINE),
    }


def save_check(directory: Path, found: Mapping[str, Any]) -> Path:
    """The check of a store, kept in the store's folder (``check.json``), written atomically."""
    from clear_rag.atomic import write_atomic

    path = directory / CHECK_FILE
    write_atomic(path, json.dumps(dict(found), indent=1, sort_keys=True) + "\n")
    return path


def read_check(directory: Path) -> dict[str, Any] | None:
    """A store's last check, or None when it has none (or an unreadable one)."""
    try:
        found = json.loads((directory / CHECK_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and isinstance(found.get("rows"), list) else None
