"""Sentences as spans: what the support check compares and the page highlights."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from clear_rag.generate.sentences import sentence_spans, windows


def _cut(text: str) -> list[str]:
    return [text[a:b] for a, b in sentence_spans(text)]


def test_sentences_end_at_stops_but_not_at_abbreviations_initials_or_decimals() -> None:
    text = "Dr. H. Danvers supervised it. She finished in 2011 [1]. It cost 1.2 million! [2][3] Next."
    assert _cut(text) == [
        "Dr. H. Danvers supervised it.",
        "She finished in 2011 [1].",
        "It cost 1.2 million! [2][3]",  # citation markers stay with the sentence they follow
        "Next.",
    ]


def test_lines_are_units_and_bullets_and_heading_marks_are_left_out() -> None:
    text = "## Roles\n\n- Since 2021 she directs the lab. She leads 14 people\n1. First point\nno stop here"
    assert _cut(text) == [
        "Roles",
        "Since 2021 she directs the lab.",
        "She leads 14 people",
        "First point",
        "no stop here",
    ]


def test_a_lower_case_word_after_a_stop_continues_the_sentence() -> None:
    assert _cut("Cut at 0.5 mm. see the guide. Then stop.") == ["Cut at 0.5 mm. see the guide.", "Then stop."]


def test_a_long_line_is_cut_into_windows_at_spaces() -> None:
    text = " ".join(["word"] * 200)
    pieces = sentence_spans(text, max_chars=100)
    assert all(b - a <= 100 for a, b in pieces) and len(pieces) > 1
    assert " ".join(text[a:b] for a, b in pieces) == text


def test_windows_are_each_sentence_then_each_adjacent_pair() -> None:
    assert windows([(0, 3), (4, 9), (10, 12)]) == [(0, 3), (4, 9), (10, 12), (0, 9), (4, 12)]
    assert windows([]) == []


@given(st.text(alphabet=st.sampled_from("ab .!?\n[1]-#A2"), max_size=200), st.integers(20, 80))
def test_spans_are_ordered_disjoint_trimmed_and_bounded(text: str, limit: int) -> None:
    spans = sentence_spans(text, max_chars=limit)
    ends = [0, *(end for _, end in spans)]
    for (start, end), previous in zip(spans, ends, strict=False):
        assert previous <= start < end <= len(text)
        assert end - start <= limit
        piece = text[start:end]
        assert piece == piece.strip() and piece
        assert "\n" not in piece
