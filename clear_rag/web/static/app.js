// The page's wiring: a question goes out with the Lab's overrides and its conversation id; each event
// that comes back is applied to a Run, and the views subscribed to that Run (the turn in the chat,
// the rank flow) redraw themselves. A replay from history feeds stored events through the very same
// path, which is why nothing here distinguishes live from replayed beyond a label. A new question
// clears what the last one opened (its document, the candidate inspected, the evidence marked), the
// panels it opens are brought into view, Escape closes them, and the chat follows the streaming answer.

import { el, getJSON } from "./dom.js";
import { bringIntoView, DocumentViewer } from "./documents.js";
import { GivenPanel } from "./given.js";
import { History } from "./history.js";
import { Inspector } from "./inspector.js";
import { Lab } from "./lab.js";
import { RankFlow } from "./rankflow.js";
import { Run } from "./run.js";
import { postEvents } from "./sse.js";
import { Tabs } from "./tabs.js";
import { Turn } from "./turn.js";

const $ = (selector) => document.querySelector(selector);

const MARGIN = 8; // px kept below the followed text

/** Whether `box` scrolls its content itself (the chat on a wide screen; on a narrow one the page does). */
function scrolls(box) {
  return box.scrollHeight > box.clientHeight + 1 && /(auto|scroll)/.test(getComputedStyle(box).overflowY);
}

/**
 * The chat follows the turn that is streaming: after each of its events the turn's end is scrolled into
 * view, in the chat's own box on a wide screen and the page on a narrow one. A scroll this did not make
 * (the person's wheel, keys, touch or scroll bar) that leaves the end out of sight stops it, until they
 * scroll back down to the end; the next question starts it again.
 */
class Follow {
  constructor(box) {
    this.box = box; // #chat
    this.node = null; // the turn followed
    this.on = false;
    this.ours = new Map(); // scroll box -> the scrollTop this set it to last
    box.addEventListener("scroll", () => this.scrolled(box), { passive: true });
    window.addEventListener("scroll", () => this.scrolled(document.scrollingElement), { passive: true });
  }

  start(node) {
    this.node = node;
    this.on = true;
    this.keep();
  }

  stop() {
    this.node = null;
    this.on = false;
  }

  /** What can be seen of the chat, top and bottom in the window: its own box where it scrolls. */
  sight() {
    const view = { top: 0, bottom: window.innerHeight };
    if (scrolls(this.box)) {
      const r = this.box.getBoundingClientRect();
      view.top = Math.max(view.top, r.top);
      view.bottom = Math.min(view.bottom, r.bottom);
    }
    return view;
  }

  /** Scroll the chat (then the page, for what the chat cannot) so the followed turn's end is in sight. */
  keep() {
    if (!this.on || !this.node) return;
    let over = this.node.getBoundingClientRect().bottom + MARGIN - this.sight().bottom;
    for (const box of [this.box, document.scrollingElement]) {
      if (over <= 0) break;
      if (box === this.box && !scrolls(box)) continue;
      const before = box.scrollTop;
      box.scrollTop = before + over;
      this.ours.set(box, box.scrollTop);
      over -= box.scrollTop - before;
    }
  }

  scrolled(box) {
    if (!this.node) return;
    if (Math.abs((this.ours.get(box) ?? -1) - box.scrollTop) < 1) return; // the scroll keep() made
    const end = this.node.getBoundingClientRect().bottom;
    const { top, bottom } = this.sight();
    this.on = end >= top && end <= bottom + MARGIN;
  }
}

const state = {
  conversation: null,
  run: null, // the run the rank flow and inspector show
  streaming: null, // AbortController of the question in flight
  activeTurn: null, // the turn whose sentence's support is shown
};

const chat = $("#chat");
const form = $("#ask-form");
const question = $("#question");
const askButton = $("#ask");
const retrieveButton = $("#retrieve");
const stopButton = $("#stop");
const conversationLabel = $("#conversation");

const viewer = new DocumentViewer($("#document"));
const inspector = new Inspector($("#inspector"), {
  openDocument: (docId, start, end, chunkId) => viewer.open(docId, start, end, { kind: "chunk", label: chunkId }),
});
const rankflow = new RankFlow($("#rankflow"), { onSelect: selectCandidate, markCited: true });
const tabs = new Tabs($(".tabs[role='tablist']"));
const given = new GivenPanel($("#given"), {
  openDocument: openEvidence,
  onClear: () => {
    state.activeTurn?.setActive(null);
    state.activeTurn = null;
  },
});
const lab = new Lab($("#lab"));
const follow = new Follow(chat);
// /api/config once: the Lab's knobs, and the support check's model and measured agreement, which
// every turn's caveat quotes
const configLoaded = getJSON("/api/config");
const checkInfo = configLoaded.then((config) => config.support || null).catch(() => null);
const history = new History($("#history"), { onReplay: replay });

function selectCandidate(chunkId) {
  if (!state.run) return;
  rankflow.select(chunkId);
  tabs.select("tab-inspector");
  inspector.show(state.run, chunkId);
  bringIntoView($(".tabbed"));
}

/** Show `run` in the rank flow and the panels, nothing of the run before left open. */
function focusRun(run, turn) {
  state.run = run;
  rankflow.show(run);
  inspector.reset();
  viewer.close();
  given.show(run);
  state.activeTurn?.setActive(null);
  state.activeTurn = null;
  for (const node of chat.querySelectorAll(".turn.current")) node.classList.remove("current");
  turn.node.classList.add("current");
}

/** A new turn in the chat for `run`; its answer takes the stable id #answer (the latest answer). */
function addTurn(run, text, { replay = false } = {}) {
  const turn = new Turn(run, {
    question: text,
    replay,
    onCite: (number, citation) =>
      viewer.open(citation.doc_id, citation.start, citation.end, { kind: "cited", label: number ? `cited as [${number}]` : "cited" }),
    onPick: () => state.run !== run && focusRun(run, turn),
    onSentence: (sentence, evidence, index) => showSupport(run, turn, sentence, evidence, index),
    checkInfo,
  });
  $("#answer")?.removeAttribute("id");
  turn.answer.id = "answer";
  chat.querySelector(".empty")?.remove();
  chat.append(turn.node);
  focusRun(run, turn);
  follow.start(turn.node);
  run.subscribe((kind) => {
    // a replay's events land at once: one look at the layout after them all, not one per event
    if (run.batching || follow.node !== turn.node) return;
    follow.keep();
    if (kind === "done" || kind === "error" || kind === "batch") follow.stop();
  });
  return turn;
}

/** A sentence's support: its window marked in "What the model was given" and in its document. */
function showSupport(run, turn, sentence, evidence, index) {
  if (state.run !== run) focusRun(run, turn);
  if (state.activeTurn && state.activeTurn !== turn) state.activeTurn.setActive(null);
  state.activeTurn = turn;
  turn.setActive(index);
  tabs.select("tab-given");
  given.mark({
    title: `Sentence ${index + 1}: “${sentence.text}”`,
    verdict: sentence.verdict,
    kind: sentence.kind,
    evidence: (sentence.evidence || []).filter((e) => e.number > 0),
    chosen: evidence,
  });
  if (evidence) openEvidence(evidence, `sentence ${index + 1}, [${evidence.number}]`);
}

function openEvidence(evidence, label) {
  const kind = evidence.logit === undefined ? "chunk" : "support";
  viewer.open(evidence.doc_id, evidence.start, evidence.end, { kind, label });
}

/** Ask `text`; with generate false (Retrieve only) the server stops after the context, asking no model. */
async function ask(text, { generate = true } = {}) {
  const run = new Run({ generate });
  addTurn(run, text);
  const controller = new AbortController();
  state.streaming = controller;
  setBusy(true);
  run.subscribe((kind, data) => {
    if (kind === "query" && data.conversation) setConversation(data.conversation);
    if (kind === "done" && data.conversation) setConversation(data.conversation);
  });
  await postEvents(
    "/api/chat",
    { question: text, conversation: state.conversation, config: lab.overrides(), generate },
    (kind, data) => run.apply(kind, data),
    { signal: controller.signal },
  );
  if (controller.signal.aborted && !run.done && !run.error) run.apply("error", { message: "stopped: the server was told to ask the model for no more tokens" });
  state.streaming = null;
  setBusy(false, run.error ? "error" : "done");
  history.load();
}

/** A stored trace's events, drawn by the live path; replays start no conversation. */
function replay(text, events) {
  const run = new Run();
  addTurn(run, text, { replay: true });
  run.applyAll(events);
}

function setBusy(busy, outcome = "") {
  askButton.disabled = busy;
  retrieveButton.disabled = busy;
  stopButton.hidden = !busy;
  chat.dataset.state = busy ? "streaming" : outcome;
}

function setConversation(id) {
  state.conversation = id;
  conversationLabel.textContent = id ? `conversation ${id}` : "new conversation";
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  const text = question.value.trim();
  if (!text || state.streaming) return;
  question.value = "";
  ask(text);
});
question.addEventListener("keydown", (event) => {
  // Enter asks, Shift+Enter makes a new line: the convention of chat boxes.
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});
retrieveButton.addEventListener("click", () => {
  // the question box's own check (required), as the form's submit does it
  if (!form.reportValidity()) return;
  const text = question.value.trim();
  if (!text || state.streaming) return;
  question.value = "";
  ask(text, { generate: false });
});
stopButton.addEventListener("click", () => state.streaming?.abort());
$("#new-conversation").addEventListener("click", () => {
  setConversation(null);
  viewer.close();
  chat.replaceChildren(el("p", { class: "empty" }, "A new conversation: the next question is not a follow-up."));
});
$("#document-close").addEventListener("click", () => viewer.close({ restoreFocus: true }));
// Escape closes the panel focus is in, else the one opened last (the document opens after the evidence
// card it goes with), and gives focus back to what opened it; typing in a box, focus stays there.
document.addEventListener("keydown", (event) => {
  if (event.key !== "Escape" || event.defaultPrevented) return;
  const focused = document.activeElement;
  const restoreFocus = !(focused && focused.matches("textarea, input, select"));
  if (given.isMarked && (given.root.contains(focused) || !viewer.isOpen)) given.dismiss({ restoreFocus });
  else if (viewer.isOpen) viewer.close({ restoreFocus });
  else return;
  event.preventDefault();
});

setConversation(null);
inspector.reset();
given.render();
rankflow.redraw();
lab.load(configLoaded);
history.load();
