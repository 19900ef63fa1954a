"""SVG plots: well-formed, the same bytes for the same input (in any process), no clock in them, the
input's names and source in their text, and a changed value changes them. Properties, not snapshots."""

from __future__ import annotations

import copy
import datetime
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from clear_rag.report.logplots import ratio_svg
from clear_rag.report.plots import categories_svg, loss_svg, suite_svg
from clear_rag.report.svg import BLUE, MUTED

ROOT = Path(__file__).resolve().parents[1]
SVG = "{http://www.w3.org/2000/svg}"
LONG = "dense only, fixed 256 with 50% overlap (the predecessor)"  # wrapped onto two lines
SOURCE = "results/toy.json"
FOOTNOTE = f"{SOURCE}, run 2020-01-02"  # the date is the input's, not the clock's


def _comparison(difference: float, low: float, high: float) -> dict[str, float]:
    return {"difference": difference, "ci_low": low, "ci_high": high, "p_sign": 0.5, "up": 3, "down": 1}


def _row(name: str, ndcg: float, versus: tuple[float, float, float] | None) -> dict[str, Any]:
    """A row whose MRR is its nDCG less 0.1, and whose MRR change equals its nDCG change."""
    comparisons = {"baseline": {m: _comparison(*versus) for m in ("ndcg@10", "mrr@10")}} if versus else {}
    return {
        "name": name,
        "metrics": {"ndcg@10": ndcg, "mrr@10": ndcg - 0.1},
        "by_category": {"factual": {"ndcg@10": ndcg + 0.1}, "paraphrase": {"ndcg@10": ndcg - 0.1}},
        "comparisons": comparisons,
    }


RESULT: dict[str, Any] = {
    "suite": "toy",
    "date": "2020-01-02T03:04:05+00:00",
    "headline": "ndcg@10",
    "metric_names": ["recall@10", "mrr@10", "ndcg@10"],
    "baseline": "hybrid rrf",
    "golden": {"questions": 4, "categories": {"factual": 2, "paraphrase": 2}},
    "rows": [
        _row(LONG, 0.4, (-0.1, -0.2, 0.05)),  # its interval includes 0
        _row("hybrid rrf", 0.5, None),
        _row("bm25 only", 0.7, (0.2, 0.1, 0.3)),  # its interval excludes 0
    ],
}
COLUMNS = ["row", "questions", "found", "cut by the token budget", "lost in rerank", "lost in fusion"]
COLUMNS += ["retrieved too low", "never retrieved"]
LOSS_ROWS: list[list[Any]] = [[LONG, 70, 59, 4, 0, 0, 6, 1], ["hybrid rrf", 70, 57, 2, 0, 7, 4, 0]]
BARS = [("bm25s (numba)", 2.0), ("tantivy", 0.5)]
RATIO_X = "clear-rag queries/s ÷ bm25s (numba) queries/s"


def _suite(result: dict[str, Any] = RESULT) -> bytes:
    return suite_svg(result, SOURCE)


def _categories(result: dict[str, Any] = RESULT) -> bytes:
    svg = categories_svg(result, SOURCE)
    assert svg is not None
    return svg


def _loss(rows: list[list[Any]] = LOSS_ROWS) -> bytes:
    return loss_svg(COLUMNS, rows, "Where the answer was lost: toy", FOOTNOTE)


def _ratio(bars: list[tuple[str, float]] = BARS) -> bytes:
    return ratio_svg("Queries per second against bm25s", bars, RATIO_X, FOOTNOTE)


RENDERERS: dict[str, Callable[[], bytes]] = {
    "suite": _suite,
    "categories": _categories,
    "loss": _loss,
    "ratio": _ratio,
}
TEXTS = {
    "suite": [LONG, "hybrid rrf", "bm25 only", "ndcg@10", "mrr@10"],
    "categories": [LONG, "hybrid rrf", "bm25 only", "factual", "paraphrase"],
    "loss": [LONG, "hybrid rrf", *COLUMNS[2:]],
    "ratio": ["bm25s (numba)", "tantivy", RATIO_X, "parity"],
}


@pytest.fixture(scope="module")
def rendered() -> dict[str, bytes]:
    return {kind: render() for kind, render in RENDERERS.items()}


def _texts(svg: bytes) -> list[ET.Element]:
    return list(ET.fromstring(svg).iter(f"{SVG}text"))


def _text(svg: bytes) -> str:
    """All the text of a plot, line after line (so a wrapped row name comes back whole)."""
    return " ".join(t.text or "" for t in _texts(svg))


def _changed(result: dict[str, Any], edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    copied = copy.deepcopy(result)
    edit(copied)
    return copied


@pytest.mark.parametrize("kind", RENDERERS)
def test_a_plot_is_an_svg_document(kind: str, rendered: dict[str, bytes]) -> None:
    assert ET.fromstring(rendered[kind]).tag == f"{SVG}svg"


@pytest.mark.parametrize("kind", RENDERERS)
def test_rendering_again_gives_the_same_bytes(kind: str, rendered: dict[str, bytes]) -> None:
    assert RENDERERS[kind]() == rendered[kind]


def test_another_process_with_another_hash_seed_gives_the_same_bytes(rendered: dict[str, bytes]) -> None:
    """The suite plot has every id matplotlib makes up (clip paths, markers) and every kind of artist."""
    script = (
        "import json, sys\nfrom clear_rag.report.plots import suite_svg\n"
        f"sys.stdout.buffer.write(suite_svg(json.load(sys.stdin), {SOURCE!r}))\n"
    )
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    done = subprocess.run(
        [sys.executable, "-c", script],
        input=json.dumps(RESULT).encode(),
        capture_output=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONHASHSEED": seed},
        check=True,
        timeout=120,
    )
    assert done.stdout == rendered["suite"]


@pytest.mark.parametrize("kind", RENDERERS)
def test_no_clock_and_no_creator_in_a_plot(kind: str, rendered: dict[str, bytes]) -> None:
    svg = rendered[kind].decode("utf-8")
    today = datetime.date.today()
    assert today.isoformat() not in svg
    assert today.strftime("%Y%m%d") not in svg
    assert "Creator" not in svg
    assert "dc:date" not in svg
    assert "Matplotlib v" not in svg


@pytest.mark.parametrize("kind", RENDERERS)
def test_names_labels_and_source_are_text(kind: str, rendered: dict[str, bytes]) -> None:
    text = _text(rendered[kind])
    for expected in [*TEXTS[kind], FOOTNOTE]:
        assert expected in text


def _set_interval(result: dict[str, Any]) -> None:
    result["rows"][2]["comparisons"]["baseline"]["mrr@10"]["ci_high"] = 0.31


def _set_category(result: dict[str, Any]) -> None:
    result["rows"][0]["by_category"]["paraphrase"]["ndcg@10"] = 0.31


CHANGES: dict[str, Callable[[], bytes]] = {
    "suite": lambda: _suite(_changed(RESULT, _set_interval)),
    "categories": lambda: _categories(_changed(RESULT, _set_category)),
    "loss": lambda: _loss([LOSS_ROWS[0], ["hybrid rrf", 70, 56, 2, 0, 7, 4, 1]]),
    "ratio": lambda: _ratio([("bm25s (numba)", 2.0), ("tantivy", 0.51)]),
}


@pytest.mark.parametrize("kind", RENDERERS)
def test_changing_one_value_changes_the_bytes(kind: str, rendered: dict[str, bytes]) -> None:
    assert CHANGES[kind]() != rendered[kind]


def _drop_strong_row(result: dict[str, Any]) -> None:
    del result["rows"][2]


def test_an_interval_excluding_zero_is_strong_one_including_it_muted(rendered: dict[str, bytes]) -> None:
    strong, muted = f"fill: {BLUE.lower()}", f"fill: {MUTED.lower()}"
    svg = rendered["suite"].decode("utf-8")
    without = _suite(_changed(RESULT, _drop_strong_row)).decode("utf-8")
    # One row's interval excludes 0 on both panels, another's includes it; the legend adds one of each.
    assert (svg.count(strong), without.count(strong)) == (2 + 1, 0 + 1)
    assert svg.count(muted) == without.count(muted) == 2 + 1


def test_the_suite_plot_marks_the_baseline_and_pairs_ndcg_with_mrr(rendered: dict[str, bytes]) -> None:
    text = _text(rendered["suite"])
    assert "baseline" in text
    assert "Δ ndcg@10, row − baseline" in text and "Δ mrr@10, row − baseline" in text


def _without_mrr(result: dict[str, Any]) -> None:
    result["metric_names"] = ["ndcg@10"]


def test_a_suite_without_mrr_has_one_panel() -> None:
    text = _text(_suite(_changed(RESULT, _without_mrr)))
    assert "Δ ndcg@10" in text and "mrr@10" not in text


def _doc_metrics(result: dict[str, Any]) -> None:
    result.update(headline="doc ndcg@10", metric_names=["doc ndcg@10", "doc recall@100", "doc mrr@10"])
    for row in result["rows"]:
        versus = row["comparisons"].get("baseline")
        if versus:
            row["comparisons"]["baseline"] = {f"doc {k}": v for k, v in versus.items()}


def test_doc_metrics_pair_doc_ndcg_with_doc_mrr() -> None:
    text = _text(_suite(_changed(RESULT, _doc_metrics)))
    assert "Δ doc ndcg@10, row − baseline" in text and "Δ doc mrr@10, row − baseline" in text


def _drop_categories(result: dict[str, Any]) -> None:
    for row in result["rows"]:
        del row["by_category"]


def _only_all(result: dict[str, Any]) -> None:
    for row in result["rows"]:
        row["by_category"] = {"all": row["metrics"]}


def test_no_categories_no_plot() -> None:
    assert categories_svg(_changed(RESULT, _drop_categories), SOURCE) is None
    assert categories_svg(_changed(RESULT, _only_all), SOURCE) is None  # BEIR's "all" is the headline
    assert categories_svg({"rows": [], "metric_names": ["ndcg@10"]}, SOURCE) is None


def _add_unlabelled(result: dict[str, Any]) -> None:
    for row in result["rows"]:
        row["by_category"]["no rationale"] = {"doc ndcg@10": 0.4}


def test_a_category_without_the_headline_metric_says_so() -> None:
    text = _text(_categories(_changed(RESULT, _add_unlabelled)))
    assert "no rationale" in text and "no ndcg@10" in text


def _x_of(svg: bytes, text: str) -> float:
    return next(float(t.attrib["x"]) for t in _texts(svg) if t.text == text)


def test_ratios_above_and_below_parity_are_on_either_side(rendered: dict[str, bytes]) -> None:
    svg = rendered["ratio"]
    parity = _x_of(svg, "parity")
    assert _x_of(svg, "2.00") > parity > _x_of(svg, "0.50")
    assert _x_of(svg, "1×") == pytest.approx(parity)


def test_ratio_colours_say_the_side(rendered: dict[str, bytes]) -> None:
    strong = f"fill: {BLUE.lower()}"
    above_only = _ratio([("bm25s (numba)", 2.0), ("tantivy", 3.0)]).decode("utf-8")
    assert above_only.count(strong) == rendered["ratio"].decode("utf-8").count(strong) + 1


@pytest.mark.parametrize("ratio", [0.0, -1.0, float("nan"), float("inf")])
def test_a_ratio_a_log_axis_cannot_show_is_refused(ratio: float) -> None:
    with pytest.raises(ValueError, match="tantivy"):
        _ratio([("tantivy", ratio)])


def test_empty_input_is_refused_with_a_message() -> None:
    with pytest.raises(ValueError, match="no bars"):
        _ratio([])
    with pytest.raises(ValueError, match="at least one row"):
        _loss([])
    with pytest.raises(ValueError, match="no rows"):
        _suite({**RESULT, "rows": []})


def test_loss_counts_that_do_not_add_up_are_refused() -> None:
    with pytest.raises(ValueError, match="summing to its questions"):
        _loss([["hybrid rrf", 70, 57, 2, 0, 7, 4, 1]])


def test_loss_counts_are_printed_in_wide_segments_only(rendered: dict[str, bytes]) -> None:
    texts = [t.text for t in _texts(rendered["loss"])]
    assert "59" in texts and "57" in texts
    assert "1" not in texts  # one question in 70 is too narrow a segment for its number


@pytest.mark.parametrize("name", ["tech", "beir-scifact", "scifact"])
@pytest.mark.parametrize("kind", ["suite", "categories"])
def test_committed_result_files_render(name: str, kind: str) -> None:
    path = ROOT / "results" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    result = json.loads(path.read_text(encoding="utf-8"))
    source = f"results/{name}.json"
    svg = suite_svg(result, source) if kind == "suite" else categories_svg(result, source)
    several = len({c for row in result["rows"] for c in row.get("by_category", {})}) > 1
    if kind == "categories" and not several:
        assert svg is None  # beir-scifact has the one category "all"
        return
    assert svg is not None
    assert ET.fromstring(svg).tag == f"{SVG}svg"
    assert source in _text(svg)
