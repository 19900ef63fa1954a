"""Headings recovered (clear_rag.eval.parse.headings): values as formulas, and "not measured" where the
truth lists no headings, so a sum over documents holds only the measured ones."""

from __future__ import annotations

import pytest

from clear_rag.eval.parse.document import overall
from clear_rag.eval.parse.headings import heading_recovery
from clear_rag.eval.parse.truth import Truth
from tests.eval.test_parse_metrics import PARAGRAPHS, PERFECT, TRUTH, score

TITLE, SECTION = "Item 7. Management's Discussion", "Net sales by category"
WITH_HEADINGS = Truth(
    text="\n\n".join([TITLE, TRUTH.text, SECTION]), tables=TRUTH.tables, headings=(TITLE, SECTION)
)


def test_headings_as_formulas() -> None:
    got = heading_recovery(["ITEM 7. Management’s discussion", "Figure 1", "Figure 1"], [TITLE, SECTION])
    assert (got.matched, got.parsed, got.truth) == (1, 3, 2)
    assert (got.recall, got.precision) == pytest.approx((1 / 2, 1 / 3))


def test_a_heading_merged_into_its_paragraph_is_missed_and_a_marked_paragraph_costs_precision() -> None:
    perfect = score([("heading", TITLE), *PERFECT, ("heading", SECTION)], WITH_HEADINGS)
    assert (perfect.headings.recall, perfect.headings.precision) == (1.0, 1.0)
    merged = score([("paragraph", TITLE), *PERFECT, ("heading", SECTION)], WITH_HEADINGS)
    assert merged.headings.recall == pytest.approx(1 / 2)
    extra = score(
        [("heading", TITLE), ("heading", PARAGRAPHS[0]), *PERFECT[1:], ("heading", SECTION)], WITH_HEADINGS
    )
    assert (extra.headings.recall, extra.headings.precision) == pytest.approx((1.0, 2 / 3))


def test_no_heading_blocks_recall_nothing_and_mark_nothing_wrongly() -> None:
    none = score(PERFECT, WITH_HEADINGS)
    assert (none.headings.recall, none.headings.precision) == (0.0, 1.0)


def test_a_truth_without_headings_is_not_measured_and_adds_nothing_to_the_sum() -> None:
    unlisted = score([("heading", TITLE), *PERFECT])
    assert (unlisted.headings.recall, unlisted.headings.precision) == (None, None)
    assert unlisted.to_dict()["headings_recall"] is None
    assert unlisted.to_dict()["counts"]["headings_parsed"] == 0
    listed = score([("heading", TITLE), ("heading", PARAGRAPHS[0]), *PERFECT[1:]], WITH_HEADINGS)
    total = overall([unlisted, listed])
    assert total is not None and total.headings == listed.headings
