"""The 10-K golden set holds its own rules against the ground truth text of the two filings.

It is written against corpora/10k/truth and resolved against each parser's text under ``unresolved:
miss``, where a quote that matches nothing counts as that parser's miss. That same leniency would hide a
quote mistyped against the truth, so here every quote must resolve exactly once, as under ``error``.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from clear_rag.eval.golden import GoldenSet, NormalisedText, load_golden, normalise, read_golden, resolve

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "golden" / "10k.yaml"
TRUTH = ROOT / "corpora" / "10k" / "truth"
COMPANIES = ("aapl", "goog")
MINIMUMS = {"table": 10, "multi-passage": 6, "distractor": 8, "paraphrase": 8}
ALLOWED = {*MINIMUMS, "factual"}

pytestmark = pytest.mark.skipif(not TRUTH.is_dir(), reason="corpora/10k/truth is absent")


@pytest.fixture(scope="module")
def truth() -> dict[str, dict[str, Any]]:
    return {co: json.loads((TRUTH / f"{co}.json").read_text(encoding="utf-8")) for co in COMPANIES}


@pytest.fixture(scope="module")
def texts() -> dict[str, str]:
    return {co: (TRUTH / f"{co}.txt").read_text(encoding="utf-8") for co in COMPANIES}


@pytest.fixture(scope="module")
def golden(texts: dict[str, str]) -> GoldenSet:
    return load_golden(GOLDEN, texts)


def _quotes() -> list[tuple[str, str, str]]:
    """(question id, category, quote) for every answer, read without resolving."""
    written, _ = read_golden(GOLDEN)
    return [(q.id, q.category, a.quote) for q in written.questions for a in q.answers or ()]


def _cells(truth: dict[str, dict[str, Any]]) -> list[str]:
    return [
        normalise(cell)
        for co in truth.values()
        for table in co["tables"]
        for row in table["rows"]
        for cell in row
    ]


def test_the_file_loads_under_its_name_and_counts_misses(golden: GoldenSet) -> None:
    assert golden.name == "10k"
    assert b"unresolved: miss" in GOLDEN.read_bytes()


def test_every_quote_resolves_exactly_once_in_the_ground_truth(texts: dict[str, str]) -> None:
    # resolve() raises QuoteNotFound or QuoteAmbiguous naming the question, where load_golden under
    # miss would only leave an empty label
    normalised = {co: NormalisedText(text) for co, text in texts.items()}
    for qid, _, quote in _quotes():
        assert resolve(qid, quote, None, normalised, str(GOLDEN)).resolved


def test_every_label_of_the_loaded_set_is_resolved(golden: GoldenSet) -> None:
    unresolved = [(q.id, label.problem) for q in golden.questions for label in q.labels if not label.resolved]
    assert unresolved == []


def test_it_has_forty_questions_and_each_category_its_minimum(golden: GoldenSet) -> None:
    counts = Counter(q.category for q in golden.questions)
    assert len(golden.questions) >= 40
    assert set(counts) <= ALLOWED
    short = {cat: counts[cat] for cat, least in MINIMUMS.items() if counts[cat] < least}
    assert short == {}


def test_no_answer_names_a_document() -> None:
    # one file serves the one-column and the two-column corpora, whose file names differ
    written, _ = read_golden(GOLDEN)
    named = [q.id for q in written.questions for answer in q.answers or () if answer.doc is not None]
    assert named == []


def test_every_multi_passage_question_quotes_each_company_once(golden: GoldenSet) -> None:
    for question in golden.questions:
        if question.category == "multi-passage":
            assert sorted(label.doc_id for label in question.labels) == list(COMPANIES), question.id


def test_no_quote_holds_page_furniture(truth: dict[str, dict[str, Any]]) -> None:
    """A furniture string counts only as a whole token run: Alphabet's page numbers ("8.", "52.") are
    inside ordinary figures such as 8.13 or $52.5 billion, which are not furniture."""
    furniture = {f for co in truth.values() for f in co["furniture"]}
    patterns = [re.compile(rf"(?<![\w]){re.escape(f)}(?![\w])") for f in furniture]
    held = [(qid, p.pattern) for qid, _, quote in _quotes() for p in patterns if p.search(normalise(quote))]
    assert held == []


def test_a_table_quote_lies_within_one_cell(truth: dict[str, dict[str, Any]]) -> None:
    # never two cells: parsers join cells with " | ", spaces or tabs, so a two-cell quote tests the joiner
    cells = _cells(truth)
    outside = [
        qid
        for qid, cat, quote in _quotes()
        if cat == "table" and not any(normalise(quote) in c for c in cells)
    ]
    assert outside == []


def test_a_prose_quote_is_4_to_25_words_within_one_block(
    golden: GoldenSet, texts: dict[str, str], truth: dict[str, dict[str, Any]]
) -> None:
    cells = _cells(truth)
    wrong = []
    for question in golden.questions:
        for label in question.labels:
            quote = normalise(label.quote)
            if any(quote in cell for cell in cells):
                continue  # a cell (a figure) quoted by a multi-passage question
            words = len(quote.split())
            if not 4 <= words <= 25 or "\n\n" in texts[label.doc_id][label.start : label.end]:
                wrong.append((question.id, words))
    assert wrong == []
