// History: the stored traces, newest first. Opening one fetches the events the server rebuilt from
// it and hands them to the same code that draws a live answer, so a replay needs no model and can
// never drift from what a live question shows.

import { clear, el, getJSON } from "./dom.js";

export class History {
  /** onReplay(question, events) with the trace's [{event, data}] list. */
  constructor(root, { onReplay }) {
    this.root = root; // #history
    this.list = root.querySelector("#history-list");
    this.onReplay = onReplay;
    root.querySelector("#history-refresh").addEventListener("click", () => this.load());
  }

  async load() {
    let traces;
    try {
      ({ traces } = await getJSON("/api/traces"));
    } catch (error) {
      clear(this.list).append(el("li", { class: "error" }, `Could not load the history: ${error.message}`));
      return;
    }
    clear(this.list);
    if (!traces.length) this.list.append(el("li", { class: "empty" }, "No questions asked yet."));
    for (const trace of traces) {
      this.list.append(
        el(
          "li",
          { "data-trace-id": trace.id },
          el(
            "button",
            { type: "button", class: "link", onclick: () => this.open(trace.id) },
            trace.query,
          ),
          el("span", { class: "when" }, ` ${formatTime(trace.created_at)}`),
        ),
      );
    }
  }

  async open(traceId) {
    try {
      const { trace, events } = await getJSON(`/api/traces/${encodeURIComponent(traceId)}`);
      this.onReplay(trace.query, events);
    } catch (error) {
      this.onReplay(traceId, [{ event: "error", data: { message: error.message } }]);
    }
  }
}

function formatTime(iso) {
  const when = new Date(iso);
  return Number.isNaN(when.getTime()) ? iso : when.toLocaleString();
}
