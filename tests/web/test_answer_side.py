"""The answer side of the page in a real browser, with the support check on (the lexical fake): what
the model was given, the chunks the answer cited marked in the rank flow, each answer sentence linked
to its support, the answer's line and its caveat, Retrieve only, the weak-retrieval warning, and all
of it again for a replayed trace. The screenshots of it are taken in test_page.py, with the others.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from clear_rag.generate.prompt import REFUSAL
from clear_rag.store import Store
from clear_rag.web.app import create_app
from tests.web.answering import (
    ANSWERED,
    UNANSWERED,
    CountingChat,
    checked_models,
    context_of,
    miscited,
    numbers,
    serve_checked,
)
from tests.web.browser import WAIT_MS, open_page, require_browser
from tests.web.conftest import serving
from tests.web.test_page import build_store, page_config, trace_of_latest
from tests.web.test_results_page import open_file

sync_api = require_browser()
expect = sync_api.expect


@pytest.fixture(scope="module")
def answering(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store, CountingChat]]:
    """The app with the support check on, over a results folder with no graded answers."""
    chat = CountingChat()
    with serve_checked(tmp_path_factory.mktemp("answer-side"), chat) as (url, store):
        yield url, store, chat


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from open_page(browser, width=1440, height=900)


def ask(page: Any, question: str, *, button: str = "#ask") -> None:
    """Send a question with Ask (or Retrieve only) and wait until its stream has ended."""
    page.fill("#question", question)
    page.click(button)
    page.wait_for_selector("#chat[data-state='done'], #chat[data-state='error']")
    assert page.get_attribute("#chat", "data-state") == "done", page.inner_text("#chat")


def ask_miscited(page: Any, answering: tuple[str, Store, CountingChat]) -> tuple[str, int, int]:
    """A new page asks ``ANSWERED`` and the model answers with ``miscited``'s answer: ``(answer, b, l)``."""
    base, _, chat = answering
    found = miscited(base)
    chat.enqueue(found[0])
    page.goto(base)
    ask(page, ANSWERED)
    return found


def event(trace: dict[str, Any], kind: str) -> dict[str, Any]:
    found: dict[str, Any] = next(e["data"] for e in trace["events"] if e["event"] == kind)
    return found


def test_the_context_panel_shows_the_messages_exactly_as_sent(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    base, _, chat = answering
    b = numbers(context_of(base, ANSWERED))["docs/b.txt"]
    chat.enqueue(f"Tyre pressure for road bikes is 80 to 100 psi [{b}].")
    page.goto(base)
    ask(page, ANSWERED)
    trace = trace_of_latest(page, base)
    messages = trace["trace"]["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]
    bodies = page.locator("#given .message-body")
    expect(bodies).to_have_count(2)
    # each body is one message's content to the character, whatever is drawn inside it
    assert bodies.evaluate_all("els => els.map(e => e.textContent)") == [m["content"] for m in messages]
    assert bodies.evaluate_all("els => els.map(e => e.dataset.role)") == ["system", "user"]
    context = event(trace, "context")
    # every passage told apart inside the user message, under the number the model saw
    heads = page.locator("#given .message-body[data-role='user'] .passage-head")
    expected = [f"[{p['number']}] ({p['doc_id']})\n" for p in context["passages"]]
    assert heads.evaluate_all("els => els.map(e => e.textContent)") == expected
    texts = page.locator("#given .passage-text").evaluate_all("els => els.map(e => e.textContent)")
    assert texts == [p["text"] for p in context["passages"]]
    tokens = f"{context['tokens']:,} of {context['budget_tokens']:,} tokens"
    expect(page.locator("#given .given-summary [data-field='tokens']")).to_have_text(tokens)
    # the passages' list: each number with its document, the cited one said to be cited
    rows = page.locator("#given .passage-list li[data-number]")
    expect(rows).to_have_count(len(context["passages"]))
    expect(page.locator(f"#given .passage-list li[data-number='{b}'] .tag.cited")).to_have_text("cited")
    expect(page.locator(f"#given .passage-list li[data-number='{b}'] .looks")).to_contain_text(
        "looks like it answers the question"
    )


def test_the_chunks_of_cited_passages_are_marked_in_every_stage(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    base = answering[0]
    _, b, _ = ask_miscited(page, answering)
    trace = trace_of_latest(page, base)
    passages = {p["number"]: p for p in event(trace, "context")["passages"]}
    cited_numbers = {c["number"] for c in trace["trace"]["citations"]}
    assert cited_numbers == {b}
    cited = {cid for n in cited_numbers for cid in passages[n]["chunk_ids"]}
    stages = [e["data"] for e in trace["events"] if e["event"] == "stage"]
    expected = sorted(
        (s["name"], c["chunk_id"]) for s in stages for c in s["candidates"] if c["chunk_id"] in cited
    )
    assert len(expected) >= len(stages) - 1  # found by both searches: in every column but one at most
    marked = page.locator("#rankflow g.node.cited").evaluate_all(
        "gs => gs.map(g => [g.dataset.stage, g.dataset.chunkId, g.dataset.cited])"
    )
    assert sorted((stage, chunk) for stage, chunk, _ in marked) == expected
    assert {number for _, _, number in marked} == {str(b)}
    # the mark (a bar inside the box's left edge) stays clear of the rank written beside it
    gaps = page.locator("#rankflow g.node.cited").evaluate_all(
        "gs => gs.map(g => { const bar = g.querySelector('rect.cited-bar').getBBox();"
        " return g.querySelector('text.rank').getBBox().x - (bar.x + bar.width); })"
    )
    assert gaps and min(gaps) >= 1
    expect(page.locator("#rankflow .legend .key:has(.swatch.cited)")).to_have_text("cited in the answer")


def test_each_sentence_shows_its_verdict_and_opens_its_support(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    base, store, _ = answering
    _, b, lights = ask_miscited(page, answering)
    verdicts = page.locator("#answer button.verdict")
    expect(verdicts).to_have_text([f"supported by [{b}]", f"cited [{b}] but supported by [{lights}]"])
    expect(page.locator("#answer .sentence")).to_have_text(
        [
            f"Tyre pressure for road bikes is 80 to 100 psi [{b}].",
            f"A front light of 400 lumen is enough for road riding at night [{b}].",
        ]
    )
    assert page.locator("#answer .sentence").evaluate_all("els => els.map(e => e.dataset.kind)") == [
        "supported",
        "miscited",
    ]
    sentences = event(trace_of_latest(page, base), "support")["sentences"]
    # the miscited sentence: the words of [l] that support it, in the passage and in the document
    evidence = next(e for e in sentences[1]["evidence"] if e["number"] == lights)
    assert evidence["supports"]
    words = store.document_text(evidence["doc_id"])[evidence["start"] : evidence["end"]]
    verdicts.nth(1).click()
    expect(verdicts.nth(1)).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#tab-given")).to_have_attribute("aria-selected", "true")
    expect(page.locator(f"#given .passage-text[data-number='{lights}'] mark.support")).to_have_text(words)
    expect(page.locator("#given mark")).to_have_count(1)
    expect(page.locator("#given .evidence-card .evidence-verdict")).to_have_text(
        f"cited [{b}] but supported by [{lights}]"
    )
    expect(page.locator("#document mark.support")).to_have_text(words)
    expect(page.locator("#document")).to_have_attribute("data-doc-id", evidence["doc_id"])
    expect(page.locator("#given mark.support")).to_be_in_viewport()
    # by keyboard: the first sentence's verdict, focused and activated with Enter, then Space
    first = next(e for e in sentences[0]["evidence"] if e["number"] == b)
    first_words = store.document_text(first["doc_id"])[first["start"] : first["end"]]
    verdicts.nth(0).focus()
    page.keyboard.press("Enter")
    expect(page.locator("#given mark.support")).to_have_text(first_words)
    expect(page.locator("#document mark.support")).to_have_text(first_words)
    expect(verdicts.nth(1)).to_have_attribute("aria-pressed", "false")
    verdicts.nth(1).focus()
    page.keyboard.press("Space")
    expect(page.locator("#given mark.support")).to_have_text(words)
    # the passages it was judged against, each a button marking its window instead
    other = page.locator(f"#given .evidence-card button.evidence[data-number='{b}']")
    other.click()
    closest = next(e for e in sentences[1]["evidence"] if e["number"] == b)
    expect(page.locator("#given mark.support")).to_have_text(
        store.document_text(closest["doc_id"])[closest["start"] : closest["end"]]
    )
    expect(other).to_have_attribute("aria-pressed", "true")


def test_the_answer_line_says_what_happened(page: Any, answering: tuple[str, Store, CountingChat]) -> None:
    base, _, chat = answering
    answer, b, lights = miscited(base)
    supported = answer.split(". ")[0] + "."
    cases = [
        (ANSWERED, supported, "supported", "Supported", "every sentence is supported by a passage it cites"),
        (
            ANSWERED,
            answer,
            "the model ignored it",
            "The model ignored it",
            f"sentence 2 cites [{b}] but [{lights}] supports it",
        ),
        (ANSWERED, REFUSAL, "refused", "Refused", ""),
        (
            UNANSWERED,
            None,
            "retrieval missed it",
            "Retrieval missed it",
            "Why: see “Retrieval looks weak” above.",
        ),
    ]
    for question, scripted, line, title, reason in cases:
        if scripted is not None:
            chat.enqueue(scripted)
        page.goto(base)
        ask(page, question)
        support = event(trace_of_latest(page, base), "support")
        assert support["line"] == line
        box = page.locator(f".turn:last-child .answer-line[data-line='{line}']")
        expect(box.locator(".line-title")).to_have_text(title)
        expect(box.locator(".line-reason")).to_have_text(reason or support["reason"])
        # no graded answers in this server's results folder: the check says it was not measured
        expect(box.locator(".caveat")).to_have_text(
            "A heuristic check (lexical-reranker@overlap-1), not measured against graded answers."
        )


def test_the_caveat_quotes_the_agreement_measured_on_graded_answers(
    tmp_path: Path, page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    _, store, _ = answering
    results = tmp_path / "results"
    results.mkdir()
    rows = [
        {
            "name": "a row this test wrote",
            "models": {"support": "lexical-reranker@overlap-1", "chat": "scripted-chat@1"},
            "metrics": {"check precision": 0.8, "check recall": 0.6667},
            "questions": [
                {"metrics": {"check precision": 1.0, "check recall": 1.0}},
                {"metrics": {"check recall": 0.0}},
                {"metrics": {"check precision": 0.0}},
                {"metrics": {}, "graded": {"refused": True}},
            ],
        }
    ]
    (results / "answers.json").write_text(json.dumps({"rows": rows}), encoding="utf-8")
    chat = CountingChat()
    with serving(create_app(store, page_config(), checked_models(chat), results_dir=results)) as base:
        measured = httpx.get(f"{base}/api/config", timeout=WAIT_MS / 1000).json()["support"]["measured"]
        assert measured["answered"] == 3 and measured["wrong share"] == round(2 / 3, 4)
        page.goto(base)
        ask(page, ANSWERED)
        expect(page.locator(".answer-line .caveat")).to_have_text(
            "A heuristic check (lexical-reranker@overlap-1). On the 3 graded answers of results/answers.json"
            f" (scripted-chat@1): its flags were right {measured['check precision']:.2f} of the time,"
            f" where {measured['wrong share']:.2f} were wrong anyway;"
            f" it caught {measured['check recall']:.2f} of the wrong ones."
        )


def test_without_a_support_check_the_turn_says_it_is_not_checked(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    _, store, _ = answering
    models = checked_models(CountingChat())
    models.support = None
    with serving(create_app(store, page_config(), models)) as base:
        reason = httpx.get(f"{base}/api/config", timeout=WAIT_MS / 1000).json()["support"]["reason"]
        page.goto(base)
        ask(page, ANSWERED)
        expect(page.locator(".turn .check-off")).to_have_text(f"Not checked: {reason}.")
        expect(page.locator(".turn .answer-line")).to_have_count(0)
        expect(page.locator(".turn .weak-warning")).to_have_count(0)
        expect(page.locator("#answer button.cite").first).to_be_visible()  # the answer drawn as before


def test_retrieve_only_asks_no_model_and_shows_what_it_would_be_given(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    base, _, chat = answering
    page.goto(base)
    calls = chat.calls
    ask(page, UNANSWERED, button="#retrieve")
    assert chat.calls == calls
    trace = trace_of_latest(page, base)
    assert trace["trace"]["answer"] == ""
    turn = page.locator(".turn:last-child")
    expect(turn.locator(".no-answer")).to_contain_text("Retrieve only: the model was not asked to answer")
    expect(turn.locator(".sentence, .answer-line, button.cite")).to_have_count(0)
    # the stages, the context panel and the warning, as for a question answered
    stages = [e["data"]["name"] for e in trace["events"] if e["event"] == "stage"]
    columns = page.locator("#rankflow g.column").evaluate_all("gs => gs.map(g => g.dataset.stage)")
    assert sorted(columns) == sorted(stages)
    bodies = page.locator("#given .message-body").evaluate_all("els => els.map(e => e.textContent)")
    assert bodies == [m["content"] for m in trace["trace"]["messages"]]
    expect(page.locator("#given .given-summary")).to_contain_text("Retrieve only")
    expect(turn.locator(".weak-warning[role='status']")).to_be_visible()
    expect(page.locator("#retrieve")).to_be_enabled()


def test_the_weak_retrieval_warning_shows_only_where_no_passage_answers(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    base, _, _ = answering
    page.goto(base)
    ask(page, UNANSWERED, button="#retrieve")
    retrieval = event(trace_of_latest(page, base), "context")["retrieval"]
    assert retrieval["weak"]
    warning = page.locator(".turn:last-child .weak-warning[role='status']")
    expect(warning).to_have_text(f"Retrieval looks weak: {retrieval['weak_reason']}")
    page.goto(base)  # a new conversation: the next question is not a follow-up
    ask(page, ANSWERED, button="#retrieve")
    assert not event(trace_of_latest(page, base), "context")["retrieval"]["weak"]
    expect(page.locator(".turn:last-child .weak-warning")).to_have_count(0)
    expect(page.locator(".turn:last-child .no-answer")).to_be_visible()


def test_a_replayed_trace_shows_the_answer_side_as_the_live_one_did(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    base, store, chat = answering
    answer, _, lights = miscited(base)
    page.goto(base)
    ask(page, UNANSWERED)  # a weak retrieval (answered by the echo), so the warning is replayed too
    weak_id = page.get_attribute(".turn:last-child", "data-trace-id")
    chat.enqueue(answer)
    page.goto(base)
    ask(page, ANSWERED)
    live = {
        "line": page.inner_text(".turn:last-child .line-box"),
        "answer": page.inner_text("#answer"),
        "cited": page.locator("#rankflow g.node.cited").count(),
    }
    calls = chat.calls
    trace_id = page.get_attribute(".turn:last-child", "data-trace-id")
    page.click(f"#history li[data-trace-id='{trace_id}'] button")
    replay = page.locator(".turn.replay")
    expect(replay).to_have_count(1)
    expect(replay.locator(".answer-line .caveat")).not_to_be_empty()
    assert replay.locator(".line-box").inner_text() == live["line"]
    assert page.inner_text("#answer") == live["answer"]
    assert page.locator("#rankflow g.node.cited").count() == live["cited"]
    replay.locator("button.verdict").nth(1).click()
    evidence = next(
        e
        for e in event(trace_of_latest(page, base), "support")["sentences"][1]["evidence"]
        if e["number"] == lights
    )
    words = store.document_text(evidence["doc_id"])[evidence["start"] : evidence["end"]]
    expect(page.locator("#given mark.support")).to_have_text(words)
    expect(page.locator("#document mark.support")).to_have_text(words)
    trace = httpx.get(f"{base}/api/traces/{trace_id}", timeout=WAIT_MS / 1000).json()
    bodies = page.locator("#given .message-body").evaluate_all("els => els.map(e => e.textContent)")
    assert bodies == [m["content"] for m in trace["trace"]["messages"]]
    # the weak question's replay warns as its live turn did
    page.click(f"#history li[data-trace-id='{weak_id}'] button")
    expect(page.locator(".turn.replay").last.locator(".weak-warning[role='status']")).to_be_visible()
    assert chat.calls == calls


def test_the_context_tabs_work_by_keyboard(page: Any, answering: tuple[str, Store, CountingChat]) -> None:
    base, _, _ = answering
    page.goto(base)
    ask(page, ANSWERED, button="#retrieve")
    page.focus("#tab-given")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-inspector")).to_be_focused()
    expect(page.locator("#tab-inspector")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#inspector-panel")).to_be_visible()
    expect(page.locator("#given-panel")).to_be_hidden()
    page.keyboard.press("Home")
    expect(page.locator("#tab-given")).to_be_focused()
    expect(page.locator("#given-panel")).to_be_visible()
    # one tab stop for the list: Tab leaves it rather than visiting the other tab
    assert page.get_attribute("#tab-inspector", "tabindex") == "-1"
    # a candidate chosen in the rank flow shows the inspector
    page.locator("#rankflow g.node").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#inspector-panel")).to_be_visible()
    expect(page.locator("#inspector h3")).not_to_be_empty()


@pytest.mark.parametrize(("width", "height"), [(1440, 900), (390, 844)])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_answer_side_passes_axe(
    browser: Any, answering: tuple[str, Store, CountingChat], width: int, height: int, scheme: str
) -> None:
    """axe-core's rules (contrast, names, heading order, focusable scrolling regions) find nothing on
    an answered question with a sentence opened and a Retrieve only turn with its warning."""
    from axe_playwright_python.sync_playwright import Axe

    context = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)
    try:
        page = context.new_page()
        page.set_default_timeout(WAIT_MS)
        ask_miscited(page, answering)
        page.locator(".turn:last-child .verdict").last.click()
        expect(page.locator("#given mark.support")).to_have_count(1)
        ask(page, UNANSWERED, button="#retrieve")
        expect(page.locator(".turn:last-child .weak-warning")).to_be_visible()
        found = Axe().run(page).response["violations"]
        assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []
    finally:
        context.close()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_results_view_of_the_graded_answers_passes_axe(
    browser: Any, tmp_path: Path, shots: Path, scheme: str
) -> None:
    """The same rules on the Results view over the committed result files, the graded answers open;
    the page never wider than the window (photographed at each size, dark and light)."""
    from axe_playwright_python.sync_playwright import Axe

    store = build_store(tmp_path)
    results = Path(__file__).resolve().parents[2] / "results"
    app = create_app(store, page_config(), checked_models(CountingChat()), results_dir=results)
    try:
        with serving(app) as base:
            for width, height in ((1440, 900), (390, 844)):
                context = browser.new_context(
                    viewport={"width": width, "height": height}, color_scheme=scheme
                )
                try:
                    page = context.new_page()
                    page.set_default_timeout(WAIT_MS)
                    open_file(page, base, "answers")
                    # a move opened: each side's answer with the grader's and the check's verdicts
                    page.locator("#pinned-table button.diff[data-metric='correct']").last.click()
                    expect(page.locator("#results-moves .check").first).to_be_visible()
                    found = Axe().run(page).response["violations"]
                    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []
                    assert page.evaluate("document.documentElement.scrollWidth") <= width
                    page.screenshot(path=str(shots / f"results-answers-{width}-{scheme}.png"))
                finally:
                    context.close()
    finally:
        store.close()


def test_the_page_says_the_extractive_answerer_quoted_the_answer_live_and_replayed(
    tmp_path: Path, page: Any
) -> None:
    from clear_rag.generate.extractive import ExtractiveAnswerer
    from clear_rag.generate.support import SupportChecker
    from clear_rag.providers.fake import LexicalReranker

    store = build_store(tmp_path)
    answerer = ExtractiveAnswerer(SupportChecker(LexicalReranker()))
    try:
        with serving(create_app(store, page_config(), checked_models(answerer))) as base:
            page.goto(base)
            ask(page, ANSWERED)
            turn = page.locator("#chat .turn").last
            expect(turn).to_have_attribute("data-answerer", "extractive")
            expect(turn.locator(".answerer")).to_contain_text("Quoted by the extractive answerer")
            expect(turn.locator(".answerer code")).to_have_text(f"extractive@{answerer.version}")
            expect(turn).to_have_attribute("data-line", "supported")
            trace = trace_of_latest(page, base)["trace"]
            assert trace["steps"]["answered by"]["answerer_kind"] == "extractive"
            page.click(f"#history li[data-trace-id='{trace['id']}'] button")
            replayed = page.locator(".turn.replay")
            expect(replayed.locator(".answerer code")).to_have_text(f"extractive@{answerer.version}")
    finally:
        store.close()


def test_a_generative_answer_is_said_to_be_a_models_own_words(
    page: Any, answering: tuple[str, Store, CountingChat]
) -> None:
    ask_miscited(page, answering)
    turn = page.locator("#chat .turn").last
    expect(turn).to_have_attribute("data-answerer", "generative")
    expect(turn.locator(".answerer")).to_contain_text("Written by a generative model")
