// The Results view: every result file and its rows; a pinned row (the file's baseline until another
// is pinned) that every other row is read against; the questions behind a cell; one question's
// trace under both rows. It needs nothing but the JSON a source gives (results-data.js): the app's
// Results API, or the files exported to the static site, as the page's <meta> says.

import { clear, el } from "./dom.js";
import { pageSource } from "./results-data.js";
import { lostBar, lostLegend } from "./results-lost.js";
import { MovesView, PinnedView } from "./results-pinned.js";
import { questionIndex, questionsNote } from "./results-questions.js";
import { TraceDiff } from "./results-trace.js";

const $ = (selector) => document.querySelector(selector);

/** A metric's figure to four places, as the README's tables print it ("1.0000", not "1"). */
const figure = (value) => (typeof value === "number" && Number.isFinite(value) ? value.toFixed(4) : "—");

export class ResultsView {
  constructor(source) {
    this.source = source;
    this.files = [];
    this.file = null; // the summary of the file shown (GET /api/results)
    this.document = null; // its whole document (GET /api/results/FILE)
    this.pinned = null;
    this.questions = new Map(); // the words of the shown file's questions, by id
    this.status = $("#results-status");
    this.pinnedView = new PinnedView($("#results-pinned"), { onCell: (row, metric) => this.openCell(row, metric) });
    this.moves = new MovesView($("#results-moves"), {
      onTrace: (pinned, row, q) => this.trace.open(this.file.file, pinned, row, q, this.context(pinned, row, q.id)),
      words: (id) => this.questions.get(id),
    });
    this.trace = new TraceDiff($("#trace-diff"), source);
    $("#category-metric").addEventListener("change", () => this.drawCategories());
    // #file=NAME names the file shown, so a link (or the back button) can open one
    window.addEventListener("hashchange", () => {
      const wanted = this.wantedFile();
      if (wanted && wanted !== this.file?.file) this.openFile(wanted);
    });
  }

  wantedFile() {
    const name = new URLSearchParams(location.hash.slice(1)).get("file");
    return this.files.some((f) => f.file === name) ? name : null;
  }

  async load() {
    try {
      this.files = await this.source.files();
    } catch (err) {
      return this.say(err.message, true);
    }
    this.drawFiles();
    if (!this.files.length) return this.say("No result files yet: run `clear-rag ablate SUITE --save-results`.");
    await this.openFile(this.wantedFile() || this.files[0].file);
  }

  say(message, error = false) {
    this.status.textContent = message;
    this.status.className = error ? "error" : "muted";
    this.status.hidden = !message;
  }

  drawFiles() {
    const nav = clear($("#results-files"));
    for (const f of this.files) {
      nav.append(
        el(
          "button",
          { type: "button", class: "file", "data-file": f.file, "aria-pressed": String(this.file?.file === f.file), onclick: () => this.openFile(f.file) },
          fileLabel(f),
          el("span", { class: "muted" }, ` ${f.rows.length} rows`),
        ),
      );
    }
  }

  /** What the trace diff shows beside the traces: the question's words, and what the file records of it under each row. */
  context(pinned, row, id) {
    const recorded = (name) => ((this.document.rows || []).find((r) => r.name === name)?.questions || []).find((q) => q.id === id) || null;
    return { suite: this.document.suite, words: this.questions.get(id), recorded: [recorded(pinned), recorded(row)] };
  }

  async openFile(name) {
    this.file = this.files.find((f) => f.file === name);
    this.drawFiles();
    this.moves.hide();
    this.trace.close();
    history.replaceState(null, "", `#file=${encodeURIComponent(name)}`);
    this.say(`Loading ${name}…`);
    // the words are a help, not a need: a file whose labels are not here still reads by ids
    const words = this.source.questions(name).catch((err) => ({ questions: [], unavailable: err.message }));
    try {
      const [loaded, answer] = await Promise.all([this.source.document(name), words]);
      if (this.file.file !== name) return; // another file was opened meanwhile
      this.document = loaded;
      this.questions = questionIndex(answer);
      $("#questions-note").textContent = questionsNote(answer);
    } catch (err) {
      return this.say(err.message, true);
    }
    this.say("");
    $("#results-view").dataset.file = name;
    this.drawSuite();
    this.drawCategories();
    await this.pin(this.document.baseline || this.file.rows[0]?.name);
  }

  metricNames() {
    return this.document.metric_names || [];
  }

  drawSuite() {
    const f = this.file;
    const doc = this.document;
    $("#suite-title").textContent = `${f.suite} (${f.file}.json)`;
    const golden = doc.golden && doc.golden.questions !== undefined ? ` · ${doc.golden.questions} questions` : "";
    $("#suite-meta").textContent = `run ${f.date || "at an unknown date"} · baseline ${f.baseline} · headline ${f.headline}${golden}`;
    const metrics = this.metricNames();
    const head = el(
      "tr",
      {},
      el("th", {}, "pin"),
      el("th", {}, "row"),
      metrics.map((m) => el("th", { class: ["num", m === f.headline && "headline"] }, m)),
      el("th", {}, "models"),
      el("th", {}, "date"),
      el("th", {}, "where the answer was lost"),
    );
    const rows = f.rows.map((r) =>
      el(
        "tr",
        { "data-row": r.name },
        el("td", {}, el("input", { type: "radio", name: "pin", value: r.name, "aria-label": `pin ${r.name}`, onchange: () => this.pin(r.name) })),
        el("th", { scope: "row" }, r.name, r.name === f.baseline ? el("span", { class: "muted" }, " baseline") : null),
        metrics.map((m) => el("td", { class: ["num", m === f.headline && "headline"], "data-metric": m }, figure(r.metrics[m]))),
        el("td", { class: "models" }, Object.entries(r.models).map(([k, v]) => el("div", {}, `${k}: `, el("code", {}, v)))),
        el("td", { class: "date" }, r.date || ""),
        el("td", { class: "lost" }, lostBar(r.lost)),
      ),
    );
    clear($("#results-rows")).append(el("thead", {}, head), el("tbody", {}, rows));
    const skipped = doc.skipped || [];
    // Spread: Node.append() given an array appended its text, "[object HTMLLIElement]", not the items.
    clear($("#results-skipped")).append(...skipped.map((s) => el("li", { "data-row": s.name }, `${s.name} was skipped: ${s.reason}`)));
    clear($("#lost-legend")).append(lostLegend());
  }

  /** Per category (with its number of questions), each row's figure on the chosen metric. */
  drawCategories() {
    const select = $("#category-metric");
    const metrics = this.metricNames();
    const chosen = metrics.includes(select.value) ? select.value : this.document.headline;
    select.replaceChildren(...metrics.map((m) => el("option", { value: m }, m)));
    select.value = chosen;
    const rows = this.document.rows || [];
    const count = new Map();
    for (const q of rows[0]?.questions || []) count.set(q.category, (count.get(q.category) || 0) + 1);
    const categories = [...new Set(rows.flatMap((r) => Object.keys(r.by_category || {})))].sort();
    const table = clear($("#categories-table"));
    if (!categories.length) return table.append(el("caption", { class: "muted" }, "No categories in this file."));
    table.append(
      el("thead", {}, el("tr", {}, el("th", {}, "row"), categories.map((c) => el("th", { class: "num" }, c, count.has(c) ? el("span", { class: "muted" }, ` (${count.get(c)})`) : null)))),
      el(
        "tbody",
        {},
        rows.map((r) =>
          el("tr", { "data-row": r.name }, el("th", { scope: "row" }, r.name), categories.map((c) => el("td", { class: "num", "data-category": c }, figure((r.by_category?.[c] || {})[chosen])))),
        ),
      ),
    );
  }

  async pin(row) {
    if (!row) return;
    this.pinned = row;
    for (const input of document.querySelectorAll("#results-rows input[name='pin']")) input.checked = input.value === row;
    for (const tr of document.querySelectorAll("#results-rows tbody tr")) tr.classList.toggle("pinned", tr.dataset.row === row);
    this.moves.hide();
    this.trace.close();
    const file = this.file.file;
    try {
      const read = await this.source.pinned(file, row);
      if (this.pinned !== row || this.file.file !== file) return; // another pin came first
      this.pinnedView.show(read, this.metricNames());
    } catch (err) {
      this.say(err.message, true);
    }
  }

  async openCell(row, metric) {
    const file = this.file.file;
    const pinned = this.pinned;
    this.trace.close();
    this.moves.loading(pinned, row, metric);
    try {
      const found = await this.source.moves(file, pinned, row, metric);
      if (this.pinned !== pinned || this.file.file !== file) return;
      this.moves.show(found);
      $("#results-moves").scrollIntoView({ block: "start" });
    } catch (err) {
      this.moves.failed(err.message);
    }
  }
}

/**
 * A file's name on its button: its own name, which no other file has (two files of the suite "tech",
 * tech.json and baseline-fake.json, were both labelled "tech"), with the suite beside it when the
 * suite is named otherwise.
 */
export function fileLabel(f) {
  return f.suite && f.suite !== f.file ? [f.file, el("span", { class: "muted suite" }, ` (suite ${f.suite})`)] : f.file;
}

/** The static site has no chat page: the first link of the views goes back to the site instead. */
function linkViews(source) {
  if (!source.static) return;
  const [chat, results] = document.querySelectorAll("header.top nav.views a");
  chat.textContent = "Site";
  chat.setAttribute("href", "../");
  results.setAttribute("href", "results.html");
}

document.getElementById("results-unserved")?.remove(); // served: the scripts run
const source = pageSource();
linkViews(source);
new ResultsView(source).load();
