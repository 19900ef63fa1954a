from __future__ import annotations

from collections.abc import Callable

import pytest

from clear_rag.retrieve.fusion import minmax, minmax_normalise, rrf, rrf_contribution
from clear_rag.types import Candidate, Contribution

MakeCandidate = Callable[[str, float], Candidate]


@pytest.fixture
def ranked(cand: MakeCandidate) -> dict[str, list[Candidate]]:
    return {
        "keyword": [cand("brakes#0000", 9.0), cand("tyres#0001", 6.0), cand("chains#0000", 3.0)],
        "vector": [cand("tyres#0001", 0.9), cand("chains#0001", 0.5), cand("brakes#0000", 0.4)],
    }


def scores(candidates: list[Candidate]) -> dict[str, float]:
    return {c.chunk_id: c.score for c in candidates}


def test_rrf_contribution_is_the_published_formula() -> None:
    assert rrf_contribution(1) == 1 / (60 + 1)
    assert rrf_contribution(3, k=10) == 1 / (10 + 3)


def test_rrf_sums_reciprocal_ranks(ranked: dict[str, list[Candidate]]) -> None:
    fused = rrf(ranked)
    assert [c.chunk_id for c in fused] == ["tyres#0001", "brakes#0000", "chains#0001", "chains#0000"]
    assert scores(fused) == pytest.approx(
        {
            "tyres#0001": 1 / (60 + 2) + 1 / (60 + 1),
            "brakes#0000": 1 / (60 + 1) + 1 / (60 + 3),
            "chains#0001": 1 / (60 + 2),
            "chains#0000": 1 / (60 + 3),
        }
    )


def test_rrf_records_each_lists_rank_score_and_contribution(ranked: dict[str, list[Candidate]]) -> None:
    by_id = {c.chunk_id: c for c in rrf(ranked, k=10)}
    assert by_id["tyres#0001"].sources == {
        "keyword": Contribution(rank=2, score=6.0, contribution=1 / (10 + 2)),
        "vector": Contribution(rank=1, score=0.9, contribution=1 / (10 + 1)),
    }
    assert by_id["chains#0000"].sources == {"keyword": Contribution(3, 3.0, 1 / (10 + 3))}
    assert (by_id["chains#0000"].doc_id, by_id["chains#0000"].start) == ("chains", 0)


def test_rrf_ties_break_by_chunk_id_whatever_the_list_order(cand: MakeCandidate) -> None:
    a, b = cand("tyres#0000", 5.0), cand("brakes#0001", 4.0)
    for lists in ({"keyword": [a, b], "vector": [b, a]}, {"vector": [b, a], "keyword": [a, b]}):
        fused = rrf(lists)
        assert [c.chunk_id for c in fused] == ["brakes#0001", "tyres#0000"]
        assert fused[0].score == fused[1].score == pytest.approx(1 / (60 + 1) + 1 / (60 + 2))


def test_rrf_on_empty_input() -> None:
    assert rrf({}) == []
    assert rrf({"keyword": [], "vector": []}) == []


@pytest.mark.parametrize("k", [0, -1, float("nan"), True])
def test_rrf_k_must_be_positive(k: float) -> None:
    with pytest.raises(ValueError, match=r"rrf k="):
        rrf({}, k=k)


def test_a_chunk_twice_in_one_list_is_refused(cand: MakeCandidate) -> None:
    with pytest.raises(ValueError, match=r"'brakes#0000' appears twice in list 'keyword'"):
        rrf({"keyword": [cand("brakes#0000", 2.0), cand("brakes#0000", 1.0)]})


def test_minmax_normalise_spans_zero_to_one_and_equal_scores_give_one() -> None:
    assert minmax_normalise([9.0, 6.0, 3.0]) == [1.0, (6 - 3) / (9 - 3), 0.0]
    assert minmax_normalise([0.7, 0.7]) == [1.0, 1.0]
    assert minmax_normalise([0.2]) == [1.0]
    assert minmax_normalise([]) == []


def test_minmax_fuses_weighted_normalised_scores(ranked: dict[str, list[Candidate]]) -> None:
    fused = minmax(ranked, weights={"keyword": 0.3, "vector": 0.7})
    assert [c.chunk_id for c in fused] == ["tyres#0001", "brakes#0000", "chains#0001", "chains#0000"]
    assert scores(fused) == pytest.approx(
        {
            "tyres#0001": 0.3 * (6 - 3) / (9 - 3) + 0.7 * (0.9 - 0.4) / (0.9 - 0.4),
            "brakes#0000": 0.3 * (9 - 3) / (9 - 3) + 0.7 * (0.4 - 0.4) / (0.9 - 0.4),
            "chains#0001": 0.7 * (0.5 - 0.4) / (0.9 - 0.4),
            "chains#0000": 0.3 * (3 - 3) / (9 - 3),
        }
    )
    sources = fused[0].sources
    assert {name: (c.rank, c.score) for name, c in sources.items()} == {
        "keyword": (2, 6.0),
        "vector": (1, 0.9),
    }
    assert sources["keyword"].contribution == pytest.approx(0.3 * (6 - 3) / (9 - 3))
    assert sources["vector"].contribution == pytest.approx(0.7 * (0.9 - 0.4) / (0.9 - 0.4))


def test_minmax_weights_default_to_one(ranked: dict[str, list[Candidate]]) -> None:
    assert scores(minmax(ranked)) == scores(minmax(ranked, weights={"keyword": 1.0}))
    assert scores(minmax(ranked))["tyres#0001"] == pytest.approx((6 - 3) / (9 - 3) + 1.0)


def test_minmax_on_empty_input() -> None:
    assert minmax({}) == []
    assert minmax({"keyword": []}, weights={"keyword": 0.5}) == []


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        ({"keywrd": 1.0}, r"\['keywrd'\] that are not fused"),
        ({"keyword": -0.5}, r"keyword=-0.5 is invalid"),
        ({"vector": float("inf")}, r"vector=inf is invalid"),
    ],
)
def test_minmax_weights_are_checked(
    ranked: dict[str, list[Candidate]], weights: dict[str, float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        minmax(ranked, weights=weights)
