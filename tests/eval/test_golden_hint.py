"""The hint of a quote that matches nothing: the longest run of its words found, and where it departs."""

from __future__ import annotations

import re
from typing import SupportsIndex

import pytest

from clear_rag.eval.golden import LabelError, NormalisedText, _nearest, resolve

TEXTS = {
    "docs/a.md": "Brakes\n\nDisc brakes need new pads at 1.5 mm.\n\ncheck rotor\nbleed yearly\n",
    "docs/b.txt": "Tyre pressure for road bikes is 80 to 100 psi.\n\nGravel  tyres run lower.\n",
    "docs/c.html": "Chains\n\nReplace a chain at 0.5% stretch.\n",
}


def _hint(quote: str, doc: str | None = None) -> str:
    texts = {name: NormalisedText(text) for name, text in TEXTS.items()}
    with pytest.raises(LabelError, match="matches nothing") as caught:
        resolve("q1", quote, doc, texts, "golden.yaml")
    return str(caught.value)


def test_a_wrong_first_word_still_finds_the_rest() -> None:
    hint = _hint("Tire pressure for road bikes is 80 to 100 psi.")
    at = TEXTS["docs/b.txt"].index("pressure")
    run = "'pressure for road bikes is 80 to 100 psi.'"
    assert f"its last 9 words ({run}) occur in docs/b.txt at character {at}" in hint
    assert "preceded there by 'Tyre ' where the quote has 'Tire '" in hint


def test_a_quote_wrong_in_the_middle_shows_both_departures() -> None:
    hint = _hint("Front Disc brakes need new pads at 2 mm")
    at = TEXTS["docs/a.md"].index("Disc")
    assert f"its words 2 to 7 ('Disc brakes need new pads at') occur in docs/a.md at character {at}" in hint
    assert "preceded there by 'Brakes ' where the quote has 'Front '" in hint
    assert "followed there by ' 1.5 mm. check rotor bleed yearly ' where the quote goes on ' 2 mm'" in hint


def test_the_longest_run_wins_over_the_one_at_the_start() -> None:
    hint = _hint("Tyre pressure for gravel bikes is 80 to 100 psi.")
    at = TEXTS["docs/b.txt"].index("bikes")
    assert f"its last 6 words ('bikes is 80 to 100 psi.') occur in docs/b.txt at character {at}" in hint
    assert (
        "preceded there by 'Tyre pressure for road ' where the quote has 'Tyre pressure for gravel '" in hint
    )


def test_a_run_from_the_first_word_reads_as_before() -> None:
    hint = _hint("Tyre pressure for road bikes is 90 psi.")
    assert "its first 6 words ('Tyre pressure for road bikes is') occur in docs/b.txt at character 0" in hint
    assert "where the quote goes on ' 90 psi.'" in hint


def test_offsets_point_into_the_original_text() -> None:
    hint = _hint("Gravel tyres run lower on sand")  # the text has two spaces after Gravel
    at = TEXTS["docs/b.txt"].index("Gravel")
    assert f"its first 4 words ('Gravel tyres run lower') occur in docs/b.txt at character {at}" in hint


def test_a_quote_with_nothing_in_common() -> None:
    hint = _hint("Lubricate the derailleur every week")
    assert hint.endswith(
        "matches nothing in the corpus; no two consecutive words of it occur there. "
        "Copy the quote from the document's parsed text (markup such as ** or ` is not part of it)"
    )
    assert "single word" in _hint("derailleur")


def test_only_the_named_document_is_searched() -> None:
    hint = _hint("Tire pressure for road bikes", doc="docs/a.md")
    assert "matches nothing in docs/a.md; no two consecutive words of it occur there" in hint


def test_a_long_run_is_shortened_in_the_hint() -> None:
    words = "Tyre pressure for road bikes is 80 to 100 psi. Gravel tyres run lower."
    hint = _hint(f"{words} Sand")
    assert "its first 14 words ('Tyre pressure for road bikes' ... 'psi. Gravel tyres run lower.')" in hint


class _CountingText(str):
    """A text that counts how often it is searched."""

    calls = 0

    def find(self, sub: str, start: SupportsIndex | None = None, end: SupportsIndex | None = None) -> int:
        type(self).calls += 1
        return super().find(sub, start, end)


def test_each_text_is_searched_at_most_once_per_word() -> None:
    texts = [NormalisedText(text) for text in TEXTS.values()] * 50
    for text in texts:
        text.text = _CountingText(text.text)
    quote = "A rider checks tyre pressure for road bikes is 80 to 100 psi before each ride in spring"
    _CountingText.calls = 0
    hint = _nearest(quote, texts, [f"doc{n}" for n in range(len(texts))])
    assert re.search(r"its words 5 to 13 .* occur in doc1 at", hint)
    assert _CountingText.calls <= len(quote.split()) * len(texts)
