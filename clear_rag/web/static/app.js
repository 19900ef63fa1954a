// The page's wiring: a question goes out with the Lab's overrides and its conversation id; each event
// that comes back is applied to a Run, and the views subscribed to that Run (the turn in the chat,
// the rank flow) redraw themselves. A replay from history feeds stored events through the very same
// path, which is why nothing here distinguishes live from replayed beyond a label.

import { el, getJSON } from "./dom.js";
import { DocumentViewer } from "./documents.js";
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
}

function focusRun(run, turn) {
  state.run = run;
  rankflow.show(run);
  inspector.reset();
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
  turn.node.scrollIntoView({ block: "end" });
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
  for (const { event, data } of events) run.apply(event, data);
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
  chat.replaceChildren(el("p", { class: "empty" }, "A new conversation: the next question is not a follow-up."));
});
$("#document-close").addEventListener("click", () => {
  $("#document").hidden = true;
});

setConversation(null);
inspector.reset();
given.render();
rankflow.redraw();
lab.load(configLoaded);
history.load();
