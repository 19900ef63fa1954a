"""How far the technique check's verdicts can be trusted: the same rows run on a suite's real questions
and on probes from the same store, with the Kendall tau between the two row orders and how many
verdicts agree (``clear-rag check --agreement``, ``results/check/agreement.json``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from clear_rag.errors import ClearRagError
from clear_rag.eval.check import HEADLINE, run_rows, summary, technique_suite
from clear_rag.eval.metrics import kendall_tau
from clear_rag.eval.probes import CheckSettings, probing, settings_record
from clear_rag.providers.base import Embedder

AGREEMENT = Path("check") / "agreement.json"  # under results/: the check against real questions


def agreement(
    real: Sequence[Mapping[str, Any]], probe: Sequence[Mapping[str, Any]], metric: tuple[str, str]
) -> dict[str, Any]:
    """How far the probes' rows agree with the real questions' (``summary`` outputs over the same rows):
    Kendall's tau between the two orders of the rows both measured, and how many verdicts agree."""
    theirs = {e["name"]: e for e in probe if metric[1] in e and e[metric[1]] is not None}
    both = [(e, theirs[e["name"]]) for e in real if e.get(metric[0]) is not None and e["name"] in theirs]
    judged = [(r, p) for r, p in both if "verdict" in r and "verdict" in p]
    return {
        "rows": len(both),
        "kendall_tau": round(
            kendall_tau([r[metric[0]] for r, _ in both], [p[metric[1]] for _, p in both]), 4
        ),
        "verdicts": len(judged),
        "verdicts_agree": sum(r["verdict"] == p["verdict"] for r, p in judged),
        "helps_or_hurts_agree": sum(r["verdict"] == p["verdict"] != "no clear effect" for r, p in judged),
    }


def suite_agreement(
    name: str, *, embedder: Embedder | None, reranker: str, settings: CheckSettings, root: Path
) -> dict[str, Any]:
    """The technique rows on a suite's real questions and on probes from the same store (its
    baseline's chunking), and how far the two agree (``agreement``)."""
    import dataclasses

    from clear_rag.eval import runner, stores
    from clear_rag.eval.suite import load_suite
    from clear_rag.session import sync_indexes

    suite = load_suite(name)
    if suite.generate:  # the answers suite: its retrieval, without answering
        suite = dataclasses.replace(suite, generate=False, metrics=())
    base = next(r for r in suite.rows if r.name == suite.baseline).config
    store, _ = stores.prepare(suite, base.chunking, root, embedder)
    try:
        techniques = technique_suite(store, base, reranker)
        sync_indexes(store, [row.config for row in techniques.rows], embedder)
        labels = stores.suite_labels(suite, store)
        names = runner.metric_names(suite, labels)
        metric = HEADLINE if HEADLINE in names else names[0]
        real = summary(run_rows(techniques, store, labels, [metric], embedder), metric)
        with probing(store, settings) as (probed, probes):
            asked = technique_suite(probed, base, reranker)
            sync_indexes(probed, [row.config for row in asked.rows], embedder)
            probe = summary(run_rows(asked, probed, probes, [HEADLINE], embedder), HEADLINE)
    finally:
        store.close()
    return {
        "suite": suite.name,
        "metric": metric,
        "questions": len(labels.questions),
        "probes": len(probes.questions),
        "real": real,
        "probe": probe,
        "agreement": agreement(real, probe, (metric, HEADLINE)),
    }


def agreement_document(
    measured: Sequence[Mapping[str, Any]],
    *,
    settings: CheckSettings,
    embedder: str,
    reranker: str,
    command: str,
) -> dict[str, Any]:
    """The agreement file's document (``results/check/*.json``): ``suite_agreement`` of each suite, with
    how, when and with which models and libraries it was measured."""
    from datetime import UTC, datetime

    from clear_rag.packaged import library_versions

    return {
        "kind": "check-agreement",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command,
        "settings": settings_record(settings),
        "embedder": embedder,
        "reranker": reranker,
        "versions": library_versions(),
        "suites": list(measured),
    }


def save_agreement(path: Path, document: Mapping[str, Any]) -> Path:
    """Write an agreement document with the one writer of result files (its folder made where missing)."""
    from clear_rag.results.files import write_result

    path.parent.mkdir(parents=True, exist_ok=True)
    write_result(path, dict(document))
    return path


def agreement_summary(path: Path) -> list[dict[str, Any]]:
    """Per suite of an agreement file (``results/check/agreement.json``), how far the check agreed with
    real questions, flat; empty when the file is missing or unreadable."""
    from clear_rag.results.files import read_document

    try:
        document = read_document(path)
        return [
            {"suite": e["suite"], "questions": e["questions"], "probes": e["probes"], **e["agreement"]}
            for e in document["suites"]
        ]
    except (ClearRagError, KeyError, TypeError):
        return []
