"""The Results view in a real browser: Debian's headless Chromium driven by Playwright, against the real
app reading a toy suite run for real on the fakes (so its stores and traces exist), beside a hand-made
file whose stores are gone.

What a person would check by hand: with the baseline pinned, a row's difference and its interval are
the API's; the questions behind that cell include one whose first covering rank differs; its trace
diff draws both rank flows with the covering chunk marked; every row has its loss breakdown; a missing
trace says how to get it back, and a trace diff with one side's trace gone says so and shows what the
file records of that side; each question reads with its words beside its id; every file has a label of
its own; a tiny p reads "p < 0.001"; a default a row merely lacks is no difference; the page opened
from a file, or with no server answering, says what serves it. The picture of the view in site/img/
is taken here.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from clear_rag.eval.golden import read_golden
from clear_rag.providers.fake import EchoChatModel, HashEmbedder, LexicalReranker
from clear_rag.results.files import write_result
from clear_rag.store import Store
from clear_rag.web.app import create_app
from clear_rag.web.runner import Models
from clear_rag.web.serving import serving
from tests.conftest import toy_config
from tests.toy import suite_yaml
from tests.web.browser import open_page, require_browser
from tests.web.projects import results_project

REPO_RESULTS = Path(__file__).resolve().parents[2] / "results"
STATIC_PAGE = Path(__file__).resolve().parents[2] / "clear_rag" / "web" / "static" / "results.html"
sync_api = require_browser()

SUITE = suite_yaml(
    "toy",
    "{name: dense, set: {retrievers: [vector]}}",
    "{name: bm25, set: {retrievers: [keyword]}}",
    "{name: hybrid}",
    "{name: hybrid + rerank, set: {rerank: true, reranker: lexical}}",
)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """results/toy.json (the toy suite, run for real), results/mini.json (stores gone) and the rest."""
    root = results_project(tmp_path_factory.mktemp("results-page"), SUITE)
    # the committed tech suite as published (its stores are not here, its figures are)
    (root / "results" / "tech.json").write_bytes((REPO_RESULTS / "tech.json").read_bytes())
    # and the answer-grading suite as published: its grade columns and its answers
    (root / "results" / "answers.json").write_bytes((REPO_RESULTS / "answers.json").read_bytes())
    toy = json.loads((root / "results" / "toy.json").read_text(encoding="utf-8"))
    # the toy suite again with bm25's store gone: a trace diff with one side's trace and not the other's
    half = json.loads(json.dumps(toy))
    next(r for r in half["rows"] if r["name"] == "bm25")["store"] = str(root / "gone")
    write_result(root / "results" / "half.json", half)
    # and with its rows written before rerank_fusion existed, but for one merged in later that records
    # it at its default
    merged = json.loads(json.dumps(toy))
    for row in merged["rows"][:-1]:
        del row["config"]["rerank_fusion"]
    write_result(root / "results" / "merged.json", merged)
    return root


@pytest.fixture(scope="module")
def base(project: Path) -> Iterator[str]:
    """The app over the project's results folder."""
    root = project
    models = Models(HashEmbedder(dim=64), EchoChatModel(), lambda name: LexicalReranker(), {})
    with Store(root / "s", root=root) as store:
        app = create_app(store, toy_config(), models, results_dir=root / "results")
        with serving(app) as url:
            yield url


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from open_page(browser, width=1500, height=1000)


def api(url: str) -> Any:
    response = httpx.get(url, timeout=60)
    assert response.status_code == 200, response.text
    return response.json()


def open_file(page: Any, base: str, file: str) -> None:
    """The view on ``file``, once its rows are pinned against the baseline."""
    page.goto(f"{base}/results#file={file}")
    baseline = api(f"{base}/api/results/{file}")["baseline"]
    sync_api.expect(page.locator("#results-view")).to_have_attribute("data-file", file)
    sync_api.expect(page.locator("#results-pinned")).to_have_attribute("data-pinned", baseline)
    sync_api.expect(page.locator("#pinned-table tbody tr").first).to_be_visible()


def test_the_chat_page_links_to_the_results_view(page: Any, base: str) -> None:
    page.goto(base)
    page.click("header.top a[href='/results']")
    page.wait_for_url(f"{base}/results")
    # toy, mini, tech, answers, half, merged
    sync_api.expect(page.locator("#results-files button.file")).to_have_count(6)


def test_a_difference_from_the_baseline_down_to_the_stage_where_two_traces_part(
    page: Any, base: str, shots: Path
) -> None:
    open_file(page, base, "toy")
    assert page.is_checked("#results-rows input[name='pin'][value='hybrid']")
    # bm25 against hybrid on mrr@10: the difference and its interval are the API's, and an interval
    # that holds 0 is marked as noise
    read = {r["name"]: r for r in api(f"{base}/api/results/toy/pinned/hybrid")["rows"]}
    assert "hybrid" not in read
    wanted = read["bm25"]["comparisons"]["mrr@10"]
    assert wanted["difference"] < 0
    cell = page.locator("#pinned-table button.diff[data-row='bm25'][data-metric='mrr@10']")
    sync_api.expect(cell.locator("[data-field='difference']")).to_have_text(
        f"-{abs(wanted['difference']):.3f}"
    )
    low, high = wanted["ci_low"], wanted["ci_high"]
    interval = f"[{'-' if low < 0 else '+' if low > 0 else ''}{abs(low):.3f}, "
    interval += f"{'-' if high < 0 else '+' if high > 0 else ''}{abs(high):.3f}]"
    sync_api.expect(cell.locator("[data-field='interval']")).to_have_text(interval)
    sync_api.expect(cell).to_have_attribute("data-noise", str(low <= 0 <= high).lower())
    # the settings that differ, not the whole config
    diff = page.locator("#pinned-table tr[data-row='bm25'] .config-diff li")
    sync_api.expect(diff).to_have_count(len(read["bm25"]["config_diff"]))
    sync_api.expect(diff.first).to_have_attribute("data-key", "retrievers")

    # the questions behind the cell: one has a different first covering rank under each row
    cell.click()
    moves = page.locator("#results-moves")
    sync_api.expect(moves).to_have_attribute("data-metric", "mrr@10")
    behind = api(f"{base}/api/results/toy/moves?pinned=hybrid&row=bm25&metric=mrr%4010")["moves"]
    sync_api.expect(moves.locator("tbody tr")).to_have_count(len(behind))
    moved = next(m for m in behind if m["pinned"]["first_rank"] != m["row"]["first_rank"])
    line = moves.locator(f"tr[data-question='{moved['id']}']")
    sync_api.expect(line.locator("[data-field='rank-pinned']")).to_have_text(
        f"#{moved['pinned']['first_rank']}"
    )
    sync_api.expect(line.locator("[data-field='rank-row']")).to_have_text(f"#{moved['row']['first_rank']}")
    sync_api.expect(line.locator("[data-field='verdict-row']")).to_have_text(moved["row"]["verdict"])

    # its trace diff: both rank flows, each with the covering chunk marked at every stage it reached
    line.locator("button.open-trace").click()
    diff_view = page.locator("#trace-diff")
    sync_api.expect(diff_view).to_have_attribute("data-question", moved["id"])
    for side, row in (("pinned", "hybrid"), ("row", "bm25")):
        shown = api(f"{base}/api/results/toy/trace/{row}/{moved[side]['trace']}")
        flow = diff_view.locator(f".trace-side[data-side='{side}'][data-row='{row}']")
        stages = [s["name"] for s in shown["trace"]["stages"]]
        sync_api.expect(flow.locator("svg g.column")).to_have_count(len(stages))
        marked = flow.locator("g.node.covering")
        sync_api.expect(marked).to_have_count(len(shown["covering"]))
        assert shown["covering"], f"{row}: the question's covering chunk is ranked"
        for stage, chunk_id in shown["covering"].items():
            node = flow.locator(f"g.node.covering[data-stage='{stage}']")
            sync_api.expect(node).to_have_attribute("data-chunk-id", chunk_id)
    # the stage where they part is named: both ran the context, where the covering chunk differs
    parting = diff_view.locator(".parting")
    sync_api.expect(parting).not_to_have_attribute("data-parts", "")
    sync_api.expect(parting.locator("tr.parts")).to_have_count(1)
    page.screenshot(path=str(shots / "results.png"), full_page=True)


def test_the_loss_breakdown_renders_for_every_row(page: Any, base: str) -> None:
    files = {f["file"]: f for f in api(f"{base}/api/results")["files"]}
    for file in ("toy", "mini", "tech"):
        open_file(page, base, file)
        rows = files[file]["rows"]
        sync_api.expect(page.locator("#results-rows tbody tr")).to_have_count(len(rows))
        for row in rows:
            bar = page.locator(f"#results-rows tr[data-row='{row['name']}'] svg.lost-bar")
            sync_api.expect(bar).to_have_attribute("data-total", str(row["questions"]))
            counted = {v: n for v, n in row["lost"].items() if n}
            segments = bar.locator("rect.lost-segment")
            sync_api.expect(segments).to_have_count(len(counted))
            for verdict, n in counted.items():
                segment = bar.locator(f"rect[data-verdict='{verdict}']")
                sync_api.expect(segment).to_have_attribute("data-count", str(n))
                width = float(segment.get_attribute("width"))
                assert width == pytest.approx(220 * n / row["questions"])


def test_the_published_tech_suite_reads_against_its_baseline_as_its_file_says(page: Any, base: str) -> None:
    """With the baseline of results/tech.json pinned, each row's nDCG@10 difference and interval are
    the ones the file stored when the suite ran (the same seeded bootstrap, computed again)."""
    open_file(page, base, "tech")
    document = api(f"{base}/api/results/tech")
    assert page.is_checked(f"#results-rows input[name='pin'][value='{document['baseline']}']")
    for row in document["rows"]:
        stored = row.get("comparisons", {}).get("baseline", {}).get("ndcg@10")
        if stored is None:
            continue  # the baseline itself
        cell = page.locator(f"#pinned-table button.diff[data-row='{row['name']}'][data-metric='ndcg@10']")
        sign = "-" if stored["difference"] < 0 else "+"
        sync_api.expect(cell.locator("[data-field='difference']")).to_have_text(
            f"{sign}{abs(stored['difference']):.3f}"
        )
        sync_api.expect(cell).to_have_attribute(
            "data-noise", str(stored["ci_low"] <= 0 <= stored["ci_high"]).lower()
        )


def test_pinning_another_row_reads_the_rest_against_it(page: Any, base: str) -> None:
    open_file(page, base, "toy")
    page.check("#results-rows input[name='pin'][value='bm25']")
    sync_api.expect(page.locator("#results-pinned")).to_have_attribute("data-pinned", "bm25")
    sync_api.expect(page.locator("#results-rows tr.pinned")).to_have_attribute("data-row", "bm25")
    names = page.locator("#pinned-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.row)")
    assert names == ["dense", "hybrid", "hybrid + rerank"]
    # per-category figures are each row's, from the document
    document = api(f"{base}/api/results/toy")
    dense = document["rows"][0]
    for category, figures in dense["by_category"].items():
        cell = page.locator(f"#categories-table tr[data-row='dense'] td[data-category='{category}']")
        sync_api.expect(cell).to_have_text(f"{figures[document['headline']]:.4f}")


def test_a_missing_trace_says_how_to_get_it_back(page: Any, base: str) -> None:
    open_file(page, base, "mini")
    page.click("#pinned-table button.diff[data-row='bm25'][data-metric='ndcg@10']")
    page.click("#results-moves tr[data-question='q1'] button.open-trace")
    for side in ("pinned", "row"):
        missing = page.locator(f"#trace-diff .trace-side[data-side='{side}'] .trace-missing")
        sync_api.expect(missing).to_contain_text("is not here")
        sync_api.expect(missing).to_contain_text("`clear-rag ablate mini --replay`")
    assert page.locator("#trace-diff svg g.node").count() == 0


def test_the_answer_suite_shows_its_grades_and_the_answers_behind_a_move(
    page: Any, base: str, shots: Path
) -> None:
    """results/answers.json as published: a column per grade, and behind a change of "correct" the two
    rows' answers with the grader's verdict on each."""
    open_file(page, base, "answers")
    document = api(f"{base}/api/results/answers")
    assert document["headline"] == "correct"
    heads = page.locator("#results-rows thead th").all_text_contents()
    for grade in ("correct", "cited right", "false refusal", "bleed", "correct refusal", "in context"):
        assert grade in heads
    moved = next(
        r["name"]
        for r in document["rows"]
        if (c := r.get("comparisons", {}).get("baseline", {}).get("correct")) and c["up"] + c["down"]
    )
    page.click(f"#pinned-table button.diff[data-row='{moved}'][data-metric='correct']")
    graded = page.locator("#results-moves td[data-field='graded']")
    sync_api.expect(graded.first).to_be_visible()
    verdicts = {q["graded"]["verdict"] for r in document["rows"] for q in r["questions"]}
    assert graded.first.evaluate("td => td.dataset.graded") in verdicts
    # beside the grader's verdict, the support check's line and sentence verdicts from the same record
    first = page.locator("#results-moves tbody tr").first
    question = first.get_attribute("data-question")
    rows = {r["name"]: r for r in document["rows"]}
    for cell, row in zip(
        first.locator("td[data-field='graded']").all(), [document["baseline"], moved], strict=True
    ):
        (record,) = [q for q in rows[row]["questions"] if q["id"] == question]
        support = record["graded"]["support"]
        sync_api.expect(cell.locator(".check")).to_have_attribute("data-check-line", support["line"])
        claims = [s for s in support["sentences"] if s["kind"] != "no claim"]
        kinds = cell.locator(".check-sentences li").evaluate_all("items => items.map(i => i.dataset.kind)")
        assert kinds == [s["kind"] for s in claims]
    page.screenshot(path=str(shots / "results-answers.png"), full_page=True)


def rank_text(rank: int | None) -> str:
    return "—" if rank is None else f"#{rank}"


def test_a_missing_trace_diff_says_so_truthfully(page: Any, base: str) -> None:
    """half.json: bm25's store is gone, hybrid's is here. The diff draws hybrid's flow; bm25's side says
    its trace is missing and how to get it back, and shows what the file records (first covering rank,
    verdict, rank per stage); the table's ranks are the file's, never "not run" for a side whose run is
    merely not here; the sentence about where they part follows from those ranks."""
    open_file(page, base, "half")
    page.click("#pinned-table button.diff[data-row='bm25'][data-metric='mrr@10']")
    behind = api(f"{base}/api/results/half/moves?pinned=hybrid&row=bm25&metric=mrr%4010")["moves"]
    moved = next(m for m in behind if m["pinned"]["first_rank"] != m["row"]["first_rank"])
    page.click(f"#results-moves tr[data-question='{moved['id']}'] button.open-trace")
    diff = page.locator("#trace-diff")
    sync_api.expect(diff).to_have_attribute("data-question", moved["id"])
    document = api(f"{base}/api/results/half")
    record = {r["name"]: next(q for q in r["questions"] if q["id"] == moved["id"]) for r in document["rows"]}
    hybrid_side = diff.locator(".trace-side[data-side='pinned']")
    sync_api.expect(hybrid_side.locator("svg g.column").first).to_be_visible()
    gone = diff.locator(".trace-side[data-side='row'][data-row='bm25']")
    missing = gone.locator(".trace-missing")
    sync_api.expect(missing).to_contain_text("The trace is missing")
    sync_api.expect(missing).to_contain_text("is not here")
    sync_api.expect(missing).to_contain_text("`clear-rag ablate toy --save-results`")
    sync_api.expect(gone.locator("[data-field='recorded']")).to_have_text(
        f"half.json records: first covering rank {rank_text(record['bm25']['first_rank'])} · "
        f"{record['bm25']['lost']['verdict']}"
    )
    assert gone.locator("svg g.node").count() == 0
    # the table: bm25's column is the file's ranks at every stage it records, and says so
    ranks = {row: record[row]["lost"]["ranks"] for row in ("hybrid", "bm25")}
    parting = diff.locator(".parting")
    sync_api.expect(parting.locator("thead th[data-side='row']")).to_contain_text("(trace missing)")
    sync_api.expect(parting.locator(".missing-note")).to_contain_text("The trace under bm25 is missing")
    for stage, rank in ranks["bm25"].items():
        cell = parting.locator(f"tr[data-stage='{stage}'] td[data-side='row']")
        sync_api.expect(cell).to_have_text(rank_text(rank))
    texts = parting.locator("td[data-side='row']").all_text_contents()
    assert "not run" not in texts
    # where they part, from the file's ranks: the first stage hybrid ran whose rank differs under bm25
    shown = api(f"{base}/api/results/half/trace/hybrid/{moved['pinned']['trace']}")
    ran = [s["name"] for s in shown["trace"]["stages"]]
    compared = [s for s in ran if s in ranks["bm25"]]
    assert compared, "the file records bm25's rank at a stage hybrid ran"
    parts = next((s for s in compared if ranks["hybrid"].get(s) != ranks["bm25"][s]), "")
    sync_api.expect(parting).to_have_attribute("data-parts", parts)
    said = parting.locator("[data-field='said']")
    if parts:
        sync_api.expect(said).to_have_text(
            f"The two part at {parts}: the covering chunk is {rank_text(ranks['hybrid'].get(parts))} "
            f"under hybrid and {rank_text(ranks['bm25'][parts])} under bm25."
        )
    else:
        sync_api.expect(said).not_to_contain_text("Wherever both ran")


def test_questions_read_with_their_words_beside_their_ids(page: Any, base: str, project: Path) -> None:
    """The question and its labelled quotes from the golden set the file names, in the questions
    behind a move and above a trace diff."""
    named = api(f"{base}/api/results/toy")["golden"]["path"]  # relative to the folder it ran in
    golden = {q.id: q for q in read_golden(project / named)[0].questions}
    open_file(page, base, "toy")
    page.click("#pinned-table button.diff[data-row='bm25'][data-metric='mrr@10']")
    lines = page.locator("#results-moves tbody tr")
    sync_api.expect(lines.first).to_be_visible()
    for line in lines.all():
        wanted = golden[line.get_attribute("data-question")]
        head = line.locator("th.question")
        sync_api.expect(head.locator(".qid")).to_have_text(wanted.id)
        sync_api.expect(head.locator("[data-field='question']")).to_have_text(wanted.question)
        sync_api.expect(head.locator("[data-field='quote'] q")).to_have_text(
            [a.quote for a in wanted.answers or ()]
        )
    first = lines.first
    wanted = golden[first.get_attribute("data-question")]
    first.locator("button.open-trace").click()
    sync_api.expect(page.locator("#trace-question [data-field='question']")).to_have_text(wanted.question)
    # a file that names no labels reads by ids alone, and says why
    open_file(page, base, "mini")
    sync_api.expect(page.locator("#questions-note")).to_contain_text("names no labels file")


def test_every_file_has_a_label_of_its_own(page: Any, base: str) -> None:
    """toy.json, half.json and merged.json are all of the suite "toy": each button says its own file."""
    page.goto(f"{base}/results")
    buttons = page.locator("#results-files button.file")
    sync_api.expect(buttons).to_have_count(6)
    labels = [b.evaluate("b => b.firstChild.textContent") for b in buttons.all()]
    assert len(set(labels)) == len(labels), labels
    for f in api(f"{base}/api/results")["files"]:
        button = page.locator(f"#results-files button.file[data-file='{f['file']}']")
        sync_api.expect(button).to_contain_text(f["file"])
        if f["suite"] != f["file"]:
            sync_api.expect(button).to_contain_text(f"(suite {f['suite']})")


def test_a_p_below_a_thousandth_reads_p_below_0_001(page: Any, base: str) -> None:
    open_file(page, base, "tech")
    document = api(f"{base}/api/results/tech")
    read = api(f"{base}/api/results/tech/pinned/{document['baseline']}")["rows"]
    cells = [(r["name"], m, c) for r in read for m, c in r["comparisons"].items()]
    assert any(c["p_sign"] < 0.001 for _, _, c in cells), "tech.json has a move far beyond noise"
    for row, metric, c in cells:
        shown = page.locator(f"#pinned-table button.diff[data-row='{row}'][data-metric='{metric}'] .p")
        want = "p < 0.001" if c["p_sign"] < 0.001 else f"p = {c['p_sign']:.3f}"
        sync_api.expect(shown).to_have_text(f"{want} · {c['up']}↑ {c['down']}↓")
    assert "0.000" not in " ".join(page.locator("#pinned-table .p").all_text_contents())


def test_a_default_a_row_merely_lacks_is_no_difference(page: Any, base: str) -> None:
    """merged.json: every row but the last was written before rerank_fusion existed; the last records
    it at its default, which is no difference from any of them."""
    open_file(page, base, "merged")
    last = api(f"{base}/api/results/merged")["rows"][-1]["name"]
    page.check(f"#results-rows input[name='pin'][value='{last}']")
    sync_api.expect(page.locator("#results-pinned")).to_have_attribute("data-pinned", last)
    sync_api.expect(page.locator("#pinned-table tbody tr").first).to_be_visible()
    assert page.locator("#pinned-table .config-diff li[data-key='rerank_fusion']").count() == 0
    read = api(f"{base}/api/results/merged/pinned/{quote(last, safe='')}")["rows"]
    assert all("rerank_fusion" not in r["config_diff"] for r in read)


def test_opened_from_a_file_the_page_says_what_serves_it(page: Any, base: str) -> None:
    """The package's results.html opened from disk, where no script or stylesheet of it loads (its
    static/ links resolve beside it): the page's own line says what serves it. Served, that line is
    gone. (The site's copy opened from disk, whose scripts are beside it: test_static_results.py.)"""
    page.goto(STATIC_PAGE.as_uri())
    unserved = page.locator("#results-unserved")
    sync_api.expect(unserved).to_be_visible()
    sync_api.expect(unserved).to_contain_text("clear-rag serve")
    sync_api.expect(unserved).to_contain_text("http://127.0.0.1:8000/results")
    page.goto(f"{base}/results")
    sync_api.expect(page.locator("#results-files button.file").first).to_be_visible()
    sync_api.expect(unserved).to_have_count(0)


def test_with_no_server_answering_the_page_says_what_to_start(page: Any, base: str) -> None:
    page.route("**/api/results", lambda route: route.abort())
    page.goto(f"{base}/results")
    status = page.locator("#results-status")
    sync_api.expect(status).to_have_class("error")
    sync_api.expect(status).to_contain_text("The Results API did not answer")
    sync_api.expect(status).to_contain_text("`clear-rag serve`")
