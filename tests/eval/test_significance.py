from __future__ import annotations

import math

import pytest

from clear_rag.eval.significance import compare, paired_bootstrap_ci, sign_test_p


def test_sign_test_as_the_binomial_tail() -> None:
    # 8 up, 2 down: P(X <= 2) for Binomial(10, 1/2), doubled
    expected = 2 * (math.comb(10, 0) + math.comb(10, 1) + math.comb(10, 2)) / 2**10
    assert sign_test_p(8, 2) == pytest.approx(expected)
    assert sign_test_p(5, 5) == 1.0
    assert sign_test_p(0, 0) == 1.0


def test_bootstrap_is_seeded_and_brackets_the_mean() -> None:
    diffs = [0.1, 0.2, 0.0, 0.3, -0.1, 0.2, 0.1, 0.0]
    low, high = paired_bootstrap_ci(diffs)
    assert (low, high) == paired_bootstrap_ci(diffs)
    assert low < sum(diffs) / len(diffs) < high
    assert paired_bootstrap_ci([]) == (0.0, 0.0)
    assert paired_bootstrap_ci([0.5, 0.5, 0.5]) == pytest.approx((0.5, 0.5))


def test_compare_counts_moves_and_refuses_unpaired_rows() -> None:
    result = compare("ndcg@10", "base", [0.5, 0.5, 1.0, 0.0], [1.0, 0.5, 0.0, 0.5])
    assert (result.up, result.down, result.ties) == (2, 1, 1)
    assert result.difference == pytest.approx((0.5 + 0 - 1 + 0.5) / 4)
    assert result.p_sign == pytest.approx(sign_test_p(2, 1))
    with pytest.raises(ValueError, match="cannot pair 2 questions with 1"):
        compare("m", "b", [1.0, 0.0], [1.0])
