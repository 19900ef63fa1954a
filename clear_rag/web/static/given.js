// "What the model was given": the selected turn's messages exactly as they were sent (system, then
// user), each body an element whose text is that message's content to the character. Inside the
// user message the packed passages are told apart by their headers, "[n] (doc id)", so the numbers
// the answer cites can be read where the model read them. Activating an answer sentence's verdict
// marks its supporting words inside its passage here (a <mark> over exactly document.text[start:end]
// of the evidence), and the passages' list says which of them looks like it answers the question.

import { clear, el, fmt, utf16Index } from "./dom.js";
import { evidenceSummary } from "./support.js";

export class GivenPanel {
  /**
   * root: #given; openDocument(evidence, label) opens the document at an evidence window; onClear()
   * when the marked evidence is put away.
   */
  constructor(root, { openDocument, onClear = () => {} }) {
    this.root = root;
    this.openDocument = openDocument;
    this.onClear = onClear;
    this.run = null;
    this.unsubscribe = null;
    this.focus = null; // {title, verdict, kind, evidence: [..], chosen}: what the panel marks
    this.opener = null; // what had focus when the evidence card opened: focus goes back there on close
  }

  /** Whether the evidence card is open. */
  get isMarked() {
    return this.focus !== null;
  }

  show(run) {
    if (this.unsubscribe) this.unsubscribe();
    this.run = run;
    this.focus = null;
    this.opener = null;
    this.unsubscribe = run.subscribe((kind) => {
      if (["context", "citations", "support", "done", "error"].includes(kind)) this.render();
    });
    this.render();
  }

  /**
   * Mark `chosen` (an Evidence) in its passage, under a card saying what it is evidence for.
   * title: what the evidence is for; evidence: every passage's best window, to choose among.
   */
  mark({ title, verdict = "", kind = "", evidence = [], chosen = null }) {
    const focused = document.activeElement;
    if (focused && focused !== document.body && !this.root.contains(focused)) this.opener = focused;
    this.focus = { title, verdict, kind, evidence, chosen };
    this.render();
    const mark = this.root.querySelector("mark.support");
    if (mark) reveal(mark, this.root.querySelector(".evidence-card"));
  }

  clear() {
    this.focus = null;
    this.render();
  }

  /** Put the marked evidence away (its close button, Escape) and give focus back to what opened it. */
  dismiss({ restoreFocus = true } = {}) {
    const opener = this.opener;
    const hadFocus = this.root.contains(document.activeElement);
    this.opener = null;
    this.clear();
    this.onClear();
    if ((restoreFocus || hadFocus) && opener && opener.isConnected) opener.focus();
  }

  render() {
    clear(this.root);
    const run = this.run;
    if (!run) {
      this.root.append(el("p", { class: "empty" }, "Ask a question to see the messages its model is given."));
      return;
    }
    const context = run.context;
    this.root.dataset.state = context ? "ready" : "waiting";
    if (!context) {
      this.root.append(el("p", { class: "empty" }, run.error ? `No context: ${run.error}` : "Waiting for the context…"));
      return;
    }
    const passages = context.passages || [];
    const retrieveOnly = run.generate === false;
    this.root.append(
      el(
        "p",
        { class: "given-summary" },
        retrieveOnly ? "Retrieve only: the model was not asked to answer. It would be given these messages. " : "",
        `${passages.length} passage${passages.length === 1 ? "" : "s"} packed, `,
        el("span", { "data-field": "tokens" }, `${count(context.tokens)} of ${count(context.budget_tokens)} tokens`),
        " of the context's budget.",
      ),
    );
    if (this.focus) this.root.append(this.card(this.focus));
    if (passages.length) this.root.append(this.passageList(run, passages));
    const messages = context.messages || [];
    if (!messages.length) {
      this.root.append(
        el("p", { class: "muted" }, "This trace did not keep the messages (stored before they were); the context as packed:"),
        el("pre", { class: "message-body" }, context.text || ""),
      );
      return;
    }
    const chosen = this.focus && this.focus.chosen;
    messages.forEach((message, i) => {
      const body =
        message.role === "user"
          ? userBody(message.content, passages, chosen)
          : el("pre", { class: "message-body" }, message.content);
      body.dataset.message = String(i);
      body.dataset.role = message.role;
      this.root.append(
        el(
          "section",
          { class: "message", "data-role": message.role, "aria-label": `${message.role} message` },
          el("h3", { class: "role" }, message.role === "system" ? "System message" : "User message"),
          body,
        ),
      );
    });
  }

  /** The evidence card: what is marked below, and every passage's best window to switch to. */
  card({ title, verdict, kind, evidence, chosen }) {
    const list = el("ul", { class: "evidence-list" });
    for (const e of evidence) {
      const pressed = chosen && e.number === chosen.number && e.start === chosen.start && e.end === chosen.end;
      list.append(
        el(
          "li",
          {},
          el(
            "button",
            {
              type: "button",
              class: ["evidence", e.supports && "supports"],
              "aria-pressed": String(Boolean(pressed)),
              "data-number": e.number,
              onclick: () => {
                this.mark({ title, verdict, kind, evidence, chosen: e });
                this.openDocument(e, `${title}: [${e.number}]`);
              },
            },
            evidenceSummary(e),
          ),
        ),
      );
    }
    const shown = chosen
      ? chosen.supports
        ? `Marked below: the words of [${chosen.number}] that support it.`
        : `Marked below: the closest words of [${chosen.number}], which do not support it.`
      : "No passage had a window close enough to score.";
    const close = el(
      "button",
      {
        type: "button",
        class: "link close",
        "aria-label": "close: put the marked evidence away",
        "aria-keyshortcuts": "Escape",
        onclick: () => this.dismiss(),
      },
      "close",
    );
    return el(
      "div",
      { class: "evidence-card", "data-kind": kind || "" },
      el("div", { class: "evidence-head" }, el("p", { class: "evidence-title" }, title), close),
      verdict ? el("p", { class: "evidence-verdict" }, verdict) : null,
      el("p", { class: "muted" }, shown),
      evidence.length ? list : null,
    );
  }

  /** Each passage as the model saw it numbered: its document and span, its tokens, whether the
   * answer cited it and whether it looks like it answers the question (the support check's view). */
  passageList(run, passages) {
    const cited = new Set((run.citations || []).map((c) => run.citationNumber(c)));
    const retrieval = (run.support || run.context.retrieval) ?? null;
    const answers = new Map(((retrieval && retrieval.answers) || []).map((e) => [e.number, e]));
    const list = el("ol", { class: "passage-list", "aria-label": "passages in the context" });
    for (const p of passages) {
      const e = answers.get(p.number);
      const looks = !retrieval
        ? ""
        : e
          ? e.supports
            ? `looks like it answers the question (p ${fmt(e.probability, 2)})`
            : `does not look like it answers (p ${fmt(e.probability, 2)})`
          : "not scored against the question";
      list.append(
        el(
          "li",
          { "data-number": p.number, class: [cited.has(p.number) && "cited", e && e.supports && "answers"] },
          el(
            "button",
            {
              type: "button",
              class: "passage-ref",
              title: e ? "mark its best window for the question" : "open it in its document",
              onclick: () => this.showPassage(p, e),
            },
            `[${p.number}]`,
          ),
          " ",
          el("span", { class: "doc" }, p.doc_id),
          el("span", { class: "muted" }, ` [${p.start}, ${p.end}) · ${count(p.token_count)} tokens`),
          cited.has(p.number) ? el("span", { class: "tag cited" }, "cited") : null,
          looks ? el("span", { class: ["looks", e && e.supports && "yes"] }, ` · ${looks}`) : null,
        ),
      );
    }
    const outside = ((retrieval && retrieval.outside) || []).filter((o) => o.supports);
    if (outside.length) {
      list.append(
        el(
          "li",
          { class: "outside" },
          "Not packed, but looks like it answers: ",
          outside.map((o, i) => [i ? "; " : "", `${o.chunk_id} (${o.found}, p ${fmt(o.probability, 2)})`]),
        ),
      );
    }
    return list;
  }

  showPassage(passage, evidence) {
    if (evidence) {
      const title = `Passage [${passage.number}] against the question`;
      this.mark({ title, evidence: [evidence], chosen: evidence });
      this.openDocument(evidence, title);
    } else {
      this.openDocument({ doc_id: passage.doc_id, start: passage.start, end: passage.end, number: passage.number }, `passage [${passage.number}]`);
    }
  }
}

/**
 * Scroll the panel that holds `target` (its nearest scrolling ancestor) just enough to show it below
 * `cover`, the evidence card that stays stuck to the panel's top; scrollIntoView would leave the
 * words under the card.
 */
function reveal(target, cover) {
  let box = target.parentElement;
  while (box && !(box.scrollHeight > box.clientHeight && /(auto|scroll)/.test(getComputedStyle(box).overflowY))) box = box.parentElement;
  if (!box) return;
  const view = box.getBoundingClientRect();
  const top = (cover ? cover.getBoundingClientRect().bottom : view.top) + 8;
  const bottom = view.bottom - 8;
  const at = target.getBoundingClientRect();
  if (at.top < top) box.scrollTop -= top - at.top;
  else if (at.bottom > bottom) box.scrollTop += Math.min(at.bottom - bottom, at.top - top);
  // and the panel itself on screen, where the page or the column around it scrolls
  target.scrollIntoView({ block: "nearest", behavior: "instant" });
}

function count(n) {
  return typeof n === "number" ? n.toLocaleString("en-US") : "?";
}

/**
 * The user message, its text unchanged, with each passage ("[n] (doc id)\n" then its text) in an
 * element of its own and `chosen`'s window marked in its passage. A passage not found where its
 * header says stays plain text: the message is always shown as it was sent.
 */
function userBody(content, passages, chosen) {
  const body = el("pre", { class: "message-body" });
  let offset = 0;
  for (const p of passages) {
    const head = `[${p.number}] (${p.doc_id})\n`;
    const at = content.indexOf(head, offset);
    if (at < 0 || typeof p.text !== "string" || !content.startsWith(p.text, at + head.length)) continue;
    body.append(
      content.slice(offset, at),
      el("span", { class: "passage-head", "data-number": p.number }, head),
      passageText(p, chosen && chosen.number === p.number && chosen.doc_id === p.doc_id ? chosen : null),
    );
    offset = at + head.length + p.text.length;
  }
  body.append(content.slice(offset));
  return body;
}

/** A passage's text; `e`'s window (document offsets, code points) marked where it lies inside it. */
function passageText(p, e) {
  const span = el("span", { class: "passage-text", "data-number": p.number, id: `given-passage-${p.number}` });
  const text = p.text;
  if (!e || e.start < p.start || e.end > p.end || e.end < e.start) {
    span.append(text);
    return span;
  }
  const a = utf16Index(text, e.start - p.start);
  const b = utf16Index(text, e.end - p.start);
  span.append(
    text.slice(0, a),
    el("mark", { class: ["support", e.supports ? "supports" : "closest"], "data-start": e.start, "data-end": e.end }, text.slice(a, b)),
    text.slice(b),
  );
  return span;
}
