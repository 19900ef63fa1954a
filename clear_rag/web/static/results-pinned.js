// Every other row read against the pinned one, and the questions behind one of its cells. A
// difference whose bootstrap interval holds 0 is marked as noise (greyed), so a move that may be
// chance does not look like one that is not.

import { clear, el, fmt } from "./dom.js";
import { questionWords } from "./results-questions.js";

/** "+0.167", "-0.200", "0.000": a difference with its sign, so a fall never reads as a rise. */
export function signed(value, digits = 3) {
  if (typeof value !== "number" || !Number.isFinite(value)) return String(value);
  const text = Math.abs(value).toFixed(digits);
  return value > 0 ? `+${text}` : value < 0 ? `-${text}` : text;
}

/**
 * A sign test's p as it is read: "p = 0.042", and "p < 0.001" below 0.001, where three places
 * printed "p 0.000", a probability of nothing. The one way the Results view prints a p.
 */
export function pValue(p) {
  if (typeof p !== "number" || !Number.isFinite(p)) return "p —";
  return p < 0.001 ? "p < 0.001" : `p = ${p.toFixed(3)}`;
}

/** True when the interval holds 0: the data cannot tell the move from no move. */
export function insideNoise(comparison) {
  return comparison.ci_low <= 0 && comparison.ci_high >= 0;
}

const show = (value) => (value === null || value === undefined ? "none" : typeof value === "object" ? JSON.stringify(value) : String(value));
const rankText = (rank) => (rank === null || rank === undefined ? "none" : `#${rank}`);

/** The settings that differ, as "key: pinned → other" lines. */
function configDiff(diff) {
  const keys = Object.keys(diff || {});
  if (!keys.length) return el("span", { class: "muted" }, "the same settings");
  return el(
    "ul",
    { class: "config-diff" },
    keys.map((key) =>
      el("li", { "data-key": key }, el("code", {}, key), ": ", el("span", { class: "was" }, show(diff[key][0])), " → ", el("span", { class: "now" }, show(diff[key][1]))),
    ),
  );
}

export class PinnedView {
  /** root: the pinned section; onCell(row, metric) when a difference is opened. */
  constructor(root, { onCell }) {
    this.root = root;
    this.onCell = onCell;
    this.name = root.querySelector("#pinned-name");
    this.table = root.querySelector("#pinned-table");
    this.note = root.querySelector("#pinned-note");
  }

  /** `read`: the pinned endpoint's answer; `metrics`: the file's metric names in order. */
  show(read, metrics) {
    this.name.textContent = read.pinned;
    this.root.dataset.pinned = read.pinned;
    clear(this.table);
    clear(this.note);
    if (!read.rows.length) {
      this.note.append("No other row to read against it.");
      return;
    }
    this.table.append(
      el("thead", {}, el("tr", {}, el("th", {}, "row"), el("th", {}, `settings that differ from ${read.pinned}`), metrics.map((m) => el("th", { class: "num" }, m)))),
      el("tbody", {}, read.rows.map((row) => this.row(row, metrics))),
    );
  }

  row(entry, metrics) {
    const cells = entry.skipped
      ? [el("td", { colspan: metrics.length, class: "muted" }, `skipped: ${entry.skipped}`)]
      : metrics.map((metric) => this.cell(entry.name, metric, entry.comparisons[metric]));
    return el("tr", { "data-row": entry.name }, el("th", { scope: "row" }, entry.name), el("td", {}, configDiff(entry.config_diff)), cells);
  }

  cell(row, metric, c) {
    if (!c) return el("td", { class: "num muted", "data-metric": metric }, "—");
    const noise = insideNoise(c);
    const title =
      `${metric}: ${row} minus the pinned row. 95% bootstrap interval [${fmt(c.ci_low, 4)}, ${fmt(c.ci_high, 4)}]` +
      `${noise ? " holds 0: inside noise" : ""}; sign test ${pValue(c.p_sign)}; ` +
      `${c.up} questions up, ${c.down} down, ${c.ties} tied. Click for the questions.`;
    return el(
      "td",
      { class: "num", "data-metric": metric },
      el(
        "button",
        {
          type: "button",
          class: ["diff", noise && "noise", !noise && (c.difference > 0 ? "up" : "down")],
          "data-row": row,
          "data-metric": metric,
          "data-noise": String(noise),
          title,
          onclick: () => this.onCell(row, metric),
        },
        el("span", { class: "difference", "data-field": "difference" }, signed(c.difference)),
        el("span", { class: "interval", "data-field": "interval" }, `[${signed(c.ci_low)}, ${signed(c.ci_high)}]`),
        el("span", { class: "p", "data-field": "p" }, `${pValue(c.p_sign)} · ${c.up}↑ ${c.down}↓`),
      ),
    );
  }
}

/** The questions that went up and down between two rows on one metric. */
export class MovesView {
  /**
   * root: the moves section; onTrace(pinned, row, question) when a question's trace diff is asked
   * for; words(id): the question's entry of the file's questions document, or undefined.
   */
  constructor(root, { onTrace, words = () => undefined }) {
    this.root = root;
    this.onTrace = onTrace;
    this.words = words;
    this.title = root.querySelector("#moves-title");
    this.body = root.querySelector("#moves-body");
  }

  hide() {
    this.root.hidden = true;
    clear(this.body);
  }

  loading(pinned, row, metric) {
    this.root.hidden = false;
    this.title.textContent = `The questions behind ${metric}: ${row} against ${pinned}`;
    clear(this.body).append(el("p", { class: "muted" }, "Loading…"));
  }

  failed(message) {
    clear(this.body).append(el("p", { class: "error" }, message));
  }

  show(found) {
    const { pinned, row, metric } = found;
    this.root.dataset.row = row;
    this.root.dataset.metric = metric;
    clear(this.body);
    this.body.append(el("p", {}, `${found.up} went up and ${found.down} went down; the questions whose ${metric} is the same in both rows are left out.`));
    if (!found.moves.length) {
      this.body.append(el("p", { class: "muted" }, "No question moved."));
      return;
    }
    // a suite that grades answers: each side's answer and the grader's verdict on it, and where the
    // support check read the answer, its line and sentence verdicts beside the grader's
    const graded = found.moves.some((m) => m.pinned.graded !== undefined || m.row.graded !== undefined);
    const answerCells = (side) =>
      graded
        ? [
            el(
              "td",
              { "data-field": "graded", "data-graded": side.graded || "" },
              el("span", { class: "grader" }, "graded: ", side.graded || "—"),
              el("div", { class: "answer muted" }, side.answer || ""),
              side.support ? checked(side.support) : null,
            ),
          ]
        : [];
    const head = el(
      "tr",
      {},
      el("th", {}, "question"),
      el("th", {}, "category"),
      el("th", { class: "num" }, "move"),
      by(metric, pinned, "num"),
      by(metric, row, "num"),
      by("first covering rank", pinned, "num"),
      by("first covering rank", row, "num"),
      by("lost?", pinned),
      by("lost?", row),
      ...(graded ? [by("answer", pinned), by("answer", row)] : []),
      el("th", {}, "trace"),
    );
    const rows = found.moves.map((m) =>
      el(
        "tr",
        { "data-question": m.id, "data-direction": m.direction, class: m.pinned.first_rank !== m.row.first_rank && "rank-moved" },
        el("th", { scope: "row", class: "question" }, el("span", { class: "qid" }, m.id), questionWords(this.words(m.id))),
        el("td", {}, m.category || ""),
        el("td", { class: ["num", m.direction] }, `${m.direction === "up" ? "↑" : "↓"} ${signed(m.difference)}`),
        el("td", { class: "num" }, fmt(m.pinned.value, 3)),
        el("td", { class: "num" }, fmt(m.row.value, 3)),
        el("td", { class: "num", "data-field": "rank-pinned" }, rankText(m.pinned.first_rank)),
        el("td", { class: "num", "data-field": "rank-row" }, rankText(m.row.first_rank)),
        el("td", { "data-field": "verdict-pinned", "data-verdict": m.pinned.verdict || "" }, m.pinned.verdict || "—"),
        el("td", { "data-field": "verdict-row", "data-verdict": m.row.verdict || "" }, m.row.verdict || "—"),
        ...answerCells(m.pinned),
        ...answerCells(m.row),
        el("td", {}, el("button", { type: "button", class: "link open-trace", onclick: () => this.onTrace(pinned, row, m) }, "trace diff")),
      ),
    );
    this.body.append(el("table", { class: "moves" }, el("thead", {}, head), el("tbody", {}, rows)));
  }
}

/**
 * A column head for one of the two rows: what it shows, then the row's name on a line of its own, cut
 * to the column's width (the whole name in its title and in the heading above the table). Row names
 * are long ("192 tokens, budget 1500, constrained"), and written in full they made every head of a
 * phone-width table several lines tall.
 */
function by(what, rowName, cls = null) {
  return el("th", { class: cls, title: `${what} ${rowName}` }, what, " ", el("span", { class: "row-name" }, rowName));
}

/** The support check's verdicts on one answer: its line and reason, then each sentence's verdict. */
function checked(support) {
  const sentences = (support.sentences || []).filter((s) => s.kind !== "no claim");
  return el(
    "div",
    { class: "check", "data-check-line": support.line || "" },
    el("span", { class: "check-line", "data-line": support.line || "" }, "support check: ", support.line || "—"),
    support.reason ? el("span", { class: "muted" }, ` (${support.reason})`) : null,
    sentences.length
      ? el(
          "ol",
          { class: "check-sentences" },
          sentences.map((s) => el("li", { "data-kind": s.kind }, el("q", {}, s.text), ` ${s.verdict}`)),
        )
      : null,
  );
}
