"""The PDF backends against their committed scores: a change that makes either parse the 10-K corpus worse
fails here, naming the backend, the document, the metric and both values.

Whole documents are parsed, since the truth is per document and a page range of it cannot be cut out
fairly (a paragraph or table crossing the cut would count as lost). One document runs on every commit:
``aapl-two-column.pdf``, which has both columns to order and tables to find; both backends take about
30 s on it on two cores (50 s while other work loads them). ``CLEAR_RAG_PARSE_DIFFERENTIAL=all`` runs
the whole corpus (about two minutes). The committed figures are ``results/parse.json``, written by
``clear-rag parse-eval --save-results``; speed is not compared (it follows the machine), every quality
metric is. The parse suite's drawn cases are held to the file's ``cases`` part the same way, all of them
on every commit (a few seconds a backend).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from clear_rag.cli.parse import DEFAULT_FOLDER, RESULT_NAME
from clear_rag.errors import ModelMissing
from clear_rag.eval.drawn.suite import evaluate_cases
from clear_rag.eval.parse.corpus import evaluate, find_pdfs
from clear_rag.parse.tesseract import available

ROOT = Path(__file__).resolve().parents[2]
PDFS = ROOT / DEFAULT_FOLDER
TRUTH = PDFS.parent / "truth"
COMMITTED = ROOT / "results" / RESULT_NAME
BACKENDS = ("layout", "flat")
EVERY_COMMIT = ("two-column/aapl.pdf",)
ALL = os.environ.get("CLEAR_RAG_PARSE_DIFFERENTIAL") == "all"
# The parsers are deterministic, so an unchanged parser reproduces its figures to the last place; the
# tolerance absorbs only the rounding of the file (4 places) and a last-digit float difference.
TOLERANCE = 0.001
HIGHER_IS_BETTER = (
    "words_precision",
    "words_recall",
    "words_f1",
    "order",
    "cells_in_tables",
    "cells_in_rows",
    "cells_anywhere",
)
LOWER_IS_BETTER = ("furniture_leakage",)
RERUN = (
    f"If the change is intended, run `clear-rag parse-eval --save-results` and commit results/{RESULT_NAME}."
)


def regressions(
    committed: Mapping[str, Any], measured: Mapping[str, Any], backend: str, *, complete: bool = False
) -> list[str]:
    """One line per metric of ``backend`` that is worse than committed by more than ``TOLERANCE``, and
    per measured document without committed figures; ``complete`` (the whole corpus was measured) adds
    one per committed document that was not measured."""
    was, now = committed["backends"].get(backend), measured.get(backend)
    if was is None or "documents" not in was:
        return [f"{backend}: has no committed figures in results/{RESULT_NAME}"]
    if now is None or "documents" not in now:
        return [f"{backend}: was not run ({(now or {}).get('not_run', 'not asked for')})"]
    found = []
    names = set(now["documents"]) | (set(was["documents"]) if complete else set())
    for name in sorted(names):
        before, after = was["documents"].get(name), now["documents"].get(name)
        if before is None or after is None:
            where = "is not in the corpus any more" if after is None else f"has no figures in {RESULT_NAME}"
            found.append(f"{backend}: {name} {where}")
            continue
        for metric in HIGHER_IS_BETTER + LOWER_IS_BETTER:
            if before.get(metric) is None:  # a metric the committed file predates, or not measured
                continue
            if after.get(metric) is None:
                found.append(f"{backend}: {name}: {metric} is not measured any more")
                continue
            drop = (
                before[metric] - after[metric]
                if metric in HIGHER_IS_BETTER
                else after[metric] - before[metric]
            )
            if drop > TOLERANCE:
                found.append(
                    f"{backend}: {name}: {metric} {after[metric]:.4f}, committed {before[metric]:.4f}"
                )
    return found


@pytest.fixture(scope="module")
def committed() -> dict[str, Any]:
    import json

    if not PDFS.is_dir() or not TRUTH.is_dir():
        pytest.skip(f"no 10-K corpus at {PDFS} and {TRUTH}: `make corpus-10k` builds it")
    if not COMMITTED.is_file():
        pytest.skip(
            f"no {COMMITTED.relative_to(ROOT)} to compare with: `clear-rag parse-eval --save-results`"
        )
    document: dict[str, Any] = json.loads(COMMITTED.read_text(encoding="utf-8"))
    return document


@pytest.fixture(scope="module")
def measured(committed: dict[str, Any]) -> dict[str, Any]:
    pdfs = find_pdfs(PDFS)
    chosen = pdfs if ALL else [p for p in pdfs if p.relative_to(PDFS).as_posix() in EVERY_COMMIT]
    if not chosen:
        pytest.fail(f"none of {EVERY_COMMIT} is in {PDFS}: choose the every-commit document again")
    return evaluate(chosen, TRUTH, BACKENDS, PDFS)


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_metric_is_worse_than_committed(
    committed: dict[str, Any], measured: dict[str, Any], backend: str
) -> None:
    found = regressions(committed, measured, backend, complete=ALL)
    assert not found, "worse than results/parse.json:\n" + "\n".join(found) + "\n" + RERUN


@pytest.mark.parametrize("backend", BACKENDS)
def test_no_drawn_case_scores_worse_than_committed(
    committed: dict[str, Any], backend: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every case of the parse suite (``clear_rag.eval.drawn``), drawn again and parsed, against its
    row in the file's ``cases`` part: a few seconds a backend, so all of them on every commit."""
    if "cases" not in committed:
        pytest.skip(f"results/{RESULT_NAME} has no drawn cases: `clear-rag parse-eval --save-results`")
    if committed["cases"].get("not_drawn"):
        pytest.skip(f"cases were not drawn for the committed file: {committed['cases']['not_drawn']}")
    engine = available()
    if isinstance(engine, ModelMissing):  # the scanned case is read by OCR
        pytest.skip(str(engine))
    measured = evaluate_cases(tmp_path_factory.mktemp("suite"), [backend])
    if measured.get("not_drawn"):
        pytest.skip(f"cases cannot be drawn here: {measured['not_drawn']}")
    found = regressions(
        {"backends": committed["cases"]["backends"]}, measured["backends"], backend, complete=True
    )
    assert not found, "worse than results/parse.json's cases:\n" + "\n".join(found) + "\n" + RERUN


# -- the comparison itself, on hand-built figures (runs with or without the corpus) ----------------


def _figures(**changes: float) -> dict[str, Any]:
    scores = dict.fromkeys(HIGHER_IS_BETTER, 0.9) | {"furniture_leakage": 0.1} | changes
    return {"documents": {"a.pdf": scores}}


def test_a_drop_past_the_tolerance_is_named_with_both_values() -> None:
    committed = {"backends": {"layout": _figures()}}
    assert regressions(committed, {"layout": _figures(order=0.9 - TOLERANCE / 2)}, "layout") == []
    assert regressions(committed, {"layout": _figures(order=0.95, furniture_leakage=0.0)}, "layout") == []
    assert regressions(committed, {"layout": _figures(order=0.85)}, "layout") == [
        "layout: a.pdf: order 0.8500, committed 0.9000"
    ]
    assert regressions(committed, {"layout": _figures(furniture_leakage=0.2)}, "layout") == [
        "layout: a.pdf: furniture_leakage 0.2000, committed 0.1000"
    ]


def test_a_metric_the_committed_file_predates_is_not_compared() -> None:
    old = {
        "documents": {
            "a.pdf": {k: v for k, v in _figures()["documents"]["a.pdf"].items() if k != "cells_in_rows"}
        }
    }
    assert regressions({"backends": {"layout": old}}, {"layout": _figures(cells_in_rows=0.0)}, "layout") == []


def test_documents_and_backends_missing_on_either_side_are_named() -> None:
    committed = {"backends": {"layout": _figures(), "docling": {"not_run": "no docling"}}}
    grown = {"documents": {**_figures()["documents"], "b.pdf": _figures()["documents"]["a.pdf"]}}
    assert regressions(committed, {"layout": grown}, "layout") == [
        f"layout: b.pdf has no figures in {RESULT_NAME}"
    ]
    assert regressions(committed, {"layout": {"documents": {}}}, "layout") == []
    assert regressions(committed, {"layout": {"documents": {}}}, "layout", complete=True) == [
        "layout: a.pdf is not in the corpus any more"
    ]
    assert regressions(committed, {"layout": _figures()}, "flat") == [
        f"flat: has no committed figures in results/{RESULT_NAME}"
    ]
    assert regressions(committed, {"layout": _figures()}, "docling") == [
        f"docling: has no committed figures in results/{RESULT_NAME}"
    ]
