"""Word recovery of a parse: its bag of tokens against the truth's."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from clear_rag.eval.parse.tokens import ratio


@dataclass(frozen=True, slots=True)
class WordScore:
    """Bag-of-words agreement: ``overlap = sum_t min(parsed_t, truth_t)`` over the token multisets.

    ``precision = overlap / parsed``, ``recall = overlap / truth``, ``f1 = 2PR / (P + R)``. With no
    truth tokens recall is 1.0 (nothing to recover); with no parsed tokens precision is 1.0 if the
    truth is empty too and 0.0 otherwise; F1 is 0.0 where P + R is 0.
    """

    overlap: int
    parsed: int
    truth: int

    @property
    def precision(self) -> float:
        return ratio(self.overlap, self.parsed, empty=1.0 if self.truth == 0 else 0.0)

    @property
    def recall(self) -> float:
        return ratio(self.overlap, self.truth, empty=1.0)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0


def word_recovery(parsed: Sequence[str], truth: Sequence[str]) -> WordScore:
    """Precision, recall and F1 of the parsed token multiset against the truth's (``WordScore``)."""
    have, want = Counter(parsed), Counter(truth)
    overlap = sum(min(count, have[token]) for token, count in want.items())
    return WordScore(overlap, len(parsed), len(truth))
