"""The rank flow read as a person reads it, in headless Chromium: a 4-stage question (keyword, vector,
fusion, rerank, context) and a 14-stage one (four phrasings under each search, a HyDE search, each
retriever's fusion, then fusion, rerank and the context), at 1440x900 and 390x844.

Properties, not pictures: no box's label runs into its badges or its score (bounding boxes); every
flow line joins a stage to a stage it was built from, never two searches that ran side by side; the
parallel searches stand in one column; each badge is its chunk's rank in that search as the trace
says; the layout is the same live and replayed; a stage still running says so, with a clock that
moves, until it arrives; the flow is one tab stop that the arrow keys walk along a candidate's path.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.web.app import create_app
from clear_rag.web.runner import Models
from tests.web.browser import WAIT_MS, open_page, require_browser
from tests.web.conftest import serving
from tests.web.test_page import ask, build_store, page_config, trace_of_latest

sync_api = require_browser()
opened_page = contextmanager(open_page)
QUESTION = "when do disc brake pads need replacing"
SIZES = [(1440, 900), (390, 844)]


class GatedReranker(LexicalReranker):
    """The lexical reranker, holding each call until the test opens the gate (a slow model's wait,
    with no clock in the test)."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.gate.set()

    def score(self, query: str, passages: Sequence[str]) -> npt.NDArray[np.float32]:
        assert self.gate.wait(WAIT_MS / 1000), "the test never opened the gate"
        return super().score(query, passages)


@pytest.fixture(scope="module")
def flows(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two servers over one store: 4 stages (rerank held by a gate) and 14 stages (expand, HyDE)."""
    store = build_store(tmp_path_factory.mktemp("flow"))
    reranker = GatedReranker()
    models = Models(HashEmbedder(dim=64), EchoChatModel(), lambda name: reranker)
    wide = page_config().model_copy(update={"expand": 3, "hyde": True})
    try:
        with (
            serving(create_app(store, page_config(), models)) as four,
            serving(create_app(store, wide, models)) as fourteen,
        ):
            yield {"4": four, "14": fourteen, "reranker": reranker, "store": store}
    finally:
        store.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from open_page(browser, width=1440, height=900)


# Every box, with the boxes of its parts (user units of the drawing, the same for every part).
BOXES = """() => [...document.querySelectorAll('#rankflow g.node')].map(node => {
  const box = (e) => { const b = e.getBBox(); return [b.x, b.x + b.width]; };
  return {stage: node.dataset.stage, chunk: node.dataset.chunkId, rank: Number(node.dataset.rank),
          label: node.querySelector('text.label').textContent,
          labelBox: box(node.querySelector('text.label')), scoreBox: box(node.querySelector('text.score')),
          rectBox: box(node.querySelector('rect')),
          badges: [...node.querySelectorAll('text.badge')].map(b => ({family: b.dataset.family,
                   rank: b.dataset.rank, text: b.textContent, box: box(b)}))};
})"""
LANES = """() => [...document.querySelectorAll('#rankflow g.column, #rankflow g.pending-lane')].map(g =>
  ({stage: g.dataset.stage, col: Number(g.dataset.col), pending: g.classList.contains('pending-lane'),
    top: g.getBBox().y}))"""


def stage_events(page: Any, base: str) -> dict[str, dict[str, Any]]:
    return {
        e["data"]["name"]: e["data"] for e in trace_of_latest(page, base)["events"] if e["event"] == "stage"
    }


def plan_edges(stages: dict[str, dict[str, Any]]) -> set[tuple[str, str]]:
    """(input, stage) for every stage and the stages its detail says it was built from."""
    edges = set()
    for name, stage in stages.items():
        detail = stage["detail"]
        inputs = detail.get("inputs", detail.get("input", ""))
        edges |= {(i, name) for i in inputs.split(",") if i}
    return edges


def check_boxes(boxes: list[dict[str, Any]]) -> None:
    """Rank, label, badges and score in that order inside each box, none running into the next."""
    assert boxes
    for b in boxes:
        parts = [b["labelBox"], *[badge["box"] for badge in b["badges"]], b["scoreBox"]]
        assert b["rectBox"][0] <= parts[0][0], b
        for before, after in itertools.pairwise(parts):
            assert before[1] <= after[0], b
        assert parts[-1][1] <= b["rectBox"][1], b


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("stages", ["4", "14"])
def test_no_label_runs_into_its_badges_or_score_folded_or_unfolded(
    browser: Any, flows: dict[str, Any], shots: Path, size: tuple[int, int], stages: str
) -> None:
    """On a phone in the dark scheme and a laptop in the light one (photographed folded)."""
    scheme = "dark" if size[0] < 900 else "light"
    with opened_page(browser, width=size[0], height=size[1]) as page:
        page.emulate_media(color_scheme=scheme)
        page.goto(flows[stages])
        ask(page, QUESTION)
        check_boxes(page.evaluate(BOXES))
        page.locator("#rankflow").screenshot(path=str(shots / f"rankflow-{stages}-{size[0]}-{scheme}.png"))
        folds = page.locator("#rankflow-folds button.fold")
        assert folds.count() == (2 if stages == "14" else 0)
        for n in range(folds.count()):
            folds.nth(n).click()
        sync_api.expect(page.locator("#rankflow g.column[data-stage='keyword·q1']")).to_have_count(
            1 if stages == "14" else 0
        )
        check_boxes(page.evaluate(BOXES))
        # the page itself never scrolls sideways: a wide flow scrolls inside its own box
        assert page.evaluate("document.documentElement.scrollWidth") <= size[0]


def test_lines_join_only_a_stage_and_its_input_and_parallel_searches_share_a_column(
    page: Any, flows: dict[str, Any]
) -> None:
    page.goto(flows["14"])
    ask(page, QUESTION)
    stages = stage_events(page, flows["14"])
    assert len(stages) == 14
    edges = plan_edges(stages)
    for n in range(page.locator("#rankflow-folds button.fold").count()):
        page.locator("#rankflow-folds button.fold").nth(n).click()
    sync_api.expect(page.locator("#rankflow g.column")).to_have_count(14)
    drawn = set(page.locator("#rankflow path.flow").evaluate_all("ps => ps.map(p => p.dataset.edge)"))
    assert drawn and {tuple(e.split(">")) for e in drawn} <= edges
    lanes = {lane["stage"]: lane for lane in page.evaluate(LANES)}
    searches = [n for n in stages if "·" in n]
    assert len({lanes[n]["col"] for n in searches}) == 1  # the nine searches side by side, one column
    assert (
        lanes["keyword"]["col"]
        == lanes["vector"]["col"]
        < lanes["fusion"]["col"]
        < lanes["rerank"]["col"]
        < lanes["context"]["col"]
    )
    # the pairs offered are the same edges, and only those
    offered = page.locator("#rankflow-pair option").evaluate_all("os => os.map(o => o.value).filter(Boolean)")
    assert {tuple(json.loads(v)) for v in offered} == edges


def test_each_badge_is_the_chunks_rank_in_that_search(page: Any, flows: dict[str, Any]) -> None:
    page.goto(flows["4"])
    ask(page, QUESTION)
    stages = stage_events(page, flows["4"])
    ranks = {f: {c["chunk_id"]: c["rank"] for c in stages[f]["candidates"]} for f in ("keyword", "vector")}
    boxes = page.evaluate(BOXES)
    fused = [b for b in boxes if b["stage"] in ("fusion", "rerank", "context")]
    assert fused
    for b in fused:
        assert [badge["family"] for badge in b["badges"]] == ["keyword", "vector"], b
        for badge in b["badges"]:
            rank = ranks[badge["family"]].get(b["chunk"])
            assert badge["text"] == f"{badge['family'][0]}{rank if rank else '–'}", b
    # a search's own lane carries the other search's rank only
    assert all(
        [badge["family"] for badge in b["badges"]] == ["vector"] for b in boxes if b["stage"] == "keyword"
    )
    # a document with a heading is labelled by it (once its title has come), the chunk's position kept
    bedding = "#rankflow g.node[data-chunk-id^='docs/maintenance/bedding-in'] text.label"
    page.wait_for_function(
        "(sel) => { const ls = [...document.querySelectorAll(sel)];"
        " return ls.length && ls.every(l => l.textContent.startsWith('Bed')); }",
        arg=bedding,
    )
    labels = page.locator(bedding).all_text_contents()
    assert labels and all(label.endswith(" #0") for label in labels)
    assert "Bedding in #0" in labels  # whole where the box has room


def test_the_layout_is_the_same_live_and_replayed(page: Any, flows: dict[str, Any]) -> None:
    page.goto(flows["14"])
    ask(page, QUESTION)
    live = page.evaluate(LANES)
    trace_id = page.get_attribute(".turn:last-child", "data-trace-id")
    page.reload()
    page.click(f"#history li[data-trace-id='{trace_id}'] button")
    sync_api.expect(page.locator(".turn.replay")).to_have_count(1)
    sync_api.expect(page.locator("#rankflow g.column")).to_have_count(len(live))
    assert page.evaluate(LANES) == live


def test_a_stage_still_running_says_so_with_a_clock_that_moves(page: Any, flows: dict[str, Any]) -> None:
    reranker: GatedReranker = flows["reranker"]
    reranker.gate.clear()
    try:
        page.goto(flows["4"])
        page.fill("#question", QUESTION)
        page.click("#ask")
        pending = page.locator("#rankflow g.pending-lane.running[data-stage='rerank']")
        sync_api.expect(pending).to_have_count(1)
        # the context waits on the rerank: drawn, and saying what it waits for
        sync_api.expect(
            page.locator("#rankflow g.pending-lane[data-stage='context'] .pending-status")
        ).to_have_text("waiting for rerank")
        clock = pending.locator(".pending-status")
        first = clock.text_content()
        assert first.startswith("running… ")
        page.wait_for_function(
            "(first) => document.querySelector("
            "\"#rankflow g.pending-lane[data-stage='rerank'] .pending-status\").textContent !== first",
            arg=first,
        )
    finally:
        reranker.gate.set()
    page.wait_for_selector("#chat[data-state='done']")
    sync_api.expect(page.locator("#rankflow g.pending-lane")).to_have_count(0)
    sync_api.expect(page.locator("#rankflow g.column[data-stage='rerank']")).to_have_count(1)


FOCUSED = (
    "() => { const a = document.activeElement; return a && a.matches('#rankflow g.node')"
    " ? {stage: a.dataset.stage, chunk: a.dataset.chunkId, rank: Number(a.dataset.rank)} : null; }"
)


def test_the_flow_is_one_tab_stop_walked_with_the_arrow_keys(page: Any, flows: dict[str, Any]) -> None:
    page.goto(flows["4"])
    ask(page, QUESTION)
    stages = stage_events(page, flows["4"])
    assert page.locator("#rankflow g.node[tabindex='0']").count() == 1
    page.focus("#rankflow-fit")
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED) == {
        "stage": "keyword",
        "chunk": stages["keyword"]["candidates"][0]["chunk_id"],
        "rank": 1,
    }
    page.keyboard.press("ArrowDown")
    assert page.evaluate(FOCUSED)["rank"] == 2
    chunk = page.evaluate(FOCUSED)["chunk"]
    # right: the same candidate in the stage built from this one (fusion), at its rank there
    page.keyboard.press("ArrowRight")
    fused = {c["chunk_id"]: c["rank"] for c in stages["fusion"]["candidates"]}
    assert page.evaluate(FOCUSED) == {"stage": "fusion", "chunk": chunk, "rank": fused[chunk]}
    # Enter inspects it, and the focus stays on its box through the redraw
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#inspector")).to_have_attribute("data-chunk-id", chunk)
    assert page.evaluate(FOCUSED) == {"stage": "fusion", "chunk": chunk, "rank": fused[chunk]}
    assert page.locator("#rankflow g.node[tabindex='0']").count() == 1
    # one Tab leaves the flow: it is a single stop, not one per box
    page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED) is None
    page.keyboard.press("Shift+Tab")
    assert page.evaluate(FOCUSED)["chunk"] == chunk


def test_fit_to_width_draws_the_whole_flow_inside_its_pane(browser: Any, flows: dict[str, Any]) -> None:
    with opened_page(browser, width=390, height=844) as page:
        page.goto(flows["14"])
        ask(page, QUESTION)
        canvas = page.locator("#rankflow-canvas")
        assert page.locator("#rankflow svg").evaluate(
            "s => s.getBoundingClientRect().width"
        ) > canvas.evaluate("c => c.clientWidth")
        page.check("#rankflow-fit")
        assert page.locator("#rankflow svg").evaluate(
            "s => s.getBoundingClientRect().width"
        ) <= canvas.evaluate("c => c.clientWidth")
        check_boxes(page.evaluate(BOXES))
