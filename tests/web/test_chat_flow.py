"""The chat side of the page as a person uses it, in a real browser: the panels a citation, a candidate
or a sentence opens come into view; a new question clears what the last one opened; a refused rewrite
is one line; the chat follows a streaming answer unless the person scrolls away; Escape closes a
panel; and the page works from load to a cited source with the keyboard alone.

A streaming answer is looked at mid-stream without timing anything: ``HeldChat`` streams an answer in
parts and waits, between parts, until the test lets the next one go.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from clear_rag.generate.queries import REWRITE_SYSTEM
from clear_rag.providers.base import Message, token_pieces
from clear_rag.store import Store
from tests.web.answering import ANSWERED, CountingChat, serve_checked
from tests.web.browser import WAIT_MS, open_page, require_browser
from tests.web.test_page import ask, trace_of_latest

sync_api = require_browser()
expect = sync_api.expect
opened_page = contextmanager(open_page)

SIZES = [(1440, 900), (390, 844)]
FOLLOW_UP = "and for gravel bikes"


class HeldChat(CountingChat):
    """The counting chat (scripted, else echoing), whose answers can be held: ``hold(*parts)`` queues an
    answer streamed part by part, each part after the first only once the test calls ``release()``.
    A follow-up's rewrite is never held: it is answered as the counting chat answers it."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[tuple[str, ...]] = []
        self.gate = threading.Semaphore(0)

    def hold(self, *parts: str) -> None:
        self.held.append(parts)

    def release(self) -> None:
        self.gate.release()

    def stream(self, messages: Sequence[Message], **options: object) -> Iterator[str]:
        if not self.held or (messages and messages[0].content == REWRITE_SYSTEM):
            return super().stream(messages, **options)
        self.calls += 1
        parts = self.held.pop(0)

        def pieces() -> Iterator[str]:
            for i, part in enumerate(parts):
                if i and not self.gate.acquire(timeout=WAIT_MS / 1000):
                    raise TimeoutError("the test never released the next part of the held answer")
                yield from token_pieces(part)

        return pieces()


@pytest.fixture(scope="module")
def chatting(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Store, HeldChat]]:
    """The app with the support check on, answering with ``HeldChat``."""
    chat = HeldChat()
    with serve_checked(tmp_path_factory.mktemp("chat-flow"), chat) as (url, store):
        try:
            yield url, store, chat
        finally:
            for _ in range(8):  # a test that failed mid-stream leaves no stream waiting on its gate
                chat.release()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    yield from open_page(browser, width=1440, height=900)


# Where `selector` is on screen: its box, and what of it can be seen inside the window and every
# box around it that clips (the .work pane on a wide screen).
SEEN = """(selector) => {
  const node = document.querySelector(selector);
  if (!node || node.hidden) return null;
  const {top, bottom} = node.getBoundingClientRect();
  let seenTop = 0, seenBottom = window.innerHeight;
  for (let box = node.parentElement; box && box !== document.body; box = box.parentElement) {
    if (/(auto|scroll|hidden|clip)/.test(getComputedStyle(box).overflowY)) {
      const r = box.getBoundingClientRect();
      seenTop = Math.max(seenTop, r.top);
      seenBottom = Math.min(seenBottom, r.bottom);
    }
  }
  const seen = Math.min(bottom, seenBottom) - Math.max(top, seenTop);
  const inView = top >= seenTop - 1 && top < seenBottom
    && seen >= Math.min(bottom - top, (seenBottom - seenTop) / 2) - 1;
  return {top, bottom, seenTop, seenBottom, seen, inView};
}"""


def assert_in_view(page: Any, selector: str) -> None:
    """``selector``'s top is on screen and so is most of it (all of it, or half the view); waits until
    it is, so a panel that scrolls in after its document loads is seen once it has."""
    try:
        page.wait_for_function(f"s => {{ const v = ({SEEN})(s); return v && v.inView; }}", arg=selector)
    except sync_api.TimeoutError:
        pytest.fail(f"{selector} is not in view: {page.evaluate(SEEN, selector)}")


def scroll_to_top(page: Any) -> None:
    """The page and its panes as they load, scrolled to the top: a panel opened now starts out of view."""
    page.evaluate("() => { window.scrollTo(0, 0); document.querySelector('.work').scrollTop = 0; }")


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_panels_a_citation_a_candidate_and_a_sentence_open_come_into_view(
    browser: Any, chatting: tuple[str, Store, HeldChat], width: int, height: int
) -> None:
    base, _, _ = chatting
    with opened_page(browser, width=width, height=height) as page:
        page.goto(base)
        ask(page, ANSWERED)
        scroll_to_top(page)
        page.locator("#answer button.cite").first.click()
        expect(page.locator("#document mark.cited")).to_be_visible()
        assert_in_view(page, "#document")
        expect(page.locator("#document mark.cited")).to_be_in_viewport()
        # named regions a screen reader can go to: the document by its title, the inspector by its tab
        expect(page.get_by_role("region", name=page.inner_text("#document-title"))).to_be_visible()

        scroll_to_top(page)
        page.locator("#rankflow g.column[data-stage='fusion'] g.node").first.click()
        expect(page.locator("#inspector h3")).not_to_be_empty()
        assert_in_view(page, "#inspector-panel")
        expect(page.get_by_role("tabpanel", name="Inspector")).to_be_visible()

        page.keyboard.press("Escape")
        expect(page.locator("#document")).to_be_hidden()
        scroll_to_top(page)
        page.locator("#answer button.verdict").first.click()
        expect(page.locator("#document mark.support")).to_be_visible()
        assert_in_view(page, "#document")
        if width > 900:  # both panels side by side: the evidence marked beside its document
            expect(page.locator("#given mark.support")).to_be_in_viewport()


def test_the_panels_have_no_axe_violation(page: Any, chatting: tuple[str, Store, HeldChat]) -> None:
    from axe_playwright_python.sync_playwright import Axe

    base, _, _ = chatting
    page.goto(base)
    ask(page, ANSWERED)
    page.locator("#answer button.cite").first.click()
    page.locator("#rankflow g.column[data-stage='fusion'] g.node").first.click()
    expect(page.locator("#document mark.cited")).to_be_visible()
    expect(page.locator("#inspector h3")).not_to_be_empty()
    context = {"include": [["#document"], [".tabbed"], [".chat-pane"]]}
    found = Axe().run(page, context=context).response["violations"]
    assert [(v["id"], [n["target"] for n in v["nodes"]]) for v in found] == []


def test_a_new_question_clears_what_the_last_one_opened(
    page: Any, chatting: tuple[str, Store, HeldChat]
) -> None:
    base, _, chat = chatting
    page.goto(base)
    ask(page, ANSWERED)
    page.locator("#answer button.verdict").first.click()
    expect(page.locator("#given .evidence-card")).to_be_visible()
    page.locator("#answer button.cite").first.click()
    expect(page.locator("#document mark.cited")).to_be_visible()
    page.locator("#rankflow g.column[data-stage='fusion'] g.node").first.click()
    expect(page.locator("#inspector h3")).not_to_be_empty()
    # the next question, held after its first words: nothing of the last one is shown while it runs
    chat.hold("Gravel bikes run lower [1].", " Lower still on sand [1].")
    page.fill("#question", FOLLOW_UP)
    page.click("#ask")
    expect(page.locator("#answer")).to_contain_text("Gravel bikes run lower")
    assert page.get_attribute("#chat", "data-state") == "streaming"
    expect(page.locator("#document")).to_be_hidden()
    expect(page.locator("#document mark")).to_have_count(0)
    expect(page.locator("#inspector h3")).to_have_count(0)
    expect(page.locator("#inspector .empty")).to_be_visible()
    expect(page.locator("#given .evidence-card")).to_have_count(0)
    chat.release()
    page.wait_for_selector("#chat[data-state='done']")
    expect(page.locator("#document")).to_be_hidden()


# A model asked to rewrite a follow-up that answers instead: one paragraph, kilobytes long.
PROPOSAL = " ".join(
    f"Gravel bikes run lower pressures than road bikes, point {i} of the answer." for i in range(30)
)


def test_a_refused_rewrite_is_one_line_with_its_proposal_behind_a_disclosure(
    page: Any, chatting: tuple[str, Store, HeldChat]
) -> None:
    base, _, chat = chatting
    page.goto(base)
    ask(page, ANSWERED)
    chat.enqueue(PROPOSAL)  # the follow-up's first call: its rewrite
    ask(page, FOLLOW_UP)
    query = next(e["data"] for e in trace_of_latest(page, base)["events"] if e["event"] == "query")
    rewrite = query["steps"]["rewrite"]
    assert rewrite["accepted"] is False and rewrite["proposed"] == PROPOSAL
    searched = page.locator(".turn:last-child .searched")
    folded = searched.locator("details.rewrite.refused")
    expect(folded).to_have_count(1)
    summary = folded.locator("summary")
    said = summary.inner_text()
    assert said.startswith("Rewrite refused: ")
    # the reason's first clause, as the server gave it (less its leading "the rewrite is")
    assert rewrite["reason"].split(";")[0].endswith(said.removeprefix("Rewrite refused: ")), said
    lines = folded.evaluate(
        "d => d.getBoundingClientRect().height"
        " / parseFloat(getComputedStyle(d.querySelector('summary')).lineHeight)"
    )
    assert lines < 1.5, lines
    expect(folded.locator("q")).to_be_hidden()
    assert len(searched.inner_text()) < 200
    # opened by keyboard: what the model proposed, to the character, and the whole reason
    summary.focus()
    page.keyboard.press("Enter")
    expect(folded.locator("q")).to_have_text(PROPOSAL)
    expect(folded.locator(".reason")).to_contain_text(rewrite["reason"])


def held_answer(part: int) -> str:
    """A part of a long answer (taller than the chat), ending in a word that says which part it is."""
    sentences = " ".join(
        f"Check the pads and the rotor before descent {i} of part {part} [1]." for i in range(40)
    )
    return f"{sentences} End-of-part-{part}."


# Where the newest text is: the streaming answer's bottom against the bottom of what can be seen of the
# chat (its own box where it scrolls, else the window), and how far the chat or the page is scrolled.
SIGHT = """() => {
  const chat = document.querySelector('#chat');
  const answer = document.querySelector('#answer').getBoundingClientRect();
  const own = chat.scrollHeight > chat.clientHeight + 1;
  const box = own ? chat.getBoundingClientRect() : {top: 0, bottom: window.innerHeight};
  const top = Math.max(0, box.top), bottom = Math.min(window.innerHeight, box.bottom);
  return {end: answer.bottom, top, bottom, tall: answer.height > bottom - top,
          scrolled: own ? chat.scrollTop : window.scrollY};
}"""

# Resolves once the chat and the page have held still for a few frames (a wheel scroll is animated).
SETTLED = """() => new Promise(resolve => {
  let last = null, still = 0;
  const tick = () => {
    const now = `${document.querySelector('#chat').scrollTop} ${window.scrollY}`;
    still = now === last ? still + 1 : 0;
    last = now;
    if (still >= 5) resolve(); else requestAnimationFrame(tick);
  };
  tick();
})"""


@pytest.mark.parametrize(("width", "height"), SIZES)
def test_the_chat_follows_a_streaming_answer_until_the_person_scrolls_up(
    browser: Any, chatting: tuple[str, Store, HeldChat], width: int, height: int
) -> None:
    base, _, chat = chatting
    with opened_page(browser, width=width, height=height) as page:
        page.goto(base)
        chat.hold(held_answer(1), held_answer(2), held_answer(3))
        page.fill("#question", ANSWERED)
        page.click("#ask")
        seen = []
        for part in (1, 2):
            if part > 1:
                chat.release()
            page.wait_for_function(
                "p => (document.querySelector('#answer') || {}).textContent?.includes(`End-of-part-${p}.`)",
                arg=part,
            )
            sight = page.evaluate(SIGHT)
            assert sight["tall"], sight  # taller than the chat: it had to scroll to show its end
            assert sight["top"] <= sight["end"] <= sight["bottom"] + 1, (part, sight)
            seen.append(sight["scrolled"])
        assert seen[1] > seen[0] > 0
        # the person scrolls up to read: the next parts leave them where they are
        chat_box = page.locator("#chat").bounding_box()
        page.mouse.move(chat_box["x"] + chat_box["width"] / 2, min(chat_box["y"] + 200, height - 50))
        page.mouse.wheel(0, -500)
        page.evaluate(SETTLED)
        up = page.evaluate(SIGHT)
        assert up["scrolled"] < seen[1], up
        chat.release()
        page.wait_for_selector("#chat[data-state='done']")
        page.evaluate(SETTLED)
        after = page.evaluate(SIGHT)
        assert after["scrolled"] == up["scrolled"], (up, after)
        assert after["end"] > after["bottom"], after


def test_escape_closes_the_open_panel_and_gives_focus_back(
    page: Any, chatting: tuple[str, Store, HeldChat]
) -> None:
    base, _, _ = chatting
    page.goto(base)
    ask(page, ANSWERED)
    cite = page.locator("#answer button.cite").first
    cite.click()
    expect(page.locator("#document")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#document")).to_be_hidden()
    expect(cite).to_be_focused()
    # from inside the panel too
    cite.press("Enter")
    expect(page.locator("#document mark.cited")).to_be_visible()
    page.focus("#document-close")
    page.keyboard.press("Escape")
    expect(page.locator("#document")).to_be_hidden()
    expect(cite).to_be_focused()
    # a sentence opens its evidence card and its document: Escape closes the document, then the card
    verdict = page.locator("#answer button.verdict").first
    verdict.press("Enter")
    expect(page.locator("#document mark.support")).to_be_visible()
    expect(page.locator("#given .evidence-card")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#document")).to_be_hidden()
    expect(page.locator("#given .evidence-card")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#given .evidence-card")).to_have_count(0)
    expect(verdict).to_be_focused()


FOCUSED = "() => { const e = document.activeElement; return e ? e.id || e.className || e.tagName : null; }"


def tab_until(page: Any, selector: str, *, limit: int) -> int:
    """Press Tab until ``selector`` has focus; how many presses it took (fails after ``limit``)."""
    for presses in range(1, limit + 1):
        page.keyboard.press("Tab")
        if page.evaluate("s => document.activeElement?.matches(s) ?? false", selector):
            return presses
    pytest.fail(f"{selector} not reached in {limit} Tab presses; focus on {page.evaluate(FOCUSED)}")


def test_from_load_to_a_cited_source_with_the_keyboard_alone(
    page: Any, chatting: tuple[str, Store, HeldChat]
) -> None:
    base, store, _ = chatting
    page.goto(base)
    page.wait_for_selector("#lab [data-knob]")
    # the question box straight after the header's own controls
    header = page.locator("header.top a[href], header.top button:visible").count()
    assert tab_until(page, "#question", limit=header + 1) == header + 1
    page.keyboard.type(ANSWERED)
    page.keyboard.press("Enter")
    page.wait_for_selector("#chat[data-state='done']")
    stops = page.locator("button:visible, a[href]:visible, summary:visible").count()
    tab_until(page, "#answer button.cite", limit=stops)
    number = int(page.evaluate("() => document.activeElement.dataset.cite"))
    page.keyboard.press("Enter")
    cited = next(c for c in trace_of_latest(page, base)["trace"]["citations"] if c["number"] == number)
    mark = page.locator("#document mark.cited")
    expect(mark).to_have_attribute("data-start", str(cited["start"]))
    expect(mark).to_have_attribute("data-end", str(cited["end"]))
    expect(mark).to_have_text(store.document_text(cited["doc_id"])[cited["start"] : cited["end"]])
    expect(page.locator("#document")).to_have_attribute("data-doc-id", cited["doc_id"])
    assert_in_view(page, "#document")
    expect(mark).to_be_in_viewport()
    page.keyboard.press("Escape")
    expect(page.locator("#document")).to_be_hidden()
    expect(page.locator(f"#answer button.cite[data-cite='{number}']").first).to_be_focused()
