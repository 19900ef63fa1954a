// One chat turn: the question, what it was searched as, the answer as it streams, its citations.
// The answer is model output, so it is rebuilt from text nodes on every token; "[n]" markers become
// buttons. A marker split across two tokens ("[" then "1]") is simply re-read on the next token,
// which is why the whole answer is re-parsed rather than appended to.

import { clear, el } from "./dom.js";

const MARKER = /\[(\d{1,3})\]/g;

export class Turn {
  /** onCite(number, citation) when a citation is clicked; onPick() when the turn is chosen. */
  constructor(run, { question, replay = false, onCite, onPick }) {
    this.run = run;
    this.onCite = onCite;
    this.searched = el("div", { class: "searched" });
    this.answer = el("div", { class: "answer", "aria-live": "polite" });
    this.cited = el("ol", { class: "cited-list" });
    this.status = el("div", { class: "status" }, replay ? "replayed from history, no model" : "searching…");
    this.node = el(
      "article",
      { class: ["turn", replay && "replay"], onclick: (event) => event.target.closest("button") || onPick() },
      el("p", { class: "question" }, question),
      this.searched,
      this.answer,
      this.cited,
      this.status,
    );
    run.subscribe((kind, data) => this.update(kind, data));
  }

  update(kind, data) {
    switch (kind) {
      case "query":
        this.renderQuery(data);
        break;
      case "stage":
        this.status.textContent = `${this.run.stages.length} stage(s): ${this.run.stages.map((s) => s.name).join(", ")}`;
        break;
      case "token":
      case "citations":
        this.renderAnswer();
        break;
      case "done": {
        const t = data.timings || {};
        const parts = [
          t.first_stage_ms !== undefined && `first stage ${Math.round(t.first_stage_ms)} ms`,
          t.first_token_ms !== undefined && `first token ${Math.round(t.first_token_ms)} ms`,
          t.total_ms !== undefined && `total ${Math.round(t.total_ms)} ms`,
        ].filter(Boolean);
        this.status.textContent = parts.join(" · ") + (data.trace_id ? ` · trace ${data.trace_id}` : "");
        this.node.dataset.traceId = data.trace_id || "";
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
        this.searched.append(
          el("p", { class: "rewrite refused" }, "Rewrite refused: ", el("q", {}, rewrite.proposed), ` (${rewrite.reason || "no reason given"})`),
        );
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

  renderAnswer() {
    const text = this.run.answer;
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
    this.answer.replaceChildren(...pieces.filter((p) => p !== "").map((p) => (p instanceof Node ? p : document.createTextNode(p))));
    this.renderCited();
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
