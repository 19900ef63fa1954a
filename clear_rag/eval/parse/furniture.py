"""Page furniture (running headers, footers, page numbers) that leaked into a parse's body.

A furniture string is found wherever its ``tokens`` occur as a contiguous run (``occurrences``): on a
line of its own, sharing a line with another header or footer, or glued to a body line
(``"... last Saturday of September. 23"``). The same words can be body text too (a page number ``12``
in ``$12 million``, the company's name in a sentence), so a string counts only by its excess over the
truth body. For each furniture string f, with ``n_f(x)`` its occurrences in the tokens of x:

    on_pages_f = max(0, n_f(pages) - n_f(truth text))     # printed as furniture on the pages
    leaked_f   = min(on_pages_f, max(0, n_f(body) - n_f(truth text)))
    leakage    = sum_f leaked_f / sum_f on_pages_f

``pages`` is a full extraction of the PDF (every word the pages carry, furniture included), ``body``
the parse's body. A parse that repeats a header more often than the pages print it leaks at most what
the pages carry. No furniture, or none on the pages: leakage 0.0.

Overlapping strings are counted once: longer runs are matched first and a token matched by one run is
not matched again, so the page number ``23`` inside the footer ``Apple Inc. | 2024 Form 10-K | 23``
belongs to the footer. The excess is over the whole document (the truth has no pages), so a body
occurrence the parse lost can hide a leaked one of the same string: ``leaked`` is a lower bound where
a parse also drops body words. Furniture the truth does not list lends its tokens to a listed string
it contains: the 10-K renders' "Page 38 of 48" footer, while the truth did not list it, counted as the
filed page numbers "38." and "48." on every page of Alphabet's render; listed now (longer runs first),
it keeps them apart and is counted itself.

The measure this replaced counted a string only where its tokens filled a whole line of the body: a
header that shared its line with a footer, or a page number glued to a body line, leaked 0
(``test_furniture_sharing_a_line_or_glued_to_prose_leaks`` pins it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from clear_rag.eval.parse.tokens import ratio, tokens

Run = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LeakScore:
    """``leakage = leaked / on_pages``: of the furniture occurrences printed on the pages, the share
    still in the body. 0.0 is perfect, and is also the value when there is no furniture to leak."""

    leaked: int
    on_pages: int

    @property
    def leakage(self) -> float:
        return ratio(self.leaked, self.on_pages, empty=0.0)


def runs(furniture: Iterable[str]) -> list[Run]:
    """The distinct token runs of the furniture strings, longest first (ties in token order)."""
    return sorted({tuple(tokens(f)) for f in furniture} - {()}, key=lambda run: (-len(run), run))


def occurrences(sequence: Sequence[str], furniture: Iterable[str]) -> Counter[Run]:
    """How often each furniture string's tokens occur as a contiguous run of ``sequence``; longer runs
    first, and no token is counted in two runs."""
    starts: dict[str, list[int]] = {}
    for i, token in enumerate(sequence):
        starts.setdefault(token, []).append(i)
    taken = [False] * len(sequence)
    found: Counter[Run] = Counter()
    for run in runs(furniture):
        width, free_from = len(run), 0
        for i in starts.get(run[0], ()):
            span = range(i, i + width)
            if i >= free_from and tuple(sequence[i : i + width]) == run and not any(taken[j] for j in span):
                for j in span:
                    taken[j] = True
                found[run] += 1
                free_from = i + width
    return found


def on_pages(pages: str, truth_text: str, furniture: Iterable[str]) -> Counter[Run]:
    """Per furniture string, its occurrences in a full extraction of the pages beyond those of the
    truth body: ``on_pages_f`` of the module's formula."""
    strings = list(furniture)
    return occurrences(tokens(pages), strings) - occurrences(tokens(truth_text), strings)


def furniture_leakage(
    body: Sequence[str], truth: Sequence[str], furniture: Iterable[str], printed: Mapping[Run, int]
) -> LeakScore:
    """``LeakScore`` of the furniture left in ``body`` (the parse's body tokens), against the truth
    body's tokens ``truth`` and ``printed``, the occurrences on the pages (``on_pages``)."""
    strings = list(furniture)
    extra = occurrences(body, strings) - occurrences(truth, strings)
    leaked = sum(min(count, extra[run]) for run, count in printed.items())
    return LeakScore(leaked, sum(printed.values()))
