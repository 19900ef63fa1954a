"""Headings of the truth a parse marked as headings, and the parse's headings that are the truth's.

A parsed heading is a ``heading`` block of the body; it matches a truth heading when their ``tokens``
are equal (case, punctuation and typography aside; the level is not compared). Over the multisets:

    matched   = sum_h min(truth count of h, parsed count of h)
    recall    = matched / truth headings       # a heading merged into its paragraph is missed
    precision = matched / parsed headings      # a caption or code line marked as a heading costs here

Only a truth that lists its headings is scored: with none listed both are ``None`` (not measured,
rather than a perfect 1.0 for a truth that never said). A parse with no heading blocks against a truth
that lists some: recall 0.0, precision 1.0 (it marked nothing wrongly).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from clear_rag.eval.parse.tokens import ratio, tokens


@dataclass(frozen=True, slots=True)
class HeadingScore:
    """The module's counts; ``recall`` and ``precision`` are ``None`` where the truth lists no heading."""

    matched: int
    parsed: int
    truth: int

    @property
    def recall(self) -> float | None:
        return ratio(self.matched, self.truth, empty=0.0) if self.truth else None

    @property
    def precision(self) -> float | None:
        return ratio(self.matched, self.parsed, empty=1.0) if self.truth else None


def heading_recovery(parsed: Iterable[str], truth: Iterable[str]) -> HeadingScore:
    """``HeadingScore`` of the parse's heading texts ``parsed`` against the truth's ``truth``."""
    want = Counter(run for run in (tuple(tokens(h)) for h in truth) if run)
    if not want:  # not measured: nothing counted, so a sum over documents holds only measured ones
        return HeadingScore(0, 0, 0)
    have = Counter(run for run in (tuple(tokens(h)) for h in parsed) if run)
    matched = sum(min(count, have[run]) for run, count in want.items())
    return HeadingScore(matched, sum(have.values()), sum(want.values()))
