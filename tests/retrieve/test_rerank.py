from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

from clear_rag.errors import ModelError
from clear_rag.providers.fake import LexicalReranker
from clear_rag.retrieve.rerank import RerankStage, sigmoid
from clear_rag.types import Candidate, Contribution
from tests.retrieve.conftest import DOCS, TABLE, chunk_text

MakeCandidate = Callable[[str, float], Candidate]
QUERY = "worn chain cassette"


class CountingReranker(LexicalReranker):
    def __init__(self, logits: Sequence[float] | None = None) -> None:
        self.calls: list[list[str]] = []
        self.logits = logits

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        self.calls.append(list(passages))
        if self.logits is not None:
            return np.asarray(self.logits, dtype=np.float32)
        return super().score(query, passages)


def test_rerank_orders_the_shortlist_by_logit_and_keeps_the_rest_below(cand: MakeCandidate) -> None:
    """Only the shortlist is scored; the candidate past it is kept below, not dropped (the predecessor
    dropped it), with a score that is its place below the lowest logit, not a logit."""
    reranker = CountingReranker()
    fused = [
        cand("brakes#0000", 0.9),
        cand("chains#0000", 0.8),
        cand("chains#0001", 0.7),
        cand("tyres#0000", 0.6),
    ]
    detail: dict[str, object] = {}
    got = RerankStage(reranker, chunk_text, shortlist=3)(QUERY, fused, source="fusion", detail=detail)
    # Query words: worn, chain, cassette. chains#0001 has all three, chains#0000 only "chain".
    assert [c.chunk_id for c in got] == ["chains#0001", "chains#0000", "brakes#0000", "tyres#0000"]
    lowest = 8 * 0 / 3 - 4
    assert [c.score for c in got] == pytest.approx([8 * 3 / 3 - 4, 8 * 1 / 3 - 4, lowest, lowest - 1])
    assert reranker.calls == [
        [chunk_text("brakes#0000"), chunk_text("chains#0000"), chunk_text("chains#0001")]
    ]
    assert got[3].sources == {"fusion": Contribution(rank=4, score=0.6, contribution=0.0)}
    assert detail == {"reranked": 3}


def test_rerank_records_only_its_input_rank_and_score(cand: MakeCandidate) -> None:
    earlier = Contribution(rank=1, score=1 / 61, contribution=1 / 61)
    first = Candidate("chains#0000", "chains", 0, TABLE["chains#0000"].end, 1 / 61, {"keyword": earlier})
    got = RerankStage(CountingReranker([1.5]), dict.fromkeys(TABLE, "text"), name="ce")(
        QUERY, [first], source="fusion"
    )
    # the logit owes nothing to the fused score: the input's rank and score, and 0.0 added
    assert got == [
        Candidate("chains#0000", "chains", 0, first.end, 1.5, {"fusion": Contribution(1, 1 / 61, 0.0)})
    ]
    assert first.score == 1 / 61  # the input candidate is untouched


def test_equal_logits_break_by_chunk_id(cand: MakeCandidate) -> None:
    fused = [cand("tyres#0000", 3.0), cand("brakes#0001", 2.0), cand("brakes#0000", 1.0)]
    got = RerankStage(CountingReranker([0.0, 0.0, 0.0]), chunk_text)(QUERY, fused, source="fusion")
    assert [(c.chunk_id, c.sources["fusion"].rank) for c in got] == [  # input ranks 3, 2, 1
        ("brakes#0000", 3),
        ("brakes#0001", 2),
        ("tyres#0000", 1),
    ]


@pytest.mark.parametrize("rrf_k", [None, 60])
def test_rerank_on_empty_input_does_not_call_the_model(rrf_k: int | None) -> None:
    reranker = CountingReranker()
    detail: dict[str, object] = {}
    assert RerankStage(reranker, chunk_text, rrf_k=rrf_k)(QUERY, [], detail=detail) == []
    assert reranker.calls == []
    assert detail == {"reranked": 0}


@pytest.mark.parametrize("logits", [[1.0], [1.0, float("nan")]])
def test_a_reranker_giving_the_wrong_logits_is_a_model_error(
    cand: MakeCandidate, logits: list[float]
) -> None:
    stage = RerankStage(CountingReranker(logits), chunk_text)
    with pytest.raises(ModelError, match=r"lexical-reranker@overlap-1.*2 passages"):
        stage(QUERY, [cand("brakes#0000", 1.0), cand("tyres#0000", 0.5)])


@pytest.mark.parametrize(("shortlist", "name"), [(0, "rerank"), (True, "rerank"), (5, "")])
def test_rerank_settings_are_checked(shortlist: int, name: str) -> None:
    with pytest.raises(ValueError, match="RerankStage"):
        RerankStage(LexicalReranker(), chunk_text, shortlist=shortlist, name=name)


def test_sigmoid_is_the_logistic_function() -> None:
    assert sigmoid(0.0) == 0.5
    assert sigmoid(2.0) == pytest.approx(1 / (1 + math.exp(-2.0)))
    assert sigmoid(-2.0) == pytest.approx(1 / (1 + math.exp(2.0)))
    assert sigmoid(3.0) + sigmoid(-3.0) == pytest.approx(1.0)


def test_sigmoid_does_not_overflow_for_large_logits() -> None:
    assert sigmoid(1000.0) == 1.0
    assert sigmoid(-1000.0) == 0.0
    assert 0.0 < sigmoid(-700.0) < 1e-300


def test_fixture_documents_are_what_the_chunks_slice() -> None:
    assert "".join(chunk_text(f"chains#000{i}") for i in (0, 1)) == DOCS["chains"]


def _shortlist(n: int) -> list[Candidate]:
    return [Candidate(f"doc{i:02d}#0000", f"doc{i:02d}", 0, 10, 1.0 - i / 100) for i in range(n)]


@pytest.mark.parametrize("k", [1, 60])
def test_rerank_fused_by_rrf_keeps_what_both_rankings_agree_on(k: int) -> None:
    """Under rrf the shortlist is ordered by 1/(k + first-stage rank) + 1/(k + reranker rank): a reranker
    that agrees with the first stage leaves the order as it was; one that reverses it ties each candidate
    with its mirror (ranks 1 and 6 against 6 and 1), which the reranker's order breaks, the pairs
    furthest from the middle first (1/x is convex); each candidate's two terms sum to its score."""
    head = _shortlist(6)
    chunk_ids = [c.chunk_id for c in head]
    texts = dict.fromkeys(chunk_ids, "t")
    agree = RerankStage(CountingReranker([6, 5, 4, 3, 2, 1]), texts, rrf_k=k)
    assert [c.chunk_id for c in agree(QUERY, head, source="fusion")] == chunk_ids
    reverse = RerankStage(CountingReranker([1, 2, 3, 4, 5, 6]), texts, rrf_k=k)
    got = reverse(QUERY, head, source="fusion")
    assert [c.chunk_id for c in got] == [chunk_ids[i] for i in (5, 0, 4, 1, 3, 2)]
    for c in got:
        first, second = c.sources["fusion"], c.sources["cross-encoder"]
        assert first.rank == chunk_ids.index(c.chunk_id) + 1 and second.rank == 7 - first.rank
        assert second.score == first.rank  # the logit, kept beside its rank
        assert c.score == pytest.approx(1 / (k + first.rank) + 1 / (k + second.rank))
        assert first.contribution + second.contribution == pytest.approx(c.score)


def test_rerank_fused_by_rrf_moves_a_candidate_both_rankings_favour() -> None:
    """First for the reranker and third in the first stage beats second in both (1/x is convex), and
    both beat first in one ranking and last in the other."""
    head = _shortlist(4)
    logits = [0.0, 2.0, 9.0, 1.0]  # reranker order: doc02, doc01, doc03, doc00
    stage = RerankStage(CountingReranker(logits), dict.fromkeys([c.chunk_id for c in head], "t"), rrf_k=60)
    got = stage(QUERY, head, source="fusion")
    # sums: doc00 1/61 + 1/64, doc01 1/62 + 1/62, doc02 1/63 + 1/61, doc03 1/64 + 1/63
    assert [c.chunk_id for c in got] == ["doc02#0000", "doc01#0000", "doc00#0000", "doc03#0000"]
    assert (got[0].sources["cross-encoder"].rank, got[0].sources["cross-encoder"].score) == (1, 9.0)
    with pytest.raises(ValueError, match="rrf_k=0 is invalid"):
        RerankStage(CountingReranker(), chunk_text, rrf_k=0)


class Memo:
    """A reranker that keeps every logit it gave, as OnnxCrossEncoder does at batch size 1."""

    name, version = "memo", "1"

    def __init__(self) -> None:
        self.kept: dict[tuple[str, str], float] = {}

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]:
        return self.score_reusing(query, passages)[0]

    def score_reusing(self, query: str, passages: Sequence[str]) -> tuple[npt.NDArray[np.float64], int]:
        reused = sum((query, p) in self.kept for p in passages)
        for p in passages:
            self.kept.setdefault((query, p), float(len(set(query.split()) & set(p.split()))))
        return np.array([self.kept[(query, p)] for p in passages]), reused


def test_the_stage_detail_says_how_many_logits_were_reused_and_the_ranking_does_not_change() -> None:
    texts = {f"c{i}": " ".join(["brake"] * (i % 3) + ["pads"] * (i % 2) + [f"w{i}"]) for i in range(8)}
    candidates = [
        Candidate(chunk_id=c, doc_id="d", start=0, end=1, score=1.0 / (n + 1)) for n, c in enumerate(texts)
    ]
    memo = Memo()
    shallow, deep = RerankStage(memo, texts, shortlist=3), RerankStage(memo, texts, shortlist=6)
    first: dict[str, object] = {}
    ranked = shallow("brake pads", candidates, detail=first)
    assert first == {"reranked": 3, "reused": 0}
    second: dict[str, object] = {}
    deeper = deep("brake pads", candidates, detail=second)
    assert second == {"reranked": 6, "reused": 3}
    alone = RerankStage(Memo(), texts, shortlist=6)("brake pads", candidates)
    assert [c.chunk_id for c in deeper] == [c.chunk_id for c in alone]
    assert [c.score for c in ranked] == [c.score for c in shallow("brake pads", candidates)]


def test_rerank_fused_by_rrf_keeps_the_tail_with_its_one_input_term() -> None:
    """Shortlist 3 of 5 at k = 60: the tail (input ranks 4 and 5) keeps its input order, each scored by
    its own term alone, with no reranker term; the lowest shortlisted sum is above the tail's best."""
    head = _shortlist(5)
    logits = [0.0, 1.0, 2.0]  # reranker order: doc02, doc01, doc00
    stage = RerankStage(
        CountingReranker(logits), dict.fromkeys([c.chunk_id for c in head], "t"), shortlist=3, rrf_k=60
    )
    detail: dict[str, object] = {}
    got = stage(QUERY, head, source="fusion", detail=detail)
    # sums: doc00 1/(60+1) + 1/(60+3), doc01 1/(60+2) + 1/(60+2), doc02 1/(60+3) + 1/(60+1)
    assert [c.chunk_id for c in got] == ["doc02#0000", "doc00#0000", "doc01#0000", "doc03#0000", "doc04#0000"]
    assert [c.score for c in got] == pytest.approx(
        [
            1 / (60 + 3) + 1 / (60 + 1),
            1 / (60 + 1) + 1 / (60 + 3),
            1 / (60 + 2) + 1 / (60 + 2),
            1 / (60 + 4),
            1 / (60 + 5),
        ]
    )
    assert got[3].sources == {"fusion": Contribution(rank=4, score=head[3].score, contribution=1 / (60 + 4))}
    assert got[4].sources == {"fusion": Contribution(rank=5, score=head[4].score, contribution=1 / (60 + 5))}
    assert detail == {"reranked": 3}


def test_under_rrf_the_worst_shortlisted_candidate_still_beats_the_best_of_the_tail() -> None:
    """The worst a shortlisted candidate can do is last in both rankings: 2/(k + shortlist), above the
    tail's best 1/(k + shortlist + 1); and if the rankings disagree, each term is still at least
    1/(k + shortlist). Checked at k = 1, where the terms are furthest apart, and at 60."""
    for k in (1, 60):
        for size in (1, 2, 5):
            head = _shortlist(size + 2)
            agree = list(range(size, 0, -1))  # the reranker keeps the input's order: doc(size-1) last in both
            stage = RerankStage(
                CountingReranker(agree),
                dict.fromkeys([c.chunk_id for c in head], "t"),
                shortlist=size,
                rrf_k=k,
            )
            got = stage(QUERY, head, source="fusion")
            assert got[size - 1].score == pytest.approx(2 / (k + size))
            assert got[size].score == pytest.approx(1 / (k + size + 1))
            assert got[size - 1].score > got[size].score


class Seeded:
    """A reranker with a logit for every text, as the hypothesis draw gives them."""

    name, version = "seeded", "1"

    def __init__(self, logits: dict[str, float]) -> None:
        self.logits = logits

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float64]:
        return np.array([self.logits[p] for p in passages], dtype=np.float64)


@given(
    logits=st.lists(st.floats(-1e6, 1e6, allow_nan=False), max_size=12),
    shortlist=st.integers(1, 14),
    rrf_k=st.sampled_from([None, 1, 60]),
)
def test_rerank_reorders_its_shortlist_and_keeps_the_tail_in_input_order(
    logits: list[float], shortlist: int, rrf_k: int | None
) -> None:
    """Whatever the logits and the shortlist, in both modes: the output holds the input's candidates,
    its first min(shortlist, n) are the input's first min(shortlist, n), the rest follow in input
    order, and every shortlisted score is above every tail score."""
    n = len(logits)
    candidates = [Candidate(f"doc{i:02d}#0000", f"doc{i:02d}", 0, 1, 1.0 / (i + 1)) for i in range(n)]
    reranker = Seeded({f"text {i}": logit for i, logit in enumerate(logits)})
    texts = {c.chunk_id: f"text {i}" for i, c in enumerate(candidates)}
    got = RerankStage(reranker, texts, shortlist=shortlist, rrf_k=rrf_k)(QUERY, candidates, source="fusion")
    ids = [c.chunk_id for c in candidates]
    cut = min(shortlist, n)
    assert sorted(c.chunk_id for c in got) == sorted(ids) and len(got) == n
    assert {c.chunk_id for c in got[:cut]} == set(ids[:cut])
    assert [c.chunk_id for c in got[cut:]] == ids[cut:]
    head, tail = [c.score for c in got[:cut]], [c.score for c in got[cut:]]
    assert not tail or min(head) > max(tail)
    assert all(a > b for a, b in itertools.pairwise(tail))  # the scores keep the tail's order
    for rank, c in enumerate(got[cut:], start=cut + 1):
        assert c.sources["fusion"].rank == rank and "cross-encoder" not in c.sources
