// One chat turn: the question, what it was searched as, the answer as it streams, its citations.
// The answer is model output, so it is rebuilt from text nodes on every token; "[n]" markers become
// buttons. A marker split across two tokens ("[" then "1]") is simply re-read on the next token,
// which is why the whole answer is re-parsed rather than appended to. Once the support check's
// verdicts arrive (the `support` event), the answer is drawn sentence by sentence from their spans,
// each followed by its verdict as a button that shows the sentence's support; above the answer sit
// the answer's line (supported, ignored, missed, refused) and, from the `context` event, a warning
// when retrieval looks weak.

import { clear, el, utf16Index } from "./dom.js";
import { caveat, lineTitle, shownEvidence, uncheckedReason, weakCaveat } from "./support.js";

const MARKER = /\[(\d{1,3})\]/g;

/**
 * A refused rewrite as one line, "Rewrite refused: " and the first clause of its reason, with what the
 * model proposed and the whole reason behind the disclosure. A small model asked to rephrase often
 * answers instead, and printing its 1.5 to 3 KB proposal in full, as the page once did, buried every
 * later turn under red text.
 */
function refusedRewrite({ proposed, reason }) {
  const why = reason || "no reason given";
  const short = why.split(";")[0].replace(/^the rewrite (is |was )?/, "");
  return el(
    "details",
    { class: "rewrite refused" },
    el("summary", { title: why }, `Rewrite refused: ${short}`),
    el("p", { class: "proposed" }, "The model proposed: ", el("q", {}, proposed)),
    el("p", { class: "reason" }, `Why: ${why}.`),
  );
}

export class Turn {
  /**
   * onCite(number, citation) when a citation is clicked; onPick() when the turn is chosen;
   * onSentence(sentence, evidence, index) when a sentence's verdict is activated; checkInfo, a
   * promise of /api/config's `support` (for the caveat, and why answers are not checked).
   */
  constructor(run, { question, replay = false, onCite, onPick, onSentence = () => {}, checkInfo = Promise.resolve(null) }) {
    this.run = run;
    this.replay = replay;
    this.onCite = onCite;
    this.onSentence = onSentence;
    this.checkInfo = checkInfo;
    this.active = null; // the index of the sentence whose support is shown
    this.searched = el("div", { class: "searched" });
    this.retrieval = el("div", { class: "retrieval-note" });
    this.line = el("div", { class: "line-box" });
    this.answer = el("div", { class: "answer", "aria-live": "polite" });
    this.by = el("p", { class: "answerer", hidden: true });
    this.cited = el("ol", { class: "cited-list" });
    this.status = el("div", { class: "status" }, replay ? "replayed from history, no model" : "searching…");
    this.node = el(
      "article",
      { class: ["turn", replay && "replay"], onclick: (event) => this.clicked(event, onPick) },
      el("p", { class: "question" }, question),
      this.searched,
      this.retrieval,
      this.line,
      this.answer,
      this.by,
      this.cited,
      this.status,
    );
    run.subscribe((kind, data) => this.update(kind, data));
  }

  /** A click on a sentence's words shows its support, as its verdict button does; elsewhere it picks the turn. */
  clicked(event, onPick) {
    if (event.target.closest("button")) return;
    const sentence = event.target.closest(".sentence[data-sentence]");
    if (sentence && window.getSelection().isCollapsed) this.activate(Number(sentence.dataset.sentence) - 1);
    else onPick();
  }

  update(kind, data) {
    switch (kind) {
      case "query":
        this.renderQuery(data);
        break;
      case "stage":
        this.status.textContent = `${this.run.stages.length} stage(s): ${this.run.stages.map((s) => s.name).join(", ")}`;
        break;
      case "context":
        this.renderRetrieval(data);
        break;
      case "token":
        // a replay's tokens land at once: drawn once, at the batch's end, not re-parsed per token
        if (!this.run.batching) this.renderAnswer();
        break;
      case "batch":
        if (this.run.answer) this.renderAnswer();
        break;
      case "citations":
        this.renderAnswer();
        this.renderAnswerer();
        break;
      case "support":
        this.renderAnswer();
        this.renderLine(data);
        break;
      case "done": {
        // The whole wait, from the request's arrival: opening the indexes and models, retrieval (to the
        // context), then the answer, back to back so the parts add up; each stage's own time is its column's.
        const t = data.timings || {};
        const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;
        let waited = "";
        if (t.total_ms !== undefined) {
          const opened = t.open_ms ?? 0;
          const retrieved = t.context_ms ?? t.total_ms;
          const parts = [`opening the indexes and models ${secs(opened)}`, `retrieval ${secs(retrieved - opened)}`];
          if (t.total_ms > retrieved) parts.push(`${t.first_token_ms !== undefined ? "answer" : "the rest"} ${secs(t.total_ms - retrieved)}`);
          waited = `waited ${secs(t.total_ms)} in all (${parts.join(", ")})`;
        }
        const firstToken = t.first_token_ms !== undefined && `first token after ${secs(t.first_token_ms)}`;
        const said = [data.replayed && "replayed from history, no model", waited, firstToken, data.trace_id && `trace ${data.trace_id}`];
        this.status.textContent = said.filter(Boolean).join(" · ");
        this.node.dataset.traceId = data.trace_id || "";
        if (!this.run.answer) this.renderNoAnswer();
        else if (!this.run.support) this.renderUnchecked();
        break;
      }
      case "error":
        this.status.textContent = "";
        this.status.append(el("span", { class: "error", role: "alert" }, data.message || "the question failed"));
        break;
      default:
    }
  }

  renderQuery(query) {
    clear(this.searched);
    const steps = query.steps || {};
    const rewrite = steps.rewrite;
    if (rewrite && typeof rewrite === "object") {
      if (rewrite.accepted === false && rewrite.proposed) {
        this.searched.append(refusedRewrite(rewrite));
      } else if (query.searched && query.searched !== query.question) {
        this.searched.append(el("p", { class: "rewrite" }, "Searched as: ", el("q", {}, query.searched)));
      }
    }
    const phrasings = (query.phrasings || []).filter((p) => p !== query.searched);
    if (phrasings.length) {
      this.searched.append(el("p", { class: "also" }, "Also searched as:"), el("ul", { class: "phrasings" }, phrasings.map((p) => el("li", {}, p))));
    }
    const expansion = steps.expansion;
    if (expansion && Array.isArray(expansion.dropped) && expansion.dropped.length) {
      this.searched.append(el("p", { class: "dropped" }, `Dropped ${expansion.dropped.length} phrasing(s): `, expansion.dropped.join(" · ")));
    }
    if (typeof steps.hyde === "string" && steps.hyde) {
      this.searched.append(el("details", { class: "hyde" }, el("summary", {}, "Also searched with a hypothetical answer"), el("p", {}, steps.hyde)));
    }
  }

  /** The weak-retrieval warning (known before the answer), or why retrieval is not checked. */
  renderRetrieval(context) {
    clear(this.retrieval);
    const retrieval = context.retrieval;
    if (!retrieval) {
      this.renderUnchecked();
      return;
    }
    if (retrieval.weak) {
      this.retrieval.append(
        el(
          "p",
          { class: "weak-warning", role: "status" },
          el("strong", {}, "Retrieval looks weak: "),
          retrieval.weak_reason || "no passage of the context looks like it answers the question",
        ),
      );
      const caveat = el("p", { class: "caveat weak-caveat" });
      this.retrieval.append(caveat);
      this.checkInfo.then((info) => {
        caveat.textContent = weakCaveat(info);
        caveat.hidden = !caveat.textContent;
      });
    }
  }

  /** "Not checked" and the server's reason (one note per turn, whichever event finds it first). */
  renderUnchecked() {
    if (this.retrieval.querySelector(".check-off")) return;
    const note = el("p", { class: "check-off" }, "Not checked: …");
    this.retrieval.append(note);
    this.checkInfo.then((info) => {
      note.textContent = `Not checked: ${uncheckedReason(info, { replay: this.replay })}.`;
    });
  }

  /** The answer's one line, its reason, and the caveat on how far the check itself is right. */
  renderLine(support) {
    clear(this.line);
    if (!support.line) return;
    const note = el("p", { class: "caveat" });
    this.line.append(
      el(
        "div",
        { class: "answer-line", "data-line": support.line },
        el("p", { class: "line-title" }, lineTitle(support.line)),
        support.reason ? el("p", { class: "line-reason" }, this.lineReason(support)) : null,
        note,
      ),
    );
    this.node.dataset.line = support.line;
    this.checkInfo.then((info) => {
      note.textContent = caveat(info);
      const row = info && info.measured && info.measured.row;
      if (row) note.title = `measured on row “${row}” of ${info.measured.file}`;
    });
  }

  /** The line's reason; "retrieval missed it" under the weak-retrieval warning would only repeat it. */
  lineReason(support) {
    const context = this.run.context || {};
    const retrieval = context.retrieval || {};
    if (retrieval.weak && support.reason === retrieval.weak_reason) return "Why: see “Retrieval looks weak” above.";
    return support.reason;
  }

  /** Which answerer wrote the answer: a quote of the sources or a model's own words are read differently. */
  renderAnswerer() {
    const by = this.run.answerer;
    this.by.hidden = !by;
    if (!by) return;
    const what =
      by.kind === "extractive"
        ? "Quoted by the extractive answerer: each sentence is a sentence of the source whose number follows it"
        : "Written by a generative model: its sentences are its own, read against the sources below";
    this.by.replaceChildren(`${what} (`, el("code", {}, by.name), ").");
    this.node.dataset.answerer = by.kind;
  }

  renderNoAnswer() {
    const what =
      this.run.generate === false
        ? "Retrieve only: the model was not asked to answer. What it would be given is under “What the model was given”."
        : "No answer in this trace: the model wrote nothing.";
    this.answer.replaceChildren(el("p", { class: "no-answer" }, what));
    this.node.dataset.answered = "false";
  }

  renderAnswer() {
    const text = this.run.answer;
    const sentences = (this.run.support && this.run.support.sentences) || [];
    const nodes = sentences.length ? this.sentenceNodes(text, sentences) : this.markers(text);
    this.answer.classList.toggle("checked", sentences.length > 0);
    this.answer.replaceChildren(...nodes);
    this.renderCited();
  }

  /** Text with its "[n]" markers as citation buttons, as nodes. */
  markers(text) {
    const pieces = [];
    let last = 0;
    for (const match of text.matchAll(MARKER)) {
      pieces.push(text.slice(last, match.index));
      const number = Number(match[1]);
      const citation = this.run.citation(number);
      pieces.push(
        el(
          "button",
          {
            type: "button",
            class: ["cite", !citation && "pending"],
            "data-cite": number,
            title: citation ? `${citation.doc_id} [${citation.start}, ${citation.end})` : "source not known yet",
            onclick: () => citation && this.onCite(number, citation),
          },
          `[${number}]`,
        ),
      );
      last = match.index + match[0].length;
    }
    pieces.push(text.slice(last));
    return pieces.filter((p) => p !== "").map((p) => (p instanceof Node ? p : document.createTextNode(p)));
  }

  /**
   * The answer as its sentences, one row each: the sentence, then its verdict. The spans count code
   * points of the answer as the server stored it (stripped), so they are shifted past any leading
   * whitespace the stream carried; a sentence whose span does not hold its text is left plain, and
   * text between sentences is kept unless it is only the whitespace the rows replace.
   */
  sentenceNodes(text, sentences) {
    const body = text.trim();
    const nodes = [];
    const between = (piece) => {
      if (piece.trim()) nodes.push(el("span", { class: "between" }, this.markers(piece)));
    };
    let last = 0;
    sentences.forEach((s, i) => {
      const a = utf16Index(body, s.start);
      const b = utf16Index(body, s.end);
      if (a < last || body.slice(a, b) !== s.text) return;
      between(body.slice(last, a));
      const kind = s.kind || "";
      nodes.push(
        el(
          "span",
          { class: "sentence-row" },
          el("span", { class: ["sentence", this.active === i && "active"], "data-sentence": i + 1, "data-kind": kind }, this.markers(s.text)),
          " ",
          kind === "no claim"
            ? el("span", { class: "verdict", "data-kind": kind }, s.verdict || "no claim to check")
            : el(
                "button",
                {
                  type: "button",
                  class: "verdict",
                  "data-kind": kind,
                  "data-sentence": i + 1,
                  "aria-pressed": String(this.active === i),
                  "aria-label": `sentence ${i + 1}: ${s.verdict}; show its support`,
                  onclick: () => this.activate(i),
                },
                s.verdict || kind,
              ),
        ),
      );
      last = b;
    });
    between(body.slice(last));
    return nodes;
  }

  /** Show sentence `index`'s support (in the context panel and the document), or nothing for no claim. */
  activate(index) {
    const sentence = ((this.run.support && this.run.support.sentences) || [])[index];
    if (!sentence || sentence.kind === "no claim") return;
    this.setActive(index);
    this.onSentence(sentence, shownEvidence(sentence), index);
  }

  /** Which sentence is shown as active (null: none), without redrawing the answer. */
  setActive(index) {
    this.active = index;
    for (const node of this.answer.querySelectorAll(".sentence")) node.classList.toggle("active", Number(node.dataset.sentence) - 1 === index);
    for (const node of this.answer.querySelectorAll("button.verdict")) node.setAttribute("aria-pressed", String(Number(node.dataset.sentence) - 1 === index));
  }

  /** The cited sources as a list too: citations attributed by word overlap have no "[n]" to click. */
  renderCited() {
    clear(this.cited);
    for (const citation of this.run.citations || []) {
      const number = this.run.citationNumber(citation);
      this.cited.append(
        el(
          "li",
          { value: number ?? undefined },
          el(
            "button",
            { type: "button", class: "link source", "data-cite-source": number ?? "", onclick: () => this.onCite(number, citation) },
            `${citation.doc_id} [${citation.start}, ${citation.end})`,
          ),
        ),
      );
    }
  }
}
