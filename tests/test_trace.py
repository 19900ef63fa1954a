from __future__ import annotations

import dataclasses
import json

from clear_rag.generate.planner import Planner
from clear_rag.providers.fake import ScriptedChatModel
from clear_rag.store import Store
from clear_rag.trace import found_by, from_json, render, to_dict, to_json
from clear_rag.types import Candidate, Contribution, StageResult, Trace
from tests.conftest import toy_pipeline


def _cand(cid: str, score: float, **sources: tuple[int, float, float]) -> Candidate:
    return Candidate(cid, cid.split("#")[0], 0, 4, score, {k: Contribution(*v) for k, v in sources.items()})


TRACE = Trace(
    id="t1",
    query="q",
    phrasings=("q",),
    stages=(
        StageResult("keyword", (_cand("a#0", 2.0, keyword=(1, 2.0, 2.0)), _cand("b#0", 1.0)), 1.0),
        StageResult("vector", (_cand("b#0", 0.9), _cand("c#0", 0.5)), 2.0),
        StageResult(
            "fusion",
            (
                _cand("b#0", 1 / 61 + 1 / 62, keyword=(2, 1.0, 1 / 62), vector=(1, 0.9, 1 / 61)),
                _cand("a#0", 1 / 61, keyword=(1, 2.0, 1 / 61)),
                _cand("c#0", 1 / 62, vector=(2, 0.5, 1 / 62)),
            ),
            0.1,
            {"method": "rrf", "k": 60},
        ),
        StageResult(
            "rerank", (_cand("a#0", 3.0), _cand("c#0", 1.0), _cand("b#0", -1.0)), 5.0, {"input": "fusion"}
        ),
    ),
)


def test_json_round_trip_is_exact() -> None:
    assert from_json(to_json(TRACE)) == TRACE


def test_render_shows_sources_and_rank_moves() -> None:
    text = render(TRACE, text=lambda c: {"a#0": "alpha text"}.get(c.chunk_id, ""))
    assert "[fusion] 3 candidates" in text
    assert "from keyword #2 (1.000), vector #1 (0.900)" in text
    rerank = text[text.index("[rerank]") :].splitlines()
    assert rerank[1].split()[:2] == ["1.", "↑1"]  # a#0 was second after fusion
    assert rerank[3].split()[:2] == ["2.", "↑1"]  # c#0 was third
    assert rerank[4].split()[:2] == ["3.", "↓2"]  # b#0 was first
    assert '"alpha text"' in text


def test_render_marks_the_tail_a_reranker_kept_without_showing_its_placeholder() -> None:
    """Shortlist 2 of fusion's 3: under "replace" the kept c#0's score is its place below the logits
    (lowest 1.0, minus 1), printed as "-" and marked not re-scored, its fusion rank beside it; under
    rrf its one term 1/(60+3) is a real score, printed."""
    fusion = TRACE.stages[2]
    replace = StageResult(
        "rerank",
        (
            _cand("a#0", 3.0, fusion=(2, 1 / 61, 0.0)),
            _cand("b#0", 1.0, fusion=(1, 1 / 61 + 1 / 62, 0.0)),
            _cand("c#0", 1.0 - 1, fusion=(3, 1 / 62, 0.0)),
        ),
        5.0,
        {"input": "fusion", "display": "sigmoid", "reranked": 2},
    )
    lines = render(dataclasses.replace(TRACE, stages=(fusion, replace))).splitlines()
    tail = next(line for line in lines if "c#0" in line and "not re-scored" in line)
    assert tail.split()[:3] == ["3.", "=", "-"] and "0.0000" not in tail
    assert "from fusion #3 (0.016)" in lines[lines.index(tail) + 1]
    rrf = StageResult(
        "rerank",
        (
            _cand("a#0", 1 / (60 + 2) + 1 / (60 + 1), fusion=(2, 1 / 61, 1 / 62)),
            _cand("b#0", 1 / (60 + 1) + 1 / (60 + 2), fusion=(1, 1 / 61 + 1 / 62, 1 / 61)),
            _cand("c#0", 1 / (60 + 3), fusion=(3, 1 / 62, 1 / (60 + 3))),
        ),
        5.0,
        {"input": "fusion", "method": "rrf", "k": 60, "reranked": 2},
    )
    text = render(dataclasses.replace(TRACE, stages=(fusion, rrf)))
    assert f"{1 / (60 + 3):9.4f}  c#0  (not re-scored)" in text


def test_two_level_contributions_render_and_survive_json_and_found_by_names_the_searches() -> None:
    from clear_rag.types import Contribution

    q0, q1 = Contribution(2, 7.5, 1 / 62), Contribution(1, 8.0, 1 / 61)
    keyword = Contribution(1, 1 / 61 + 1 / 62, 1 / 61, parts={"keyword·q0": q0, "keyword·q1": q1})
    fused = Candidate("a#0", "a", 0, 5, 1 / 61, {"keyword": keyword})
    trace = Trace(
        "t",
        "q",
        ("q", "other"),
        (
            StageResult("keyword·q0", (_cand("b#0", 9.0), _cand("a#0", 7.5)), 1.0, {"retriever": "keyword"}),
            StageResult("keyword·q1", (_cand("a#0", 8.0),), 1.0, {"retriever": "keyword"}),
            StageResult("fusion", (fused,), 0.1, {"inputs": "keyword"}),
        ),
    )
    assert from_json(to_json(trace)) == trace
    assert "from keyword #1 (0.033) [keyword·q0 #2, keyword·q1 #1]" in render(trace)
    assert found_by(trace, "a#0") == {"keyword·q0": 2, "keyword·q1": 1}
    assert found_by(trace, "zzz") == {}


def test_the_hand_built_plain_data_is_what_asdict_gives(toy_store: Store) -> None:
    """``to_dict`` builds stages by hand for speed; as JSON (lists where ``asdict`` keeps tuples) it
    must be exactly ``asdict``'s, on a real trace with two-level fusion parts, a rerank and citations."""
    chat = ScriptedChatModel()
    chat.enqueue("disc brake pads\ntyre pressure")
    chat.enqueue("Pads at 1.5 mm [1].")
    pipeline = toy_pipeline(toy_store, expand=2, rerank=True)
    trace = Planner(pipeline, chat).run("when do disc brake pads need replacing")
    assert any(c.parts for s in trace.stages for cand in s.candidates for c in cand.sources.values())
    assert json.dumps(to_dict(trace)) == json.dumps(dataclasses.asdict(trace))
